//! Counting solutions: the library's main entry points.

use crate::device::{Device, DeviceChoice};
use crate::error::Error;
use crate::kernel::{Kernel, KernelChoice};
use crate::parallel::{self, Control};
use crate::search::Found;
use crate::split::{default_min_subtasks, Engine, EngineChoice, Plan};
use std::time::{Duration, Instant};

/// How to count. `Default` counts everything on all cores with the fastest engine and kernel.
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
    /// `auto` runs the quadrant engine where it is the fastest on the CPU
    /// ([`crate::quadrant::auto_takes`]) unless fundamental solutions, a split depth or a GPU
    /// are asked for;
    /// it never depends on the machine, so shards of one run agree on it.
    pub fn plan(&self, n: usize, prefix: Option<&[usize]>) -> Result<Plan, Error> {
        let engine = match self.engine {
            EngineChoice::Auto
                if prefix.is_none()
                    && self.split_depth.is_none()
                    && !self.unique
                    && self.device != DeviceChoice::Gpu
                    && crate::quadrant::auto_takes(n) =>
            {
                EngineChoice::Quadrant
            }
            named => named,
        };
        Plan::with_target(n, engine, prefix, self.split_depth, default_min_subtasks(n))
    }
}

/// The result of a count.
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
    /// Subtasks the GPU counted (the CPU counted the rest).
    pub gpu_subtasks: usize,
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
    count_plan(&opts.plan(n, None)?, opts)
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
    count_plan(&opts.plan(n, Some(prefix))?, opts)
}

/// Counts every subtask of `plan` with the threads and kernel of `opts`.
pub fn count_plan(plan: &Plan, opts: &CountOptions) -> Result<Counts, Error> {
    let ids: Vec<usize> = (0..plan.len()).collect();
    count_subtasks(plan, &ids, opts, Control::default())
}

/// Counts the subtasks `ids` of `plan`: the building block of shards and resumed runs.
pub fn count_subtasks(
    plan: &Plan,
    ids: &[usize],
    opts: &CountOptions,
    control: Control<'_>,
) -> Result<Counts, Error> {
    let threads = opts.resolved_threads()?;
    let mut kernel = Kernel::resolve(opts.kernel)?;
    let pool = parallel::pool(threads, opts.pin)?;
    let device = match plan.quadrant_layout() {
        Some(layout) => {
            if opts.unique {
                return Err(Error::TotalsOnly(Engine::Quadrant));
            }
            if opts.device == DeviceChoice::Gpu {
                return Err(Error::CpuOnly(Engine::Quadrant));
            }
            let limit = opts
                .memory_limit
                .unwrap_or_else(crate::quadrant::default_memory_limit);
            pool.install(|| layout.prepare(limit));
            if kernel != Kernel::Scalar {
                kernel = crate::kernel::sieve::vector_kernel().unwrap_or(Kernel::Scalar);
            }
            Device::Cpu
        }
        None => Device::open(opts.device, plan.n())?,
    };
    let start = Instant::now();
    let (found, gpu_subtasks) = match &device {
        Device::Cpu => (
            parallel::run(&pool, plan, ids, opts.unique, kernel, control)?,
            0,
        ),
        #[cfg(feature = "gpu")]
        Device::Gpu { gpu, share } => {
            parallel::run_with_gpu(&pool, gpu, *share, plan, ids, opts.unique, kernel, control)?
        }
    };
    Ok(Counts {
        device: device.describe(),
        gpu_subtasks,
        ..Counts::new(
            plan,
            opts,
            found,
            ids.len(),
            kernel,
            threads,
            start.elapsed(),
        )
    })
}

impl Counts {
    /// Wraps a sum of subtask results with the facts of the run.
    pub fn new(
        plan: &Plan,
        opts: &CountOptions,
        found: Found,
        subtasks: usize,
        kernel: Kernel,
        threads: usize,
        elapsed: Duration,
    ) -> Counts {
        Counts {
            n: plan.n(),
            total: found.total,
            unique: opts.unique.then_some(found.unique),
            nodes: found.nodes,
            searched_nodes: found.nodes,
            subtasks,
            largest_subtask_share: share(found.max_subtask_nodes, found.nodes),
            split_depth: plan.depth(),
            engine: plan.engine(),
            kernel,
            threads,
            device: "cpu".into(),
            gpu_subtasks: 0,
            elapsed,
            peak_memory: peak_memory(),
        }
    }
}

/// The process's peak resident set (`VmHWM`), on Linux.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `part / whole`, 0 when there is no whole.
pub(crate) fn share(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
