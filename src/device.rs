//! Where the search runs: the CPU alone, or a GPU with the CPU beside it.

use crate::error::Error;

/// Where to count, as asked for.
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
pub const AUTO_GPU_MIN_N: usize = 18;

/// A device opened for a run.
#[derive(Debug)]
pub(crate) enum Device {
    /// Rayon threads and the CPU kernels.
    Cpu,
    /// A GPU; `share`: CPU threads also take the subtasks it could count.
    #[cfg(feature = "gpu")]
    Gpu {
        gpu: std::sync::Arc<crate::gpu::Gpu>,
        share: bool,
    },
}

impl Device {
    /// Opens what `choice` asks for, for a board of side `n`.
    pub(crate) fn open(choice: DeviceChoice, n: usize) -> Result<Device, Error> {
        match choice {
            DeviceChoice::Cpu => Ok(Device::Cpu),
            #[cfg(feature = "gpu")]
            DeviceChoice::Gpu => Ok(Device::Gpu {
                gpu: crate::gpu::Gpu::shared(true)?,
                share: false,
            }),
            #[cfg(not(feature = "gpu"))]
            DeviceChoice::Gpu => Err(Error::Failed(
                "this nqueens was built without the gpu feature (cargo build --features gpu)"
                    .into(),
            )),
            #[cfg(feature = "gpu")]
            DeviceChoice::Auto if n >= AUTO_GPU_MIN_N => Ok(crate::gpu::Gpu::shared(false)
                .map_or(Device::Cpu, |gpu| Device::Gpu { gpu, share: true })),
            DeviceChoice::Auto => {
                let _ = n;
                Ok(Device::Cpu)
            }
        }
    }

    /// `cpu`, or the adapter and its backend.
    pub(crate) fn describe(&self) -> String {
        match self {
            Device::Cpu => "cpu".into(),
            #[cfg(feature = "gpu")]
            Device::Gpu { gpu, .. } => gpu.describe(),
        }
    }
}

/// The GPU adapter `--device gpu` would use, if any (for tests and CI logs).
///
/// ```
/// // on a machine without a GPU (or a build without the gpu feature) this is None
/// let _ = nqueens::device::probe_gpu();
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
