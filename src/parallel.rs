//! Worker threads: how many a run may ask for, the workers that count subtasks, and the pool
//! that listing runs on.

use crate::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking its data even if a thread panicked holding it: the panic ends the run
/// with its own error, and what these locks guard (counters, flags, lists of results) stays
/// whole between statements.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

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

/// The worker threads of a run. Each job starts its own threads, every one running the same
/// loop, and they end when it returns: no worker sits idle looking for work, so a thread count
/// far above the cores costs a thread start each (tens of microseconds), not a search of every
/// other worker's queue over and over.
///
/// At most [`BUSY_PER_CPU`] workers per logical CPU search at once; the others wait their
/// turn asleep. Thousands of runnable threads on a few cores would delay every other thread
/// of the process (the one that handles a signal, the checkpoint saver) by up to seconds.
#[derive(Clone, Debug)]
pub(crate) struct Workers {
    threads: usize,
    /// Cores to pin worker `i` to (`cores[i % len]`); empty: not pinned.
    cores: Vec<core_affinity::CoreId>,
    /// Shared by the workers when there are more than may search at once.
    turns: Option<std::sync::Arc<Turns>>,
}

/// Workers per logical CPU that search at once: more than a measurement of oversubscription
/// asks for, few enough that a woken thread runs within milliseconds (2 vCPUs, `-t 4096`:
/// SIGINT to message 7-105 ms with 8, 25-167 ms with 32, 0.1-3 s without a limit).
pub(crate) const BUSY_PER_CPU: usize = 8;

/// A counting semaphore: the turns to search.
#[derive(Debug)]
struct Turns {
    free: std::sync::Mutex<usize>,
    returned: std::sync::Condvar,
}

/// One worker's turn to search, given back when dropped.
pub(crate) struct Turn<'a>(&'a Turns);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        *lock(&self.0.free) += 1;
        self.0.returned.notify_one();
    }
}

impl Turns {
    fn new(turns: usize) -> std::sync::Arc<Turns> {
        std::sync::Arc::new(Turns {
            free: std::sync::Mutex::new(turns),
            returned: std::sync::Condvar::new(),
        })
    }
}

impl Workers {
    /// `threads` workers (checked), pinned to cores when `pin` (where the OS allows).
    pub fn new(threads: usize, pin: bool) -> Result<Workers, Error> {
        check_threads(threads)?;
        let cores = if pin {
            core_affinity::get_core_ids().unwrap_or_default()
        } else {
            Vec::new()
        };
        let busy = BUSY_PER_CPU * num_cpus::get();
        Ok(Workers {
            threads,
            cores,
            turns: (threads > busy).then(|| Turns::new(busy)),
        })
    }

    /// One worker: the calling thread itself, which never fails to start.
    pub fn this_thread() -> Workers {
        Workers {
            threads: 1,
            cores: Vec::new(),
            turns: None,
        }
    }

    /// Waits for a turn to search (at once unless more than [`BUSY_PER_CPU`] workers per
    /// logical CPU are searching).
    pub fn turn(&self) -> Option<Turn<'_>> {
        let turns = self.turns.as_deref()?;
        let free = lock(&turns.free);
        let mut free = turns
            .returned
            .wait_while(free, |free| *free == 0)
            .unwrap_or_else(|p| p.into_inner());
        *free -= 1;
        Some(Turn(turns))
    }

    /// How many workers a job starts.
    pub fn count(&self) -> usize {
        self.threads
    }

    /// The same workers, at most `most` of them (at least one).
    pub fn at_most(&self, most: usize) -> Workers {
        Workers {
            threads: self.threads.min(most.max(1)),
            cores: self.cores.clone(),
            turns: self.turns.clone(),
        }
    }

    /// Runs `work(i)` on worker `i`, all at once, and gives their results in worker order
    /// (one unpinned worker is the calling thread). A worker's panic is resumed here.
    pub fn run<T: Send>(&self, work: impl Fn(usize) -> T + Sync) -> Result<Vec<T>, Error> {
        if self.threads == 1 && self.cores.is_empty() {
            return Ok(vec![work(0)]);
        }
        let work = &work;
        // Workers wait at a gate until all are started: a thread that starts the others while
        // thousands already search gets a sliver of the cores, and would keep starting them
        // long after a stop was asked for.
        let gate = Gate::default();
        let gate = &gate;
        std::thread::scope(|scope| {
            let mut started = Vec::with_capacity(self.threads);
            let mut failed = None;
            for i in 0..self.threads {
                let core = (!self.cores.is_empty()).then(|| self.cores[i % self.cores.len()]);
                let worker = std::thread::Builder::new()
                    .name(format!("nqueens-{i}"))
                    .spawn_scoped(scope, move || {
                        gate.wait();
                        if let Some(core) = core {
                            core_affinity::set_for_current(core);
                        }
                        work(i)
                    });
                match worker {
                    Ok(w) => started.push(w),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            gate.open();
            let results: Vec<T> = started
                .into_iter()
                .map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect();
            match failed {
                // the workers that did start ran the job; it still failed as asked
                Some(e) => Err(Error::Failed(format!(
                    "cannot start {} threads: {e}",
                    self.threads
                ))),
                None => Ok(results),
            }
        })
    }
}

/// Where started workers wait until every worker is started.
#[derive(Default)]
struct Gate {
    open: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
}

impl Gate {
    fn wait(&self) {
        let open = lock(&self.open);
        let _open = self
            .opened
            .wait_while(open, |open| !*open)
            .unwrap_or_else(|p| p.into_inner());
    }

    fn open(&self) {
        *lock(&self.open) = true;
        self.opened.notify_all();
    }
}

/// Threads of a run that found no subtask left to take, lent to the subtasks still being
/// counted: a unit of the quadrant engine splits its pair count over them, so a shard of
/// fewer units than threads keeps every thread busy to its end.
#[derive(Debug)]
pub(crate) struct Spare {
    idle: AtomicUsize,
    /// Whether a thread is ever lent in this run (more than one thread counts).
    may: bool,
}

/// No thread is ever lent: the runs of one thread, and the devices' executors.
pub(crate) static NO_SPARE: Spare = Spare::none();

impl Spare {
    /// A run whose threads are never lent.
    pub const fn none() -> Spare {
        Spare {
            idle: AtomicUsize::new(0),
            may: false,
        }
    }

    /// A run of `threads` threads of which `started` take subtasks: the rest are lent from
    /// the start.
    pub fn new(threads: usize, started: usize) -> Spare {
        Spare {
            idle: AtomicUsize::new(threads.saturating_sub(started)),
            may: threads > 1,
        }
    }

    /// A thread with no subtask left to take: lent to those still counting.
    pub fn lend(&self) {
        if self.may {
            self.idle.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A lent thread, where one is idle: the borrower runs one thread more until the
    /// [`Lent`] is dropped.
    pub fn borrow(&self) -> Option<Lent<'_>> {
        let mut idle = self.idle.load(Ordering::Relaxed);
        while idle > 0 {
            match (self.idle).compare_exchange_weak(
                idle,
                idle - 1,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(Lent(self)),
                Err(now) => idle = now,
            }
        }
        None
    }
}

/// A thread borrowed from [`Spare`], given back when dropped.
pub(crate) struct Lent<'a>(&'a Spare);

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.0.idle.fetch_add(1, Ordering::Relaxed);
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
mod tests {
    use super::Spare;

    #[test]
    fn a_spare_thread_is_borrowed_once_and_given_back() {
        let spare = Spare::new(3, 2);
        let lent = spare.borrow();
        assert!(lent.is_some() && spare.borrow().is_none());
        spare.lend();
        let again = spare.borrow();
        assert!(again.is_some() && spare.borrow().is_none());
        drop((lent, again));
        assert_eq!(spare.idle.load(std::sync::atomic::Ordering::Relaxed), 2);
        // a run of one thread never lends one
        let alone = Spare::new(1, 1);
        alone.lend();
        assert!(alone.borrow().is_none());
    }
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
