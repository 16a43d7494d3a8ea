//! The GPU executor: a GPU counts batches of subtasks while CPU threads count the rest.

use super::{Done, Executed, Executor, Facts};
use crate::error::Error;
use crate::gpu::Gpu;
use crate::kernel::Kernel;
use crate::search::run_subtask;
use crate::split::Plan;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Subtasks in the GPU's first (and smallest) batch: one workgroup. Later batches double
/// while they take under 50 ms and halve past 250 ms, short enough for Ctrl-C, progress,
/// checkpoints and desktop GPU watchdogs on any device, a CPU-emulated one included.
const FIRST_GPU_BATCH: usize = 32;

/// A GPU and a rayon pool. The GPU takes batches of the subtasks it can count from the front
/// of their list; CPU workers first count those it cannot (tie frames, canonical forms, deep
/// subtasks), then, when `share`, take its subtasks one at a time from the back.
pub(crate) struct WithGpu {
    pub gpu: Arc<Gpu>,
    pub share: bool,
    pub pool: rayon::ThreadPool,
    pub kernel: Kernel,
}

impl Executor for WithGpu {
    fn execute(
        &self,
        plan: &Plan,
        ids: &[usize],
        unique: bool,
        cancel: &AtomicBool,
        done: Done<'_>,
    ) -> Result<Executed, Error> {
        let (accel, cpu_only): (Vec<usize>, Vec<usize>) = ids
            .iter()
            .partition(|&&id| crate::gpu::takes(plan, id, unique));
        // positions of `accel` not yet taken: the GPU takes from the front, the CPU from the back
        let open = Mutex::new(0..accel.len());
        let take = |count: usize, from_back: bool| {
            let mut open = open.lock().unwrap_or_else(|p| p.into_inner());
            let count = count.min(open.len());
            if from_back {
                open.end -= count;
                open.end..open.end + count
            } else {
                open.start += count;
                open.start - count..open.start
            }
        };
        let cpu_next = AtomicUsize::new(0);
        let prepared = self.gpu.prepare(plan);
        let (on_gpu, on_cpu) = std::thread::scope(|scope| {
            let gpu_side = scope.spawn(|| -> Result<usize, Error> {
                let (mut counted, mut batch) = (0, FIRST_GPU_BATCH);
                while !cancel.load(Ordering::Relaxed) {
                    let range = take(batch, false);
                    if range.is_empty() {
                        break;
                    }
                    let started = Instant::now();
                    let found = self.gpu.count(&prepared, &accel[range.clone()])?;
                    for (&id, f) in accel[range].iter().zip(found) {
                        done(id, f);
                        counted += 1;
                    }
                    let took = started.elapsed();
                    if took < Duration::from_millis(50) {
                        batch = (batch * 2).min(1 << 16);
                    } else if took > Duration::from_millis(250) {
                        batch = (batch / 2).max(FIRST_GPU_BATCH);
                    }
                }
                Ok(counted)
            });
            let workers = self.pool.current_num_threads();
            let on_cpu: usize = self.pool.install(|| {
                (0..workers)
                    .into_par_iter()
                    .with_max_len(1)
                    .map(|_| {
                        let mut counted = 0usize;
                        while !cancel.load(Ordering::Relaxed) {
                            let k = cpu_next.fetch_add(1, Ordering::Relaxed);
                            let id = match cpu_only.get(k) {
                                Some(&id) => id,
                                None if self.share => match take(1, true).next() {
                                    Some(k) => accel[k],
                                    None => break,
                                },
                                None => break,
                            };
                            let Some(found) = run_subtask(plan, id, unique, self.kernel, cancel)
                            else {
                                break;
                            };
                            done(id, found);
                            counted += 1;
                        }
                        counted
                    })
                    .sum()
            });
            let on_gpu = gpu_side
                .join()
                .unwrap_or_else(|_| Err(Error::Failed("the GPU thread failed".into())));
            (on_gpu, on_cpu)
        });
        let gpu_subtasks = on_gpu?;
        // a subtask left uncounted means the run was cut short
        if gpu_subtasks + on_cpu < ids.len() {
            return Err(Error::Interrupted);
        }
        Ok(Executed { gpu_subtasks })
    }

    fn facts(&self) -> Facts {
        Facts {
            kernel: self.kernel,
            threads: self.pool.current_num_threads(),
            device: self.gpu.describe(),
        }
    }
}
