//! `--device auto`'s race between the CPU and the GPUs: when a count races, how far each side
//! counts, who wins, and the record of it ([`DeviceRace`]). The race itself runs in
//! the run pipeline (`src/run/race.rs`).
//!
//! A count that `auto` could take either way (totals of a whole board, where the quadrant
//! engine runs, on a machine with a GPU) counts stride shard 0/[`CALIBRATION_SHARDS`] of the
//! quadrant plan on the CPU threads, then shard 1 of the same plan with its pairs on the GPUs
//! (the CPU threads sharing them), and counts the rest on the faster. Stride shards are
//! alike by construction, so the two times compare whole runs; both shards are part of the
//! count (the loser's as far as it got: the GPUs are stopped once they have taken as long as
//! the CPU did), so the race costs only the time the loser's shard took over the winner's.

use crate::device::DeviceChoice;
use crate::error::Error;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Each side of a race counts one stride shard of this many of the plan: 1 % of the run.
/// Every plan a race can meet (the quadrant engine's, from N = 19 where the race is expected
/// to pay) holds at least 92,378 units (N = 20), so a calibration shard holds at least 923.
pub(crate) const CALIBRATION_SHARDS: usize = 100;

/// Counts expected to take less than this many seconds on the CPU skip the race and count
/// on the CPU: their calibration shards would be a few dispatches, too short to time, and a
/// GPU cannot gain more than the time itself. `NQUEENS_RACE_MIN_SECONDS` sets another.
pub(crate) const RACE_MIN_SECONDS: f64 = 30.0;

/// Seconds one core takes to count N = 14.. 28 with the quadrant engine, measured on an AMD
/// EPYC Zen 5 (AVX-512): whole runs to N = 21, one thread to N = 18, two from N = 19; from
/// N = 22 extrapolated from shards (docs/benchmarks.md; N = 19..24 remeasured after
/// the sieve's run lookups, the rest before them; N = 28 twelve times N = 27's). Another CPU
/// is within a factor of about two: enough to tell a count of seconds from one of minutes.
const QUADRANT_CORE_SECONDS: [f64; 15] = [
    0.004, 0.015, 0.076, 0.66, 1.9, 19.0, 66.0, 605.0, 5_300.0, 44_500.0, 9.7e5, 1.3e7, 5.6e8,
    3.1e9, 3.7e10,
];

/// The quadrant engine's expected seconds for an `n`×`n` board on `threads` cores (`None`
/// outside N = 14..28).
pub(crate) fn expected_cpu_seconds(n: usize, threads: usize) -> Option<f64> {
    let core_seconds = QUADRANT_CORE_SECONDS.get(n.checked_sub(14)?)?;
    Some(core_seconds / threads.max(1) as f64)
}

/// What a race measured and chose: in a count's JSON and `--stats`, and in its checkpoint
/// (a resumed run counts where the race chose, and never races again).
///
/// ```
/// use nqueens::{DeviceChoice, DeviceRace};
/// let race = DeviceRace { shards: 100, cpu_s: 0.5, gpu_s: 0.25, gpu_finished: true, chose: DeviceChoice::Gpu, forced: false };
/// assert_eq!(race.describe(), "device auto: 1/100 of the count took 0.500 s on the CPU and 0.250 s on the GPU: counted on the GPU");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceRace {
    /// Each side counted one stride shard of this many of the plan (the CPU 0, the GPUs 1).
    pub shards: usize,
    /// Seconds the CPU took for its shard of the quadrant plan.
    pub cpu_s: f64,
    /// Seconds the GPUs took for their shard, or, when they did not finish
    /// ([`DeviceRace::gpu_finished`] false), the time after which they were stopped.
    pub gpu_s: f64,
    /// Whether the GPUs finished their shard (they are stopped once slower than the CPU).
    pub gpu_finished: bool,
    /// The side that counts the rest.
    pub chose: DeviceChoice,
    /// Chosen by [`RaceOptions::winner`] (`NQUEENS_RACE_WINNER`), not by the times.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
}

impl DeviceRace {
    /// The race in one line, for a note on stderr.
    pub fn describe(&self) -> String {
        // a side with nothing to count in its shard takes no measurable time
        let seconds = |s: f64| {
            if s < 0.0005 {
                "under a millisecond".to_string()
            } else {
                format!("{s:.3} s")
            }
        };
        let gpu = if self.gpu_finished {
            seconds(self.gpu_s)
        } else {
            format!("more than {} (stopped)", seconds(self.gpu_s))
        };
        let chose = if self.chose == DeviceChoice::Gpu {
            "counted on the GPU"
        } else {
            "counted on the CPU"
        };
        let forced = if self.forced {
            " (as NQUEENS_RACE_WINNER says)"
        } else {
            ""
        };
        format!(
            "device auto: 1/{} of the count took {} on the CPU and {gpu} on the GPU: {chose}{forced}",
            self.shards,
            seconds(self.cpu_s)
        )
    }

    /// The decision from the two times: the GPUs win only by finishing first; `forced`
    /// ([`RaceOptions::forced`]: `Cpu` or `Gpu`) overrides it.
    pub(crate) fn decide(
        shards: usize,
        cpu: Duration,
        gpu: Duration,
        gpu_finished: bool,
        forced: Option<DeviceChoice>,
    ) -> DeviceRace {
        let faster = if gpu_finished && gpu < cpu {
            DeviceChoice::Gpu
        } else {
            DeviceChoice::Cpu
        };
        DeviceRace {
            shards,
            cpu_s: cpu.as_secs_f64(),
            gpu_s: gpu.as_secs_f64(),
            gpu_finished,
            chose: forced.unwrap_or(faster),
            forced: forced.is_some(),
        }
    }
}

/// How `--device auto` races, beyond the defaults: tests and measurements set these (the
/// command line from the environment, [`RaceOptions::from_vars`]).
///
/// ```
/// use nqueens::{count, CountOptions, DeviceChoice, RaceOptions};
/// // a CPU-emulated adapter may race, every count races, and the CPU wins whatever the times
/// let race = RaceOptions { software_gpu: true, min_seconds: 0.0, winner: Some(DeviceChoice::Cpu) };
/// let c = count(14, &CountOptions { race, ..CountOptions::default() }).unwrap();
/// assert_eq!((c.total, c.engine.name()), (365596, "quadrant"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RaceOptions {
    /// Whether a CPU-emulated adapter (lavapipe) may race where the machine has no real GPU.
    pub software_gpu: bool,
    /// Counts the CPU is expected to finish sooner than this many seconds do not race
    /// (30 s unless set).
    pub min_seconds: f64,
    /// The side that counts the rest whatever the times (both still count their shard):
    /// `Cpu`, or `Gpu` (`GpuOnly` is taken as `Gpu`, `Auto` as none).
    pub winner: Option<DeviceChoice>,
}

impl Default for RaceOptions {
    fn default() -> RaceOptions {
        RaceOptions {
            software_gpu: false,
            min_seconds: RACE_MIN_SECONDS,
            winner: None,
        }
    }
}

impl RaceOptions {
    /// From environment variables, as `var` reads them: `NQUEENS_RACE_SOFTWARE_GPU=1`,
    /// `NQUEENS_RACE_MIN_SECONDS=S`, `NQUEENS_RACE_WINNER=cpu|gpu`. A value they do not
    /// take is an error naming it.
    ///
    /// ```
    /// use nqueens::RaceOptions;
    /// let vars = |name: &str| (name == "NQUEENS_RACE_MIN_SECONDS").then(|| "0".to_string());
    /// assert_eq!(RaceOptions::from_vars(vars).unwrap().min_seconds, 0.0);
    /// assert!(RaceOptions::from_vars(|_| Some("x".into())).is_err());
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<RaceOptions, Error> {
        let var = |name: &str| crate::environment::set(&var, name);
        let bad = |name: &str, value: &str, allowed: &str| {
            Error::BadEnv(format!(
                "{name}={value}: not a value it takes; allowed: {allowed}"
            ))
        };
        let software_gpu = match var("NQUEENS_RACE_SOFTWARE_GPU").as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(other) => return Err(bad("NQUEENS_RACE_SOFTWARE_GPU", other, "0, 1")),
        };
        let min_seconds = match var("NQUEENS_RACE_MIN_SECONDS") {
            None => RACE_MIN_SECONDS,
            Some(v) => match decimal(&v) {
                Some(s) => s,
                None => {
                    let allowed = "seconds as a decimal number, 0 or more (like 30 or 0.5)";
                    return Err(bad("NQUEENS_RACE_MIN_SECONDS", &v, allowed));
                }
            },
        };
        let winner = match var("NQUEENS_RACE_WINNER").as_deref() {
            None => None,
            Some("cpu") => Some(DeviceChoice::Cpu),
            Some("gpu") => Some(DeviceChoice::Gpu),
            Some(other) => return Err(bad("NQUEENS_RACE_WINNER", other, "cpu, gpu")),
        };
        Ok(RaceOptions {
            software_gpu,
            min_seconds,
            winner,
        })
    }

    /// The winner forced, as `Cpu` or `Gpu`.
    pub(crate) fn forced(&self) -> Option<DeviceChoice> {
        match self.winner? {
            DeviceChoice::Auto => None,
            DeviceChoice::Cpu => Some(DeviceChoice::Cpu),
            DeviceChoice::Gpu | DeviceChoice::GpuOnly => Some(DeviceChoice::Gpu),
        }
    }

    /// Whether a count of an `n`×`n` board on `threads` cores is long enough to race.
    pub(crate) fn worth_racing(&self, n: usize, threads: usize) -> bool {
        expected_cpu_seconds(n, threads).is_some_and(|s| s >= self.min_seconds)
    }
}

/// A plain decimal number, 0 or more (`30`, `0.5`, `.5`): digits and a point as `f64`
/// reads them, no sign, exponent or name (`1e3`, `inf`).
fn decimal(text: &str) -> Option<f64> {
    let t = text.trim();
    let plain = t.chars().all(|c| c.is_ascii_digit() || c == '.');
    plain.then(|| t.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_minutes_race_and_counts_of_seconds_do_not() {
        let settings = RaceOptions::default();
        assert!(!settings.worth_racing(19, 16) && !settings.worth_racing(20, 16));
        assert!(settings.worth_racing(21, 16) && settings.worth_racing(20, 2));
        assert!(!settings.worth_racing(13, 1) && !settings.worth_racing(29, 1));
        assert!(settings.worth_racing(28, 4096));
        let always = RaceOptions::from_vars(|name| {
            (name == "NQUEENS_RACE_MIN_SECONDS").then(|| "0".to_string())
        })
        .unwrap();
        assert!(always.worth_racing(14, 4096));
    }

    #[test]
    fn the_gpu_wins_only_by_finishing_first_unless_forced() {
        let (fast, slow) = (Duration::from_millis(10), Duration::from_millis(20));
        let chose =
            |cpu, gpu, finished, forced| DeviceRace::decide(100, cpu, gpu, finished, forced).chose;
        assert_eq!(chose(slow, fast, true, None), DeviceChoice::Gpu);
        assert_eq!(chose(fast, slow, true, None), DeviceChoice::Cpu);
        assert_eq!(chose(slow, fast, false, None), DeviceChoice::Cpu);
        assert_eq!(
            chose(slow, fast, true, Some(DeviceChoice::Cpu)),
            DeviceChoice::Cpu
        );
        assert!(DeviceRace::decide(100, fast, slow, true, Some(DeviceChoice::Gpu)).forced);
    }

    /// A side with nothing to count in its shard took no measurable time, and says so.
    #[test]
    fn a_race_of_no_measurable_time_says_so() {
        let race = DeviceRace {
            shards: 100,
            cpu_s: 0.012,
            gpu_s: 0.0,
            gpu_finished: true,
            chose: DeviceChoice::Gpu,
            forced: true,
        };
        assert_eq!(race.describe(), "device auto: 1/100 of the count took 0.012 s on the CPU and under a millisecond on the GPU: counted on the GPU (as NQUEENS_RACE_WINNER says)");
    }

    #[test]
    fn bad_race_variables_are_named() {
        for (name, value) in [
            ("NQUEENS_RACE_WINNER", "tpu"),
            ("NQUEENS_RACE_MIN_SECONDS", "-1"),
            ("NQUEENS_RACE_MIN_SECONDS", "1e3"),
            ("NQUEENS_RACE_MIN_SECONDS", "inf"),
            ("NQUEENS_RACE_MIN_SECONDS", "1.2.3"),
            ("NQUEENS_RACE_SOFTWARE_GPU", "yes"),
        ] {
            let e = RaceOptions::from_vars(|n| (n == name).then(|| value.to_string()))
                .unwrap_err()
                .to_string();
            assert!(e.contains(name) && e.contains(value), "{e}");
        }
    }

    /// Each variable set to nothing is unset, as every variable the program reads.
    #[test]
    fn race_variables_set_to_nothing_are_unset() {
        let unset = RaceOptions::from_vars(|_| None).unwrap();
        let empty = RaceOptions::from_vars(|_| Some(String::new())).unwrap();
        assert_eq!(
            (empty.software_gpu, empty.min_seconds, empty.winner),
            (unset.software_gpu, unset.min_seconds, unset.winner)
        );
        for (value, seconds) in [("30", 30.0), ("0.5", 0.5), (" 7 ", 7.0), (".5", 0.5)] {
            let vars = |_: &str| Some(value.to_string());
            let got = RaceOptions::from_vars(|n| vars(n).filter(|_| n.ends_with("SECONDS")));
            assert_eq!(got.unwrap().min_seconds, seconds, "{value}");
        }
    }
}
