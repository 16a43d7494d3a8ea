//! Thread pools: how many workers a run may ask for, and the pool that runs them.

use crate::error::Error;

/// The most worker threads a run may ask for: far above any machine's cores, far below what
/// exhausts memory while the threads start.
///
/// A bound, checked by [`crate::CountOptions::resolved_threads`].
pub const MAX_THREADS: usize = 4096;

/// Checks a thread count: from 1 to [`MAX_THREADS`].
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

/// The threads a run asks for: `asked`, checked, or every logical CPU.
pub fn resolve_threads(asked: Option<usize>) -> Result<usize, Error> {
    match asked {
        Some(t) => check_threads(t),
        None => Ok(num_cpus::get()),
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

#[cfg(test)]
mod doc_examples {
    #[test]
    fn check_threads_example() {
        use crate::parallel::check_threads;
        assert!(check_threads(1).is_ok() && check_threads(4096).is_ok());
        assert!(check_threads(0).is_err() && check_threads(4097).is_err());
    }
}
