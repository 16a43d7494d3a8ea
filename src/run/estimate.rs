//! What a count would cost before it runs ([`RunRequest::estimate`]): the plan made and its
//! tables built as the count would, then subtasks drawn at random from the request's (a
//! seeded order, so the same command draws the same ones) counted on the CPU threads and
//! timed, and their mean carried over the rest.

use super::hooks::Hooks;
use super::open::open;
use super::request::RunRequest;
use crate::device::DeviceChoice;
use crate::engine::Engine;
use crate::error::Error;
use crate::kernel::Kernel;
use crate::parallel::{lock, Workers, NO_SPARE};
use crate::random::SplitMix;
use crate::shard::Shard;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What [`RunRequest::estimate`] measured, and the CPU time it makes of it for the request's
/// subtasks (a whole run's, or a shard's): the sample's mean carried over every subtask, with
/// a 90 % interval from the spread of the sample (Student's t; a few long subtasks widen it).
/// Nothing counted is kept or added up: an estimate never gives a total.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Board side.
    pub n: usize,
    /// The engine the count would run.
    pub engine: Engine,
    /// The CPU kernel (for the quadrant engine, its pair loops).
    pub kernel: Kernel,
    /// CPU threads that counted the sample, one subtask each at a time.
    pub threads: usize,
    /// The slice of the plan estimated.
    pub shard: Shard,
    /// Subtasks of that slice.
    pub subtasks: usize,
    /// Those of them that count something: the rest (about half the quadrant engine's
    /// units of an even board) are counted under other ids, take no time and are not drawn.
    pub counting: usize,
    /// The order the sample was drawn in.
    pub seed: u64,
    /// Subtasks counted and timed: the first of the seeded order, all finished.
    pub units_sampled: usize,
    /// Seconds of one thread the sampled subtasks took, in all.
    pub sample_core_seconds: f64,
    /// The longest of them, in seconds.
    pub longest_unit_seconds: f64,
    /// Wall-clock seconds the sampling took.
    pub sample_seconds: f64,
    /// The CPU time of every subtask of the slice, in core-hours (sizing apart).
    pub core_hours: f64,
    /// The low end of the 90 % interval (never below what the sample itself took).
    pub core_hours_low: f64,
    /// The high end of the 90 % interval.
    pub core_hours_high: f64,
    /// What each process of a run pays once before its first subtask (the plan, and the
    /// quadrant engine's tables), in core-seconds: its wall time times `threads`.
    pub sizing_core_seconds: f64,
    /// The process's peak resident memory (Linux; 0 where unknown).
    pub peak_bytes: u64,
    /// What a user may want to know of the plan or the sample (a subtask that took longer
    /// than the time asked for), a line each.
    pub notes: Vec<String>,
}

/// Subtasks timed at the least: two give a spread.
const LEAST_SAMPLE: usize = 2;

impl RunRequest {
    /// Estimates what this request would cost on this machine's CPU: its plan and tables are
    /// made as [`run`](crate::run()) makes them (timed: the sizing), then subtasks drawn in an
    /// order `seed` fixes are counted on the request's threads, each timed, until `seconds`
    /// have passed (a subtask under way is finished; two at the least). The checkpoint and
    /// device options are not used: the estimate is of the CPU. [`Error::Interrupted`] when
    /// `hooks.cancel` is set first.
    ///
    /// ```
    /// use nqueens::{CountOptions, RunRequest};
    /// let request = RunRequest::new(10, CountOptions::default(), None);
    /// let estimate = request.estimate(0.0, 7, &nqueens::Hooks::default()).unwrap();
    /// assert!(estimate.units_sampled >= 2 && estimate.units_sampled <= estimate.subtasks);
    /// assert!(estimate.core_hours_low <= estimate.core_hours);
    /// assert!(estimate.core_hours <= estimate.core_hours_high);
    /// ```
    pub fn estimate(&self, seconds: f64, seed: u64, hooks: &Hooks<'_>) -> Result<Estimate, Error> {
        let never = AtomicBool::new(false);
        let stop = hooks.cancel.unwrap_or(&never);
        let started = Instant::now();
        let on_cpu = RunRequest {
            options: crate::options::CountOptions {
                device: DeviceChoice::Cpu,
                gpus: None,
                ..self.options.clone()
            },
            checkpoint: None,
            ..self.clone()
        };
        let (plan, resolved) = on_cpu.resolve(None, stop)?;
        if let Some(planned) = hooks.on_plan {
            resolved.notes.iter().for_each(|note| planned(note));
        }
        let subtasks = self.shard.len(plan.len());
        let executor = open(&plan, &resolved, subtasks, stop)?;
        let workers = Workers::new(resolved.threads, resolved.pin)?.at_most(subtasks);
        let sizing = started.elapsed();
        let budget = Duration::from_secs_f64(seconds.clamp(0.0, 1e9));
        // on even boards about half the units count nothing (their row sets are counted under
        // other ids) and take no time: the sample is of the others, carried over as many
        let counts = |id: usize| plan.quadrant_layout().is_none_or(|l| !l.counts_nothing(id));
        let counting = counting_subtasks(self.shard, plan.len(), &counts, &workers)?;
        let draw = Mutex::new(Draw::new(self.shard, subtasks, seed));
        let sampling = Instant::now();
        let failure = std::sync::OnceLock::new();
        let timed = workers.run(|_| {
            let mut times = Vec::new();
            while !stop.load(Ordering::Relaxed) && failure.get().is_none() {
                let Some(id) = lock(&draw).next_within(budget, sampling, counts) else {
                    break;
                };
                let began = Instant::now();
                match crate::subtask::count(
                    &plan,
                    id,
                    self.options.unique,
                    resolved.kernels,
                    (stop, &NO_SPARE),
                ) {
                    Ok(Some(_)) => times.push(began.elapsed().as_secs_f64()),
                    Ok(None) => break,
                    Err(e) => {
                        let _ = failure.set(e);
                    }
                }
            }
            times
        })?;
        if let Some(e) = failure.into_inner() {
            return Err(e);
        }
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
        let times: Vec<f64> = timed.into_iter().flatten().collect();
        let mut notes = resolved.notes;
        let longest = times.iter().copied().fold(0.0, f64::max);
        if longest > seconds.max(1.0) {
            notes.push(format!(
                "one subtask took {longest:.0} s, longer than the {seconds} s asked for: {} subtasks were timed, each to its end",
                times.len()
            ));
        }
        let [core_hours, low, high] = extrapolate(&times, counting).map(|s| s / 3600.0);
        Ok(Estimate {
            n: plan.n(),
            engine: plan.engine(),
            kernel: executor.facts().kernel,
            threads: workers.count(),
            shard: self.shard,
            subtasks,
            counting,
            seed,
            units_sampled: times.len(),
            sample_core_seconds: times.iter().sum(),
            longest_unit_seconds: longest,
            sample_seconds: sampling.elapsed().as_secs_f64(),
            core_hours,
            core_hours_low: low,
            core_hours_high: high,
            sizing_core_seconds: sizing.as_secs_f64() * workers.count() as f64,
            peak_bytes: super::collect::peak_memory().unwrap_or(0),
            notes,
        })
    }
}

/// The subtasks of a shard in a random order fixed by a seed, without repeats: any prefix is
/// a uniform sample of them.
struct Draw {
    shard: Shard,
    len: usize,
    rng: SplitMix,
    /// Positions drawn, and subtasks given to be counted.
    taken: usize,
    given: usize,
    /// Positions not drawn yet, shuffled as they are drawn (small shards).
    left: Vec<usize>,
    /// Positions drawn (large shards, drawn by rejection).
    seen: HashSet<usize>,
}

/// Shards up to this many subtasks are shuffled in full; larger ones drawn by rejection.
const SHUFFLED_MAX: usize = 1 << 20;

impl Draw {
    fn new(shard: Shard, len: usize, seed: u64) -> Draw {
        Draw {
            shard,
            len,
            rng: SplitMix(seed),
            taken: 0,
            given: 0,
            left: if len <= SHUFFLED_MAX {
                (0..len).collect()
            } else {
                Vec::new()
            },
            seen: HashSet::new(),
        }
    }

    /// The next subtask id that `counts`, unless all were drawn, or `budget` has passed
    /// since `since` and the least sample was drawn.
    fn next_within(
        &mut self,
        budget: Duration,
        since: Instant,
        counts: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if self.given >= LEAST_SAMPLE && since.elapsed() >= budget {
            return None;
        }
        while let Some(id) = self.next() {
            if counts(id) {
                self.given += 1;
                return Some(id);
            }
        }
        None
    }

    /// The next subtask id in the order, unless all were drawn.
    fn next(&mut self) -> Option<usize> {
        if self.taken >= self.len {
            return None;
        }
        let remaining = (self.len - self.taken) as u64;
        let position = if self.len <= SHUFFLED_MAX {
            // a partial Fisher-Yates shuffle, one step a draw
            let j = self.taken + (self.rng.next() % remaining) as usize;
            self.left.swap(self.taken, j);
            self.left[self.taken]
        } else {
            loop {
                let k = (self.rng.next() % self.len as u64) as usize;
                if self.seen.insert(k) {
                    break k;
                }
            }
        };
        self.taken += 1;
        Some(self.shard.global(position))
    }
}

/// How many of `shard`'s subtasks among `plan_len` `count`, worked out on `workers`.
fn counting_subtasks(
    shard: Shard,
    plan_len: usize,
    counts: &(impl Fn(usize) -> bool + Sync),
    workers: &Workers,
) -> Result<usize, Error> {
    let len = shard.len(plan_len);
    let each = len.div_ceil(workers.count());
    let counted = workers.run(|w| {
        let positions = (w * each).min(len)..((w + 1) * each).min(len);
        positions.filter(|&k| counts(shard.global(k))).count()
    })?;
    Ok(counted.iter().sum())
}

/// The seconds all `len` subtasks would take from the sample `times` (a uniform draw
/// without repeats), and the 90 % interval around it: the mean's standard error with the
/// finite population corrected, times Student's t. Never below what the sample took.
fn extrapolate(times: &[f64], len: usize) -> [f64; 3] {
    let k = times.len();
    let sum: f64 = times.iter().sum();
    if k == 0 || k >= len {
        return [sum; 3];
    }
    let mean = sum / k as f64;
    let variance = times.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (k - 1).max(1) as f64;
    let unsampled = 1.0 - k as f64 / len as f64;
    let spread = len as f64 * (variance / k as f64 * unsampled).sqrt();
    let whole = mean * len as f64;
    let t = t_90(k - 1);
    [
        whole,
        (whole - t * spread).max(sum),
        (whole + t * spread).max(sum),
    ]
}

/// Student's t quantile for a two-sided 90 % interval with `df` degrees of freedom (the
/// table to 30; past it 1.645 + 1.56 / df, within 0.002 of the true values).
fn t_90(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        6.314, 2.920, 2.353, 2.132, 2.015, 1.943, 1.895, 1.860, 1.833, 1.812, 1.796, 1.782, 1.771,
        1.761, 1.753, 1.746, 1.740, 1.734, 1.729, 1.725, 1.721, 1.717, 1.714, 1.711, 1.708, 1.706,
        1.703, 1.701, 1.699, 1.697,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => TABLE[df - 1],
        _ => 1.645 + 1.56 / df as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: usize) -> bool {
        true
    }

    #[test]
    fn a_draw_takes_every_subtask_of_its_shard_once() {
        for (len, shard) in [
            (50, Shard::new(3, 7).unwrap()),
            (SHUFFLED_MAX + 5, Shard::WHOLE),
        ] {
            let plan_len = shard.index + len * shard.count - (shard.count - 1);
            assert_eq!(shard.len(plan_len), len);
            let mut draw = Draw::new(shard, len, 11);
            let take = len.min(5000);
            let ids: Vec<usize> = (0..take)
                .map(|_| {
                    draw.next_within(Duration::MAX, Instant::now(), all)
                        .unwrap()
                })
                .collect();
            let distinct: HashSet<usize> = ids.iter().copied().collect();
            assert_eq!(distinct.len(), take);
            assert!(ids
                .iter()
                .all(|&id| id < plan_len && id % shard.count == shard.index));
            if take == len {
                assert_eq!(draw.next_within(Duration::MAX, Instant::now(), all), None);
            }
        }
    }

    #[test]
    fn the_same_seed_draws_the_same_subtasks_and_another_seed_others() {
        let draw = |seed| {
            let mut d = Draw::new(Shard::WHOLE, 1000, seed);
            (0..20)
                .map(|_| d.next_within(Duration::MAX, Instant::now(), all).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(5), draw(5));
        assert_ne!(draw(5), draw(6));
    }

    #[test]
    fn past_its_time_a_draw_still_gives_the_least_sample() {
        let mut draw = Draw::new(Shard::WHOLE, 100, 1);
        let long_ago = Instant::now() - Duration::from_secs(5);
        let budget = Duration::from_secs(1);
        assert!(draw.next_within(budget, long_ago, all).is_some());
        assert!(draw.next_within(budget, long_ago, all).is_some());
        assert_eq!(draw.next_within(budget, long_ago, all), None);
    }

    #[test]
    fn subtasks_that_count_nothing_are_never_drawn() {
        let odd = |id: usize| id % 2 == 1;
        let mut draw = Draw::new(Shard::WHOLE, 101, 3);
        let ids: Vec<usize> =
            std::iter::from_fn(|| draw.next_within(Duration::MAX, Instant::now(), odd)).collect();
        assert_eq!(ids.len(), 50);
        assert!(ids.iter().all(|&id| odd(id)));
        let workers = Workers::new(3, false).unwrap();
        let shard = Shard::new(1, 4).unwrap();
        let want = shard.ids(1001).filter(|&id| odd(id)).count();
        assert_eq!(
            counting_subtasks(shard, 1001, &odd, &workers).unwrap(),
            want
        );
    }

    #[test]
    fn the_interval_holds_the_mean_and_widens_with_a_long_subtask() {
        let even = [1.0; 10];
        assert_eq!(extrapolate(&even, 1000), [1000.0; 3]);
        let mut tailed = even;
        tailed[9] = 50.0;
        let [whole, low, high] = extrapolate(&tailed, 1000);
        assert!((whole - 5900.0).abs() < 1e-9);
        assert!(low < whole && whole < high);
        assert!(high > whole + 1.833 * 1000.0 * 15.0 / 10f64.sqrt() * 0.99);
        // all of them timed: nothing is left to guess
        assert_eq!(extrapolate(&tailed, 10), [tailed.iter().sum::<f64>(); 3]);
        // never below what the sample took
        assert!(extrapolate(&[0.0, 100.0], 3)[1] >= 100.0);
    }

    #[test]
    fn student_t_falls_toward_the_normal_quantile() {
        assert!(t_90(0).is_infinite());
        assert!((t_90(1) - 6.314).abs() < 1e-9);
        assert!((t_90(40) - 1.684).abs() < 0.002);
        assert!((t_90(120) - 1.658).abs() < 0.002);
        assert!((1..200).all(|df| t_90(df) >= t_90(df + 1)));
    }
}
