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

/// Subtasks in the GPU's first (and smallest) batch: one workgroup. Later batches double
/// while they take under 50 ms and halve past 250 ms, short enough for Ctrl-C, progress,
/// checkpoints and desktop GPU watchdogs on any device, a CPU-emulated one included.
#[cfg(feature = "gpu")]
const FIRST_GPU_BATCH: usize = 32;

/// Runs the subtasks `ids` of `plan` on a GPU and the CPU pool at once: the GPU takes batches
/// of the subtasks it can count from the front of their list; CPU workers first count those
/// it cannot (tie frames, canonical forms), then, when `share`, take its subtasks one at a
/// time from the back. Every finished subtask is reported through `control` as on the CPU.
/// Returns the sum and how many subtasks the GPU counted.
#[cfg(feature = "gpu")]
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_with_gpu(
    pool: &rayon::ThreadPool,
    gpu: &crate::gpu::Gpu,
    share: bool,
    plan: &Plan,
    ids: &[usize],
    unique: bool,
    kernel: Kernel,
    control: Control<'_>,
) -> Result<(Found, usize), Error> {
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    let (accel, cpu_only): (Vec<usize>, Vec<usize>) = ids
        .iter()
        .partition(|&&id| crate::gpu::takes(plan, id, unique));
    let never = AtomicBool::new(false);
    let stop = control.cancel.unwrap_or(&never);
    let report = |id: usize, found: Found| {
        if let Some(done) = control.on_done {
            done(id, found);
        }
    };
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
    let prepared = gpu.prepare(plan);
    let (on_gpu, on_cpu) = std::thread::scope(|scope| {
        let gpu_side = scope.spawn(|| -> Result<(Found, usize), Error> {
            let (mut sum, mut counted, mut batch) = (Found::default(), 0, FIRST_GPU_BATCH);
            while !stop.load(Ordering::Relaxed) {
                let range = take(batch, false);
                if range.is_empty() {
                    break;
                }
                let started = Instant::now();
                let found = gpu.count(&prepared, &accel[range.clone()])?;
                for (&id, f) in accel[range].iter().zip(found) {
                    report(id, f);
                    sum += f;
                    counted += 1;
                }
                let took = started.elapsed();
                if took < Duration::from_millis(50) {
                    batch = (batch * 2).min(1 << 16);
                } else if took > Duration::from_millis(250) {
                    batch = (batch / 2).max(FIRST_GPU_BATCH);
                }
            }
            Ok((sum, counted))
        });
        let workers = pool.current_num_threads();
        let on_cpu: (Found, usize) = pool.install(|| {
            (0..workers)
                .into_par_iter()
                .with_max_len(1)
                .map(|_| {
                    let (mut sum, mut counted) = (Found::default(), 0usize);
                    while !stop.load(Ordering::Relaxed) {
                        let k = cpu_next.fetch_add(1, Ordering::Relaxed);
                        let id = match cpu_only.get(k) {
                            Some(&id) => id,
                            None if share => match take(1, true).next() {
                                Some(k) => accel[k],
                                None => break,
                            },
                            None => break,
                        };
                        let Some(found) = run_subtask(plan, id, unique, kernel, stop) else {
                            break;
                        };
                        report(id, found);
                        sum += found;
                        counted += 1;
                    }
                    (sum, counted)
                })
                .reduce(
                    || (Found::default(), 0),
                    |(mut a, x), (b, y)| {
                        a += b;
                        (a, x + y)
                    },
                )
        });
        let on_gpu = gpu_side
            .join()
            .unwrap_or_else(|_| Err(Error::Failed("the GPU thread failed".into())));
        (on_gpu, on_cpu)
    });
    let (mut sum, gpu_counted) = on_gpu?;
    // a subtask left uncounted means the run was cut short
    if gpu_counted + on_cpu.1 < ids.len() {
        return Err(Error::Interrupted);
    }
    sum += on_cpu.0;
    Ok((sum, gpu_counted))
}
