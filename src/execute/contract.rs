//! What every executor promises ([`Executor`]), what it is given ([`Job`]) and what it
//! reports ([`Executed`], [`Facts`]).

use crate::error::Error;
use crate::found::Found;
use crate::kernel::Kernel;
use crate::parallel::Spare;
use crate::plan::Plan;
use crate::subtask::Kernels;
use std::sync::atomic::AtomicBool;

/// Called from any thread with a finished subtask's id and result.
pub(crate) type Done<'a> = &'a (dyn Fn(usize, Found) + Sync);

/// Subtasks of a plan to count.
#[derive(Clone, Copy)]
pub(crate) struct Job<'a> {
    /// The plan.
    pub plan: &'a Plan,
    /// The ids of the subtasks.
    pub ids: &'a [usize],
    /// Whether fundamental solutions are counted too.
    pub unique: bool,
    /// Set to stop.
    pub cancel: &'a AtomicBool,
    /// Takes each finished subtask's id and result.
    pub done: Done<'a>,
}

/// Counts subtasks of a plan.
///
/// The contract, for every implementation:
/// - `done` is called exactly once for each subtask of `ids` that is finished, from any
///   thread and in any order, with the subtask's whole result; never for a subtask that was
///   cut short.
/// - Once `cancel` is set, no new subtask is started and running ones stop within about a
///   millisecond (those on a GPU: within one dispatch); the call then returns
///   [`Error::Interrupted`] if any subtask of `ids` was left unreported.
/// - `Ok` means every subtask of `ids` was reported; the sum of the results does not depend
///   on the number of threads or the order of completion.
/// - Failures of the device (a lost GPU, a thread pool that cannot start) and of a subtask
///   (memory that cannot be had) are errors of kind runtime, never a partial `Ok`; the first
///   subtask that fails stops the workers at their next subtask ([`FirstFailure`]).
pub(crate) trait Executor {
    /// Counts the subtasks of `job`.
    fn execute(&self, job: Job) -> Result<Executed, Error>;

    /// The facts of the run that a report names.
    fn facts(&self) -> Facts;
}

/// The first subtask failure of an execution: the workers stop once there is one, and the
/// execution returns it.
#[derive(Default)]
pub(crate) struct FirstFailure(std::sync::OnceLock<Error>);

impl FirstFailure {
    /// Whether a subtask has failed: no new one should start.
    pub fn failed(&self) -> bool {
        self.0.get().is_some()
    }

    /// Counts subtask `id` of `job` on `kernels`, with the threads `spare` lends: `None`
    /// when it was stopped or failed (the failure is kept, the first one only).
    pub fn count(
        &self,
        job: &Job,
        id: usize,
        (kernels, spare): (Kernels, &Spare),
    ) -> Option<Found> {
        let stop = (job.cancel, spare);
        match crate::subtask::count(job.plan, id, job.unique, kernels, stop) {
            Ok(found) => found,
            Err(e) => {
                let _ = self.0.set(e);
                None
            }
        }
    }

    /// Keeps `e` when it is the first failure.
    #[cfg(feature = "gpu")]
    pub fn fail(&self, e: Error) {
        let _ = self.0.set(e);
    }

    /// The failure, if a subtask failed.
    pub fn check(self) -> Result<(), Error> {
        self.0.into_inner().map_or(Ok(()), Err)
    }
}

/// What a finished execution adds to the facts.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Executed {
    /// Subtasks the GPUs counted (the CPU counted the rest).
    pub gpu_subtasks: usize,
    /// Items the GPUs counted (pieces of their subtasks).
    pub gpu_items: u64,
    /// Dispatches to the GPUs.
    pub gpu_dispatches: u64,
    /// Pieces the GPUs were given and the CPU counted instead: items too large for the
    /// kernel's counts, sieves larger than a GPU binds.
    pub gpu_items_given_up: u64,
}

impl std::ops::Add for Executed {
    type Output = Executed;

    /// Two executions of one run, together (a race's calibration shard and the rest).
    fn add(self, other: Executed) -> Executed {
        Executed {
            gpu_subtasks: self.gpu_subtasks + other.gpu_subtasks,
            gpu_items: self.gpu_items + other.gpu_items,
            gpu_dispatches: self.gpu_dispatches + other.gpu_dispatches,
            gpu_items_given_up: self.gpu_items_given_up + other.gpu_items_given_up,
        }
    }
}

/// Where and how subtasks are counted, as a report names it.
#[derive(Clone, Debug)]
pub(crate) struct Facts {
    /// The CPU kernel (for the quadrant engine, its pair loops).
    pub kernel: Kernel,
    /// CPU worker threads.
    pub threads: usize,
    /// `cpu`, or the GPU adapter and its backend.
    pub device: String,
    /// What a user should know of the executions (a GPU dropped for a wrong count).
    pub notes: Vec<String>,
}

#[cfg(feature = "gpu")]
impl Facts {
    /// What an executor counting on the GPUs `gpus` (described) and the CPU threads
    /// `workers` (on `kernels`) reports: the GPUs named once, `2 x name`, or joined by
    /// ` + `, and the `notes` it kept.
    pub fn on_gpus(
        (kernels, workers): (Kernels, &crate::parallel::Workers),
        gpus: impl Iterator<Item = String>,
        notes: &std::sync::Mutex<Vec<String>>,
    ) -> Facts {
        let names: Vec<String> = gpus.collect();
        let device = match names.as_slice() {
            [one] => one.clone(),
            [first, ..] if names.iter().all(|n| n == first) => {
                format!("{} x {first}", names.len())
            }
            _ => names.join(" + "),
        };
        Facts {
            kernel: kernels.reported(),
            threads: workers.count(),
            device,
            notes: crate::parallel::lock(notes).clone(),
        }
    }
}
