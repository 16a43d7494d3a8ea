//! The CPU executor: a rayon pool work-stealing subtasks one at a time, each counted by a
//! sequential kernel.

use super::{Done, Executed, Executor, Facts};
use crate::error::Error;
use crate::found::Found;
use crate::kernel::Kernel;
use crate::search::run_subtask;
use crate::split::Plan;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// Rayon threads and a CPU kernel.
pub(crate) struct Cpu {
    pub pool: rayon::ThreadPool,
    pub kernel: Kernel,
}

impl Executor for Cpu {
    fn execute(
        &self,
        plan: &Plan,
        ids: &[usize],
        unique: bool,
        cancel: &AtomicBool,
        done: Done<'_>,
    ) -> Result<Executed, Error> {
        let finished: Option<usize> = self.pool.install(|| {
            ids.par_iter()
                .with_max_len(1)
                .map(|&id| {
                    if cancel.load(Ordering::Relaxed) {
                        return None;
                    }
                    let found: Found = run_subtask(plan, id, unique, self.kernel, cancel)?;
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
            kernel: self.kernel,
            threads: self.pool.current_num_threads(),
            device: "cpu".into(),
        }
    }
}
