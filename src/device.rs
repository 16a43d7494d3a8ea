//! Where the search runs: the CPU alone, or a GPU with the CPU beside it.

/// Where to count, as asked for.
///
/// ```
/// use nqueens::{count, CountOptions, DeviceChoice};
/// let cpu = CountOptions { device: DeviceChoice::Cpu, ..CountOptions::default() };
/// let c = count(9, &cpu).unwrap();
/// assert_eq!((c.total, c.device.as_str(), c.gpu_subtasks), (352, "cpu", 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// A real GPU for boards of [`AUTO_GPU_MIN_N`] and more, when one is usable (CPU threads
    /// share its work); the CPU otherwise.
    #[default]
    Auto,
    /// The CPU only.
    Cpu,
    /// The GPU for every subtask it can count (a CPU-emulated adapter such as lavapipe is
    /// accepted); an error without one. CPU threads count the rest.
    Gpu,
}

/// The smallest board for which `auto` starts a GPU: below it the whole count takes less than
/// a GPU's start-up (adapter, device and shader compilation, a few hundred milliseconds).
///
/// A tuning constant: no example, it is only read.
pub const AUTO_GPU_MIN_N: usize = 18;

/// The GPU adapter `--device gpu` would use, if any (for tests and CI logs).
///
/// ```
/// // on a machine without a GPU (or a build without the gpu feature) this is None
/// let _ = nqueens::probe_gpu();
/// ```
pub fn probe_gpu() -> Option<String> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::Gpu::shared(true).ok().map(|g| g.describe())
    }
    #[cfg(not(feature = "gpu"))]
    {
        None
    }
}
