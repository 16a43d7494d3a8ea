//! Where the search runs: as asked for, the adapters a machine has, and the devices a count
//! opened (which ones is decided in [`crate::resolved`]; the GPUs are driven by `gpu`).

use crate::adapter::Adapter;
use crate::error::Error;

/// Where to count, as asked for.
///
/// ```
/// use nqueens::{count, CountOptions, DeviceChoice};
/// let cpu = CountOptions { device: DeviceChoice::Cpu, ..CountOptions::default() };
/// let c = count(9, &cpu).unwrap();
/// assert_eq!((c.total, c.device.as_str(), c.gpu_subtasks), (352, "cpu", 0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum DeviceChoice {
    /// The faster of the CPU and the GPUs, measured: where the quadrant engine applies to a
    /// count expected to last and a real GPU opens, a short race on its plan decides
    /// ([`crate::DeviceRace`]); a shard of many, and a count of seconds, take the CPU; where
    /// only the full-symmetry engine applies, every real GPU from N = 19.
    #[default]
    Auto,
    /// The CPU only.
    Cpu,
    /// The GPUs (an error without one), CPU threads sharing their work.
    ///
    /// A CPU-emulated adapter such as lavapipe is accepted when it is the only one.
    Gpu,
    /// The GPUs alone; CPU threads count only what no GPU takes.
    ///
    /// What no GPU takes: the mirror and plain frames with `--unique`. The GPU's speed alone,
    /// for measuring it.
    GpuOnly,
}

impl DeviceChoice {
    /// The name the command line and the JSON give it.
    ///
    /// ```
    /// assert_eq!(nqueens::DeviceChoice::GpuOnly.name(), "gpu-only");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            DeviceChoice::Auto => "auto",
            DeviceChoice::Cpu => "cpu",
            DeviceChoice::Gpu => "gpu",
            DeviceChoice::GpuOnly => "gpu-only",
        }
    }
}

/// The smallest board for which `auto` counts on a real GPU where the quadrant engine does
/// not apply (fundamental solutions, prefixes, a split depth, tables over the memory limit;
/// where it applies, a race decides), with the full-symmetry engine:
/// below it the count takes less than a GPU's start-up (adapter, device, two kernels
/// compiled: a few hundred milliseconds) or the quadrant engine on the CPU is as fast.
/// An estimate, not a measurement: from the CPU engines' times on 2 cores (quadrant N = 18
/// 3.6 s, N = 19 30 s on Zen 3, so about 0.5 s and 4 s on 16) against the GPU at the node
/// rate of the published CUDA solver (5e11 nodes/s on an H100: N = 18 0.03 s, N = 19 0.2 s
/// of d4 nodes, plus the start-up).
///
/// A tuning constant: no example, it is only read.
pub(crate) const AUTO_GPU_MIN_N: usize = 19;

/// The GPUs a run counts on.
#[derive(Clone, Debug)]
pub(crate) enum Devices {
    /// The CPU threads alone.
    Cpu,
    /// These GPUs, and whether the CPU threads share their subtasks.
    #[cfg(feature = "gpu")]
    Gpus {
        gpus: Vec<std::sync::Arc<crate::gpu::Device>>,
        share: bool,
    },
}

impl Devices {
    /// Whether the count runs on a GPU.
    pub fn has_gpu(&self) -> bool {
        !matches!(self, Devices::Cpu)
    }
}

/// The GPU adapter `--device gpu` would use first, if any (for tests and CI logs).
///
/// ```
/// // on a machine without a GPU (or a build without the gpu feature) this is None
/// let _ = nqueens::probe_gpu();
/// ```
pub fn probe_gpu() -> Option<String> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::open(None, true)
            .ok()
            .and_then(|g| g.first().map(|g| g.describe()))
    }
    #[cfg(not(feature = "gpu"))]
    {
        None
    }
}

/// The machine's GPU adapters, numbered for `--gpus` (none in a build without the gpu
/// feature); an error where an address-space limit (`ulimit -v`) leaves too little room to
/// load the drivers that list them.
///
/// ```
/// // every adapter has a name; lavapipe and WARP are software ones
/// for a in nqueens::gpu_adapters().unwrap() {
///     assert!(!a.name.is_empty());
/// }
/// ```
pub fn gpu_adapters() -> Result<Vec<Adapter>, Error> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::adapters()
    }
    #[cfg(not(feature = "gpu"))]
    {
        Ok(Vec::new())
    }
}
