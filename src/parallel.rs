//! The rayon driver: runs a set of subtasks on a pool of threads and sums what they find.

use crate::error::Error;
use crate::kernel::Kernel;
use crate::search::{run_subtask, Found};
use crate::split::Plan;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Hooks into a run, checked only between subtasks (never inside the search).
#[derive(Default, Clone, Copy)]
pub struct Control<'a> {
    /// When set, workers abandon their subtasks within about a millisecond, take no new
    /// one, and the run ends with [`Error::Interrupted`]; finished subtasks were reported.
    pub cancel: Option<&'a AtomicBool>,
    /// Called from a worker after each finished subtask with its id and result.
    pub on_done: Option<&'a (dyn Fn(usize, Found) + Sync)>,
}

/// The most worker threads a run may ask for: far above any machine's cores, far below what
/// exhausts memory while the threads start.
pub const MAX_THREADS: usize = 4096;

/// Checks a thread count: from 1 to [`MAX_THREADS`].
///
/// ```
/// use nqueens::parallel::check_threads;
/// assert!(check_threads(1).is_ok() && check_threads(4096).is_ok());
/// assert!(check_threads(0).is_err() && check_threads(4097).is_err());
/// ```
pub fn check_threads(threads: usize) -> Result<usize, Error> {
    match threads {
        0 => Err(Error::ZeroThreads),
        t if t > MAX_THREADS => Err(Error::TooManyThreads {
            threads: t,
            max: MAX_THREADS,
        }),
        t => Ok(t),
    }
}

/// Builds a pool of `threads` workers, pinned to cores when `pin` (where the OS allows).
pub fn pool(threads: usize, pin: bool) -> Result<rayon::ThreadPool, Error> {
    check_threads(threads)?;
    let cores = if pin {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("nqueens-{i}"))
        .start_handler(move |i| {
            if !cores.is_empty() {
                core_affinity::set_for_current(cores[i % cores.len()]);
            }
        })
        .build()
        .map_err(|e| Error::Failed(format!("cannot start {threads} threads: {e}")))
}

/// Runs the subtasks `ids` of `plan` on `pool`, work-stealing one subtask at a time.
///
/// The sum does not depend on the number of threads or on the order subtasks finish in.
pub fn run(
    pool: &rayon::ThreadPool,
    plan: &Plan,
    ids: &[usize],
    unique: bool,
    kernel: Kernel,
    control: Control<'_>,
) -> Result<Found, Error> {
    let never = AtomicBool::new(false);
    let stop = control.cancel.unwrap_or(&never);
    let found: Option<Found> = pool.install(|| {
        ids.par_iter()
            .with_max_len(1)
            .map(|&id| {
                if stop.load(Ordering::Relaxed) {
                    return None;
                }
                let found = run_subtask(plan, id, unique, kernel, stop)?;
                if let Some(done) = control.on_done {
                    done(id, found);
                }
                Some(found)
            })
            .sum()
    });
    // a skipped subtask makes the sum None: only then was the run cut short
    found.ok_or(Error::Interrupted)
}
