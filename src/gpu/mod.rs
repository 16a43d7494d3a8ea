//! The GPU path (wgpu: Vulkan, Metal, DX12): a device layer ([`device`]: adapters, limits,
//! room, buffers, kernels, records; [`opened`]: the devices this process opened) under two
//! backends, the row search's ([`rows`]) and the quadrant engine's pair count ([`pairs`]),
//! each with its shaders, its executor and what it keeps on each device, and trusted by
//! one rule ([`trust`]).

pub(crate) mod device;
pub(crate) mod opened;
pub(crate) mod pairs;
pub(crate) mod rows;
pub(crate) mod trust;

pub use device::adapters;
pub(crate) use device::Device;
pub use opened::refused;
use std::sync::Arc;

/// The GPUs a run asked for ([`opened::open`]), each trusted once a process by the
/// row search's known answer ([`rows::trust::known_answer`]).
pub fn open(
    indices: Option<&[usize]>,
    allow_software: bool,
) -> Result<Vec<Arc<Device>>, crate::error::Error> {
    opened::open(indices, allow_software, rows::trust::known_answer)
}

/// The real GPUs of the machine, opened (none when there is no real one, or it fails to
/// open): what `--device auto` counts on.
pub fn open_real() -> Vec<Arc<Device>> {
    if !device::may_have_real_gpu() {
        return Vec::new();
    }
    open(None, false).unwrap_or_default()
}

#[cfg(test)]
mod testing {
    use super::*;
    use crate::execute::contract::{Executed, Executor, Job};
    use crate::found::Found;
    use crate::plan::Plan;
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;

    /// The test machine's GPUs ([`gpus`]) as `backend` takes each.
    pub(crate) fn each_gpu<T>(backend: impl Fn(&Arc<Device>) -> T) -> Option<Vec<T>> {
        Some(gpus()?.iter().map(backend).collect())
    }

    /// Subtasks `ids` of `plan` on `executor`, each handed in once, in the order of `ids`,
    /// and what the executor reported.
    pub(crate) fn count_ids(
        executor: &dyn Executor,
        plan: &Plan,
        ids: &[usize],
        unique: bool,
    ) -> (Vec<Found>, Executed) {
        let found = Mutex::new(vec![None; plan.len()]);
        let stop = AtomicBool::new(false);
        let done = |id: usize, f| {
            let mut found = found.lock().unwrap();
            assert!(found[id].is_none(), "subtask {id} handed in twice");
            found[id] = Some(f);
        };
        let job = Job {
            plan,
            ids,
            unique,
            cancel: &stop,
            done: &done,
        };
        let executed = executor.execute(job).unwrap();
        let found = found.into_inner().unwrap();
        let each = ids.iter().map(|&id| found[id].expect("handed in"));
        (each.collect(), executed)
    }

    /// The GPUs of the test machine, or `None` (then a test is skipped, unless CI asks for
    /// a GPU with NQUEENS_REQUIRE_GPU).
    pub(crate) fn gpus() -> Option<Vec<Arc<Device>>> {
        let found = open(None, true).ok();
        assert!(
            found.is_some()
                || crate::environment::set(|name| std::env::var(name).ok(), "NQUEENS_REQUIRE_GPU")
                    .is_none(),
            "NQUEENS_REQUIRE_GPU is set but no GPU adapter is usable"
        );
        found
    }

    /// A device of its own on the test machine's GPU ([`gpus`]) without `features`, or
    /// `None`.
    pub(crate) fn gpu_without(features: wgpu::Features) -> Option<Arc<Device>> {
        let gpus = gpus()?;
        let adapter = device::listed_adapter(&gpus[0].info);
        let device = opened::open_on(adapter, Some(features));
        Some(Arc::new(device.expect("the device opens")))
    }
}
