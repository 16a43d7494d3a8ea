//! The CPU executor: worker threads taking subtasks one at a time, in id order, each counted
//! by a sequential kernel; a worker that finds none left lends itself to those still
//! counting ([`Spare`]).

use super::contract::{Executed, Executor, Facts, FirstFailure, Job};
use crate::error::Error;
use crate::parallel::{Spare, Workers};
use crate::subtask::Kernels;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Worker threads and the CPU kernels.
pub(crate) struct Cpu {
    pub workers: Workers,
    pub kernels: Kernels,
    /// The threads the run counts on: the workers, and those lent to their subtasks.
    pub threads: usize,
}

impl Cpu {
    /// The workers and kernels, no thread lent past the workers.
    pub fn new(workers: Workers, kernels: Kernels) -> Cpu {
        let threads = workers.count();
        Cpu {
            workers,
            kernels,
            threads,
        }
    }
}

impl Executor for Cpu {
    fn execute(&self, job: Job) -> Result<Executed, Error> {
        let Job {
            ids, cancel, done, ..
        } = job;
        let next = AtomicUsize::new(0);
        let failure = FirstFailure::default();
        let workers = self.workers.at_most(ids.len());
        // a worker that finds no subtask left lends itself to those still counting
        let spare = Spare::new(self.threads, workers.count());
        let counted = workers.run(|_| {
            let mut counted = 0usize;
            loop {
                let _turn = self.workers.turn();
                if cancel.load(Ordering::Relaxed) || failure.failed() {
                    break;
                }
                let Some(&id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                let Some(found) = failure.count(&job, id, (self.kernels, &spare)) else {
                    break;
                };
                done(id, found);
                counted += 1;
            }
            spare.lend();
            counted
        })?;
        failure.check()?;
        // a subtask left uncounted means the run was cut short
        if counted.iter().sum::<usize>() < ids.len() {
            return Err(Error::Interrupted);
        }
        Ok(Executed::default())
    }

    fn facts(&self) -> Facts {
        Facts {
            kernel: self.kernels.reported(),
            threads: self.threads,
            device: "cpu".into(),
            notes: Vec::new(),
        }
    }
}
