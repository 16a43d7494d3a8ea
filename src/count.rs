//! Counting solutions: the library's main entry points.

use crate::device::{DeviceChoice, Devices};
use crate::error::Error;
use crate::kernel::{Kernel, KernelChoice};
use crate::parallel;
use crate::run::{run, Hooks, RunSettings};
use crate::split::{default_min_subtasks, Engine, EngineChoice, Plan};
use std::time::Duration;

/// How to count. `Default` counts everything on all cores with the fastest engine and kernel.
///
/// ```
/// use nqueens::{count, CountOptions, EngineChoice, KernelChoice};
/// let opts = CountOptions {
///     threads: Some(2),
///     engine: EngineChoice::Mirror,
///     kernel: KernelChoice::Scalar,
///     ..CountOptions::default()
/// };
/// assert_eq!(count(10, &opts).unwrap().total, 724);
/// assert_eq!(opts.resolved_threads().unwrap(), 2);
/// ```
#[derive(Clone, Debug, Default)]
pub struct CountOptions {
    /// Worker threads; `None` = all logical CPUs.
    pub threads: Option<usize>,
    /// Symmetry decomposition.
    pub engine: EngineChoice,
    /// Leaf search kernel.
    pub kernel: KernelChoice,
    /// Count fundamental solutions too.
    pub unique: bool,
    /// Rows enumerated into subtasks; `None` = chosen from N.
    pub split_depth: Option<usize>,
    /// Pin worker threads to cores (worker i on core i modulo the cores).
    pub pin: bool,
    /// Where the search runs.
    pub device: DeviceChoice,
    /// Which GPU adapters to count on (indices of [`crate::gpu_adapters`]); `None` = every
    /// real GPU. Naming adapters implies a GPU (with [`DeviceChoice::Auto`] too).
    pub gpus: Option<Vec<usize>>,
    /// Bytes the quadrant engine's tables may take; `None` = half the machine's memory.
    pub memory_limit: Option<u64>,
}

impl CountOptions {
    /// The thread count these options resolve to.
    pub fn resolved_threads(&self) -> Result<usize, Error> {
        match self.threads {
            Some(t) => parallel::check_threads(t),
            None => Ok(num_cpus::get()),
        }
    }

    /// The plan these options give for an `n`×`n` board (with an optional 0-based prefix).
    /// It depends on N, the engine, the prefix and the split depth, never on the threads.
    ///
    /// `auto` runs the full-symmetry engine on a GPU when the count uses one (see
    /// [`DeviceChoice::Auto`]); otherwise the quadrant engine where it measured fastest on the
    /// CPU (N = 14 to 20) unless fundamental solutions or a split depth are asked for. So the
    /// plan of `auto` depends on whether the machine has a GPU: shards of one run made on
    /// machines of both kinds are refused by merge (name the engine for such a cluster).
    pub fn plan(&self, n: usize, prefix: Option<&[usize]>) -> Result<Plan, Error> {
        let devices = self.devices(n)?;
        self.plan_on(n, prefix, &devices)
    }

    /// Where a count of an `n`×`n` board with these options runs: decided once per run.
    pub(crate) fn devices(&self, n: usize) -> Result<Devices, Error> {
        crate::board::check_n(n)?;
        let cpu_only = self.engine == EngineChoice::Quadrant;
        Devices::choose(n, self.device, self.gpus.as_deref(), cpu_only)
    }

    /// [`CountOptions::plan`] on the devices already chosen.
    pub(crate) fn plan_on(
        &self,
        n: usize,
        prefix: Option<&[usize]>,
        devices: &Devices,
    ) -> Result<Plan, Error> {
        let engine = match self.engine {
            EngineChoice::Auto
                if prefix.is_none()
                    && self.split_depth.is_none()
                    && !self.unique
                    && !devices.has_gpu()
                    && crate::quadrant::auto_takes(n) =>
            {
                EngineChoice::Quadrant
            }
            named => named,
        };
        let plan = Plan::with_target(n, engine, prefix, self.split_depth, default_min_subtasks(n))?;
        // refused here, before a run opens its checkpoint
        if plan.quadrant_layout().is_some() {
            if self.unique {
                return Err(Error::TotalsOnly(Engine::Quadrant));
            }
            if matches!(self.device, DeviceChoice::Gpu | DeviceChoice::GpuOnly)
                || self.gpus.is_some()
            {
                return Err(Error::CpuOnly(Engine::Quadrant));
            }
        }
        Ok(plan)
    }
}

/// The result of a count.
///
/// ```
/// let c = nqueens::count(10, &nqueens::CountOptions::default()).unwrap();
/// assert_eq!((c.n, c.total, c.unique), (10, 724, None));
/// assert!(c.nodes >= c.searched_nodes && c.subtasks > 0 && c.threads > 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    /// Board side.
    pub n: usize,
    /// Number of solutions.
    pub total: u128,
    /// Number of fundamental solutions, when asked for.
    pub unique: Option<u128>,
    /// Queens placed by the search (resumed subtasks included).
    pub nodes: u128,
    /// Queens placed by this run (without resumed subtasks): what `nodes_per_s` measures.
    pub searched_nodes: u128,
    /// Subtasks the search was cut into.
    pub subtasks: usize,
    /// The largest subtask's share of the nodes (how finely the work is cut).
    pub largest_subtask_share: f64,
    /// Rows enumerated into subtasks.
    pub split_depth: usize,
    /// Engine that ran.
    pub engine: Engine,
    /// Kernel that ran.
    pub kernel: Kernel,
    /// Worker threads.
    pub threads: usize,
    /// `cpu`, or the GPU adapter and its backend.
    pub device: String,
    /// Subtasks the GPUs counted (the CPU counted the rest).
    pub gpu_subtasks: usize,
    /// Items the GPUs counted: the pieces they cut their subtasks into.
    pub gpu_items: u64,
    /// Dispatches to the GPUs.
    pub gpu_dispatches: u64,
    /// Wall-clock time of the search.
    pub elapsed: Duration,
    /// The process's peak resident memory in bytes, where the system tells it (Linux).
    pub peak_memory: Option<u64>,
}

/// Counts the solutions of the N-Queens problem on an `n`×`n` board.
///
/// ```
/// use nqueens::{count, CountOptions};
/// let opts = CountOptions { unique: true, ..CountOptions::default() };
/// let c = count(8, &opts).unwrap();
/// assert_eq!((c.total, c.unique), (92, Some(12)));
/// assert!(count(33, &opts).is_err());
/// ```
pub fn count(n: usize, opts: &CountOptions) -> Result<Counts, Error> {
    let settings = RunSettings::new(n, opts.clone(), None);
    Ok(run(&settings, &Hooks::default())?.counts)
}

/// Counts the completions of the first rows `prefix` (0-based columns), without symmetry.
///
/// ```
/// use nqueens::{count_completions, CountOptions};
/// // 8x8: four solutions have their first queen in the corner, one of them "1 5 ..."
/// let opts = CountOptions::default();
/// assert_eq!(count_completions(8, &[0], &opts).unwrap().total, 4);
/// assert_eq!(count_completions(8, &[0, 4], &opts).unwrap().total, 1);
/// assert!(count_completions(8, &[0, 1], &CountOptions::default()).is_err());
/// ```
pub fn count_completions(n: usize, prefix: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    let settings = RunSettings::new(n, opts.clone(), Some(prefix.to_vec()));
    Ok(run(&settings, &Hooks::default())?.counts)
}

/// Counts the subtasks `ids` of `plan`: a slice of a plan cut by hand (shards cut it by
/// stride, see [`crate::run::RunSettings::shard`]).
///
/// ```
/// use nqueens::{EngineChoice, Plan};
/// use nqueens::{count_subtasks, CountOptions};
/// let plan = Plan::new(8, EngineChoice::Mirror, None, Some(2)).unwrap();
/// let (evens, odds): (Vec<usize>, Vec<usize>) = (0..plan.len()).partition(|id| id % 2 == 0);
/// let opts = CountOptions::default();
/// let total = count_subtasks(&plan, &evens, &opts).unwrap().total
///     + count_subtasks(&plan, &odds, &opts).unwrap().total;
/// assert_eq!(total, 92);
/// ```
pub fn count_subtasks(plan: &Plan, ids: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    Ok(crate::run::recount(plan, ids, opts)?.0)
}
