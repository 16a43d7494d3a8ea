//! How to count, as asked for: the options of a count before they are resolved against the
//! board and the machine (that is [`crate::resolved`]).

use crate::device::DeviceChoice;
use crate::engine::EngineChoice;
use crate::error::Error;
use crate::kernel::KernelChoice;
use crate::parallel;
use crate::race::RaceOptions;

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
    /// How `--device auto` races the CPU against the GPUs (see [`RaceOptions`]).
    pub race: RaceOptions,
}

impl CountOptions {
    /// The worker threads `NQUEENS_THREADS` asks for, read by `var` (as `std::env::var`
    /// reads a variable) by the rule of every variable nqueens reads: set to nothing or to
    /// spaces, it is as if unset (`None`). It holds one thread count, or a list of them
    /// (`1,2,4`, what `nqueens scale` takes), each from 1 to [`crate::MAX_THREADS`].
    ///
    /// ```
    /// use nqueens::CountOptions;
    /// let set = |value: &'static str| move |_: &str| Some(value.to_string());
    /// assert_eq!(CountOptions::threads_from_vars(set("4")).unwrap(), Some(vec![4]));
    /// assert_eq!(CountOptions::threads_from_vars(set("1, 2")).unwrap(), Some(vec![1, 2]));
    /// assert_eq!(CountOptions::threads_from_vars(set(" ")).unwrap(), None);
    /// assert!(CountOptions::threads_from_vars(set("0")).is_err());
    /// ```
    pub fn threads_from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Vec<usize>>, Error> {
        crate::environment::threads(var)
    }

    /// The thread count these options resolve to.
    pub fn resolved_threads(&self) -> Result<usize, Error> {
        parallel::resolve_threads(self.threads)
    }
}
