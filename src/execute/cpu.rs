//! The CPU executor: a rayon pool work-stealing subtasks one at a time, each counted by a
//! sequential kernel.

use super::{Executed, Executor, Facts, Job};
use crate::error::Error;
use crate::subtask::Kernels;
use rayon::prelude::*;
use std::sync::atomic::Ordering;

/// Rayon threads and the CPU kernels.
pub(crate) struct Cpu {
    pub pool: rayon::ThreadPool,
    pub kernels: Kernels,
}

impl Executor for Cpu {
    fn execute(&self, job: Job) -> Result<Executed, Error> {
        let Job {
            plan,
            ids,
            unique,
            cancel,
            done,
        } = job;
        let finished: Option<usize> = self.pool.install(|| {
            ids.par_iter()
                .with_max_len(1)
                .map(|&id| {
                    if cancel.load(Ordering::Relaxed) {
                        return None;
                    }
                    let found = crate::subtask::count(plan, id, unique, self.kernels, cancel)?;
                    done(id, found);
                    Some(1)
                })
                .sum()
        });
        // a skipped subtask makes the sum None: only then was the run cut short
        finished
            .map(|_| Executed::default())
            .ok_or(Error::Interrupted)
    }

    fn facts(&self) -> Facts {
        Facts {
            kernel: self.kernels.reported(),
            threads: self.pool.current_num_threads(),
            device: "cpu".into(),
        }
    }
}
