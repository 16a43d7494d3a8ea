//! Opening the executor a run counts with: the CPU's, or a GPU backend's with CPU threads
//! beside it (the quadrant engine's tables built first).

use crate::device::Devices;
use crate::error::Error;
use crate::execute::{cpu, Executor};
#[cfg(feature = "gpu")]
use crate::gpu::{
    pairs::executor as pairs,
    pairs::gpu::{PairCounter, PairGpu},
    rows::dispatch::{RowCounter, RowGpu},
    rows::executor as rows,
};
use crate::parallel::Workers;
use crate::plan::Plan;
use crate::resolved::Resolved;
use std::sync::atomic::AtomicBool;
#[cfg(feature = "gpu")]
use std::sync::Arc;

/// Opens the executor `resolved` name for `plan`, to count `subtasks` subtasks: CPU threads
/// with the chosen kernel (never more workers than subtasks: an idle worker still costs;
/// the quadrant engine's units take the threads past them), or GPUs with CPU threads beside
/// them. The quadrant engine's tables are built here (on the CPU threads, within the memory
/// limit); `cancel` stops the build ([`Error::Interrupted`]).
pub(crate) fn open(
    plan: &Plan,
    resolved: &Resolved,
    subtasks: usize,
    cancel: &AtomicBool,
) -> Result<Box<dyn Executor>, Error> {
    let workers = Workers::new(resolved.threads, resolved.pin)?.at_most(subtasks);
    let kernels = resolved.kernels;
    if let Some(layout) = plan.quadrant_layout() {
        // a one-off build gains nothing from more threads than cores, and each in-flight
        // task holds memory and delays a stop
        let builders = workers.at_most(num_cpus::get());
        #[cfg(feature = "gpu")]
        if let Devices::Gpus { gpus, .. } = &resolved.devices {
            // (a GPU over a bus joins the units' other halves from the whole tables)
            if gpus.iter().any(|gpu| !gpu.shares_memory) {
                layout.keep_tables_whole_for_devices();
            }
        }
        layout
            .prepare(
                resolved.memory_limit,
                subtasks,
                (&builders, workers.count()),
                cancel,
            )?
            .ok_or(Error::Interrupted)?;
        #[cfg(feature = "gpu")]
        if let Devices::Gpus { gpus, share } = &resolved.devices {
            let mut counters: Vec<Arc<dyn PairCounter>> = Vec::new();
            for gpu in gpus.iter().map(PairGpu::on) {
                gpu.trust(|| pairs::check_pairs(&gpu, kernels.pairs))?;
                counters.push(Arc::new(gpu));
            }
            return Ok(Box::new(pairs::QuadrantOnGpus {
                gpus: counters,
                share: *share,
                workers,
                kernels,
                notes: Default::default(),
            }));
        }
        // a unit's pair count takes the threads past its subtasks, up to a thread a core
        let threads = resolved.threads.min(workers.count().max(num_cpus::get()));
        return Ok(Box::new(cpu::Cpu {
            workers,
            kernels,
            threads,
        }));
    }
    match &resolved.devices {
        Devices::Cpu => Ok(Box::new(cpu::Cpu::new(workers, kernels))),
        #[cfg(feature = "gpu")]
        Devices::Gpus { gpus, share } => Ok(Box::new(rows::WithGpu {
            gpus: (gpus.iter())
                .map(|gpu| Arc::new(RowGpu::on(gpu)) as Arc<dyn RowCounter>)
                .collect(),
            share: *share,
            workers,
            kernels,
            drop_at: crate::gpu::rows::dispatch::DROPPED,
            dropped: Default::default(),
        })),
    }
}
