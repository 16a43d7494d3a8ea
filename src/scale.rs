//! Core-scaling measurement of `count N` (its exporters are in [`crate::export::scale`]).

use crate::error::Error;
use crate::options::CountOptions;
use crate::run::{run, Hooks, RunSettings};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};

/// Facts about the machine a measurement ran on.
///
/// ```
/// let m = nqueens::scale::Machine::current();
/// assert!(m.logical_cpus >= 1 && m.physical_cores >= 1 && !m.os.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs.
    pub logical_cpus: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// CPU model name, when the OS tells it.
    pub cpu_model: Option<String>,
    /// Kernel release, when the OS tells it.
    pub kernel: Option<String>,
    /// Operating system and architecture.
    pub os: String,
}

impl Machine {
    /// Reads the facts of this machine.
    pub fn current() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string());
        Machine {
            logical_cpus: num_cpus::get(),
            physical_cores: num_cpus::get_physical(),
            cpu_model,
            kernel,
            os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }
}

/// One thread count's timings.
///
/// ```
/// let rows = nqueens::scale::rows(&[(1, vec![3.0]), (4, vec![1.0])]);
/// assert_eq!((rows[1].threads, rows[1].speedup, rows[1].efficiency), (4, 3.0, 0.75));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Worker threads.
    pub threads: usize,
    /// Timed runs.
    pub runs: usize,
    /// Median wall-clock seconds.
    pub median_s: f64,
    /// Fastest run.
    pub min_s: f64,
    /// Slowest run.
    pub max_s: f64,
    /// 1-thread median / this median.
    pub speedup: f64,
    /// Speedup / threads.
    pub efficiency: f64,
}

/// A whole measurement.
///
/// ```
/// use nqueens::{scale, CountOptions};
/// let never = std::sync::atomic::AtomicBool::new(false);
/// let report = scale::measure(8, &CountOptions::default(), &[1, 2], 1, &never, |_, _, _| {}).unwrap();
/// assert_eq!((report.total.as_str(), report.rows.len(), report.complete), ("92", 2, true));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleReport {
    /// Board side.
    pub n: usize,
    /// The count every run agreed on.
    pub total: String,
    /// Engine that ran.
    pub engine: crate::engine::Engine,
    /// Kernel that ran.
    pub kernel: crate::kernel::Kernel,
    /// Where the search ran: `cpu`, or the GPU adapter and its backend.
    pub device: String,
    /// Subtasks per run.
    pub subtasks: usize,
    /// Whether worker threads were pinned to cores.
    pub pinned: bool,
    /// Program version.
    pub version: String,
    /// Where it ran.
    pub machine: Machine,
    /// One row per thread count.
    pub rows: Vec<ScaleRow>,
    /// Whether every run asked for was measured (false: stopped, the rows hold the runs
    /// measured before the stop).
    #[serde(default = "complete_by_default")]
    pub complete: bool,
    /// Thread counts asked for that could not run as asked (the process's memory limits held
    /// the count to fewer threads), a line each saying why: they have no row, and the report
    /// is not `complete`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

fn complete_by_default() -> bool {
    true
}

/// The default thread list: 1, 2, 4, ... and all logical CPUs.
///
/// ```
/// assert_eq!(nqueens::scale::default_threads(6), vec![1, 2, 4, 6]);
/// assert_eq!(nqueens::scale::default_threads(1), vec![1]);
/// ```
pub fn default_threads(cpus: usize) -> Vec<usize> {
    let mut list: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < cpus)
        .collect();
    list.push(cpus.max(1));
    list
}

/// Summarises timings (seconds per run, per thread count) into rows.
///
/// ```
/// let rows = nqueens::scale::rows(&[(1, vec![4.0, 3.0, 5.0]), (2, vec![2.0, 2.5, 1.5])]);
/// assert_eq!(rows[1].median_s, 2.0);
/// assert_eq!(rows[1].speedup, 2.0);
/// assert_eq!(rows[1].efficiency, 1.0);
/// ```
pub fn rows(samples: &[(usize, Vec<f64>)]) -> Vec<ScaleRow> {
    let medians: Vec<f64> = samples.iter().map(|(_, t)| median(t)).collect();
    let base = samples
        .iter()
        .position(|(t, _)| *t == 1)
        .map_or(medians.first().copied().unwrap_or(0.0), |i| medians[i]);
    samples
        .iter()
        .zip(&medians)
        .map(|((threads, times), &med)| {
            let speedup = if med > 0.0 { base / med } else { 0.0 };
            ScaleRow {
                threads: *threads,
                runs: times.len(),
                median_s: med,
                min_s: times.iter().copied().fold(f64::INFINITY, f64::min),
                max_s: times.iter().copied().fold(0.0, f64::max),
                speedup,
                efficiency: speedup / *threads as f64,
            }
        })
        .collect()
}

fn median(times: &[f64]) -> f64 {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    match t.len() {
        0 => 0.0,
        len if len % 2 == 1 => t[len / 2],
        len => (t[len / 2 - 1] + t[len / 2]) / 2.0,
    }
}

/// The thread counts a measurement runs: ascending, each once, and always 1 (the baseline
/// every speedup is measured against). The flag says whether 1 was added.
///
/// ```
/// assert_eq!(nqueens::scale::thread_list(&[4, 2, 2]), (vec![1, 2, 4], true));
/// assert_eq!(nqueens::scale::thread_list(&[1, 1, 2]), (vec![1, 2], false));
/// ```
pub fn thread_list(asked: &[usize]) -> (Vec<usize>, bool) {
    let mut list = asked.to_vec();
    let added = !list.contains(&1);
    list.push(1);
    list.sort_unstable();
    list.dedup();
    (list, added)
}

/// Runs `count n` `repeat` times for each thread count of [`thread_list`]`(threads)`, after
/// one untimed warm-up run, in rounds (each thread count once per round), and checks that
/// every run agrees.
/// `on_run(threads, run, seconds)` is called after each timed run (for progress on stderr).
/// Setting `stop` ends the measurement within about a millisecond: the report then holds the
/// runs measured so far and is not `complete` ([`Error::Interrupted`] when none was).
///
/// ```
/// use nqueens::{scale, CountOptions};
/// let never = std::sync::atomic::AtomicBool::new(false);
/// let mut runs = 0;
/// let report = scale::measure(7, &CountOptions::default(), &[2], 2, &never, |_, _, _| runs += 1).unwrap();
/// // a 1-thread baseline is added: 2 thread counts, 2 timed runs each
/// assert_eq!((runs, report.rows[0].threads, report.total.as_str()), (4, 1, "40"));
/// ```
pub fn measure(
    n: usize,
    opts: &CountOptions,
    threads: &[usize],
    repeat: usize,
    stop: &AtomicBool,
    mut on_run: impl FnMut(usize, usize, f64),
) -> Result<ScaleReport, Error> {
    for &t in threads {
        crate::parallel::check_threads(t)?;
    }
    if repeat == 0 {
        return Err(Error::ZeroRepeat);
    }
    let (threads, _) = thread_list(threads);
    // warm-up: caches, page faults and CPU clocks settle before anything is timed
    let warm = CountOptions {
        threads: threads.last().copied(),
        ..opts.clone()
    };
    let hooks = Hooks {
        cancel: Some(stop),
        ..Hooks::default()
    };
    let first = run(&RunSettings::new(n, warm, None), &hooks)?.counts;
    // round by round, every thread count once a round: a machine that drifts (other
    // tenants, clocks) slows all thread counts alike instead of one block of runs
    let mut samples: Vec<(usize, Vec<f64>)> = threads.iter().map(|&t| (t, Vec::new())).collect();
    let mut complete = true;
    let mut refused = Vec::new();
    'rounds: for round in 0..repeat {
        for (t, times) in &mut samples {
            if round > 0 && times.is_empty() {
                continue; // refused in the first round
            }
            let run_opts = CountOptions {
                threads: Some(*t),
                ..opts.clone()
            };
            let c = match run(&RunSettings::new(n, run_opts, None), &hooks) {
                Ok(outcome) if !stop.load(Ordering::Relaxed) => outcome.counts,
                Ok(_) | Err(Error::Interrupted) => {
                    complete = false;
                    break 'rounds;
                }
                Err(e) => return Err(e),
            };
            if (first.total, first.unique) != (c.total, c.unique) {
                return Err(Error::Mismatch(format!(
                    "{t} threads counted {} where {} threads counted {}",
                    c.total, first.threads, first.total
                )));
            }
            if c.threads != *t {
                // a row must say the threads that ran: this one would not
                let why = c
                    .notes
                    .first()
                    .map_or(String::new(), |note| format!(": {note}"));
                refused.push(format!(
                    "no row for {t} threads: the count ran on {}{why}",
                    c.threads
                ));
                complete = false;
                continue;
            }
            let secs = c.elapsed.as_secs_f64();
            on_run(*t, round + 1, secs);
            times.push(secs);
        }
    }
    samples.retain(|(_, times)| !times.is_empty());
    if samples.is_empty() {
        return Err(Error::Interrupted);
    }
    Ok(ScaleReport {
        n,
        total: first.total.to_string(),
        engine: first.engine,
        kernel: first.kernel,
        device: first.device.clone(),
        subtasks: first.subtasks,
        pinned: opts.pin,
        version: env!("CARGO_PKG_VERSION").into(),
        machine: Machine::current(),
        rows: rows(&samples),
        complete,
        refused,
    })
}
