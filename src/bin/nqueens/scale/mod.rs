//! `nqueens scale`: how `count N` scales with threads, measured ([`measure`]), printed
//! ([`export`]) and drawn ([`plot`]).

pub mod export;
pub mod plot;
mod report;

pub use report::{rows, Machine, ScaleReport};

use nqueens::{run, CountOptions, Error, Hooks, RunRequest};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};

/// The default thread list: 1, 2, 4, ... and all logical CPUs.
pub fn default_threads(cpus: usize) -> Vec<usize> {
    let mut list: Vec<usize> = std::iter::successors(Some(1usize), |t| Some(t * 2))
        .take_while(|&t| t < cpus)
        .collect();
    list.push(cpus.max(1));
    list
}

/// The thread counts a measurement runs: ascending, each once, and always 1 (the baseline
/// every speedup is measured against). The flag says whether 1 was added.
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
pub fn measure(
    n: usize,
    opts: &CountOptions,
    threads: &[usize],
    repeat: NonZeroU32,
    stop: &AtomicBool,
    mut on_run: impl FnMut(usize, usize, f64),
) -> Result<ScaleReport, Error> {
    // a thread count the library refuses fails before the warm-up, not after it
    for &t in threads {
        CountOptions {
            threads: Some(t),
            ..CountOptions::default()
        }
        .resolved_threads()?;
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
    let first = run(&RunRequest::new(n, warm, None), &hooks)?.counts;
    // round by round, every thread count once a round: a machine that drifts (other
    // tenants, clocks) slows all thread counts alike instead of one block of runs
    let mut samples: Vec<(usize, Vec<f64>)> = threads.iter().map(|&t| (t, Vec::new())).collect();
    let mut complete = true;
    let mut refused = Vec::new();
    'rounds: for round in 0..repeat.get() as usize {
        for (t, times) in &mut samples {
            if round > 0 && times.is_empty() {
                continue; // refused in the first round
            }
            let run_opts = CountOptions {
                threads: Some(*t),
                ..opts.clone()
            };
            let c = match run(&RunRequest::new(n, run_opts, None), &hooks) {
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
                let why = match c.notes.first() {
                    Some(note) => format!(": {note}"),
                    // a run starts no more workers than it has subtasks
                    None if c.subtasks < *t => format!(
                        ": the count has {} subtasks, and a run starts no more workers than subtasks",
                        c.subtasks
                    ),
                    None => String::new(),
                };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_is_described() {
        let m = Machine::current();
        assert!(m.logical_cpus >= 1 && m.physical_cores >= 1 && !m.os.is_empty());
    }

    #[test]
    fn rows_summarise_medians_speedup_and_efficiency() {
        let r = rows(&[
            (1, vec![4.0, 4.2, 3.8]),
            (2, vec![2.1, 2.0, 2.5]),
            (4, vec![1.25, 1.0]),
        ]);
        assert_eq!((r[0].median_s, r[0].min_s, r[0].max_s), (4.0, 3.8, 4.2));
        assert_eq!(
            (r[1].median_s, r[1].speedup, r[1].efficiency),
            (2.1, 4.0 / 2.1, 4.0 / 2.1 / 2.0)
        );
        assert_eq!((r[2].median_s, r[2].runs), (1.125, 2));
        let r = rows(&[(1, vec![3.0]), (4, vec![1.0])]);
        assert_eq!(
            (r[1].threads, r[1].speedup, r[1].efficiency),
            (4, 3.0, 0.75)
        );
    }

    #[test]
    fn thread_lists_always_hold_the_one_thread_baseline() {
        assert_eq!(default_threads(6), vec![1, 2, 4, 6]);
        assert_eq!(default_threads(1), vec![1]);
        assert_eq!(thread_list(&[4, 2, 2]), (vec![1, 2, 4], true));
        assert_eq!(thread_list(&[1, 1, 2]), (vec![1, 2], false));
    }

    #[test]
    fn thread_counts_run_in_alternating_rounds_and_agree() {
        let never = AtomicBool::new(false);
        let mut order = Vec::new();
        let three = NonZeroU32::new(3).unwrap();
        let report = measure(
            8,
            &CountOptions::default(),
            &[2],
            three,
            &never,
            |t, run, _| order.push((t, run)),
        )
        .unwrap();
        assert_eq!(order, [(1, 1), (2, 1), (1, 2), (2, 2), (1, 3), (2, 3)]);
        let runs: Vec<_> = report.rows.iter().map(|r| (r.threads, r.runs)).collect();
        assert_eq!(runs, [(1, 3), (2, 3)]);
        assert_eq!((report.total.as_str(), report.complete), ("92", true));
    }

    #[test]
    fn a_refused_thread_count_fails_before_any_run() {
        let never = AtomicBool::new(false);
        let mut runs = 0;
        let one = NonZeroU32::MIN;
        let refused = measure(8, &CountOptions::default(), &[0], one, &never, |_, _, _| {
            runs += 1
        });
        assert_eq!((refused.unwrap_err(), runs), (Error::ZeroThreads, 0));
    }
}
