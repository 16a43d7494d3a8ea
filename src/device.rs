//! Where the search runs: the CPU alone, or GPUs with the CPU beside them. The choice is
//! taken here, once per run, for both the plan (the quadrant engine runs on the CPU only) and
//! the executor.

use crate::error::Error;

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
    /// Every real GPU of the machine for boards of [`AUTO_GPU_MIN_N`] and more, when one
    /// opens (CPU threads share their work, and the engine is the full-symmetry one); the
    /// CPU otherwise.
    #[default]
    Auto,
    /// The CPU only.
    Cpu,
    /// Every GPU (a CPU-emulated adapter such as lavapipe is accepted when it is the only
    /// one), CPU threads sharing its work; an error without one.
    Gpu,
    /// Like [`DeviceChoice::Gpu`], but the CPU threads count only what no GPU takes (the
    /// mirror and plain frames with `--unique`): the GPU's speed alone, for measuring it.
    GpuOnly,
}

/// The smallest board for which `auto` counts on a real GPU, with the full-symmetry engine:
/// below it the count takes less than a GPU's start-up (adapter, device, two kernels
/// compiled: a few hundred milliseconds) or the quadrant engine on the CPU is as fast.
/// An estimate, not a measurement: from the CPU engines' times on 2 cores (quadrant N = 18
/// 3.6 s, N = 19 30 s on Zen 3, so about 0.5 s and 4 s on 16) against the GPU at the node
/// rate of the published CUDA solver (5e11 nodes/s on an H100: N = 18 0.03 s, N = 19 0.2 s
/// of d4 nodes, plus the start-up).
///
/// A tuning constant: no example, it is only read.
pub const AUTO_GPU_MIN_N: usize = 19;

/// The GPUs a run counts on, as decided once for its plan and executor.
#[derive(Clone, Debug)]
pub(crate) enum Devices {
    /// The CPU threads alone.
    Cpu,
    /// These GPUs, and whether the CPU threads share their subtasks.
    #[cfg(feature = "gpu")]
    Gpus {
        gpus: Vec<std::sync::Arc<crate::gpu::Gpu>>,
        share: bool,
    },
}

impl Devices {
    /// The devices a count of an `n`×`n` board asks for: `gpus` (adapter indices) picks
    /// adapters and implies a GPU; `auto` takes every real GPU from [`AUTO_GPU_MIN_N`] on.
    /// `cpu_only`: the engine runs on the CPU only (then `auto` is the CPU).
    pub fn choose(
        n: usize,
        choice: DeviceChoice,
        gpus: Option<&[usize]>,
        cpu_only: bool,
    ) -> Result<Devices, Error> {
        if gpus.is_some() && choice == DeviceChoice::Cpu {
            return Err(Error::GpusOnCpu);
        }
        let auto = choice == DeviceChoice::Auto && gpus.is_none();
        if choice == DeviceChoice::Cpu || (auto && (cpu_only || n < AUTO_GPU_MIN_N)) {
            return Ok(Devices::Cpu);
        }
        #[cfg(feature = "gpu")]
        {
            let share = choice != DeviceChoice::GpuOnly;
            if auto {
                let gpus = crate::gpu::open_real();
                return Ok(if gpus.is_empty() {
                    Devices::Cpu
                } else {
                    Devices::Gpus { gpus, share }
                });
            }
            let gpus = crate::gpu::open(gpus, true)?;
            Ok(Devices::Gpus { gpus, share })
        }
        #[cfg(not(feature = "gpu"))]
        Err(Error::Failed(
            "this nqueens was built without the gpu feature (cargo build --features gpu)".into(),
        ))
    }

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

/// One adapter of the machine, as `nqueens devices` lists it and `--gpus` numbers it.
///
/// ```
/// // every adapter has a name; lavapipe and WARP are software ones
/// for a in nqueens::gpu_adapters() {
///     assert!(!a.name.is_empty());
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adapter {
    /// Its number for `--gpus`.
    pub index: usize,
    /// Name and backend.
    pub name: String,
    /// Whether it runs on the CPU (lavapipe, WARP): `auto` never takes it.
    pub software: bool,
}

/// The machine's GPU adapters (none in a build without the gpu feature).
pub fn gpu_adapters() -> Vec<Adapter> {
    #[cfg(feature = "gpu")]
    {
        crate::gpu::adapters()
    }
    #[cfg(not(feature = "gpu"))]
    {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_the_cpu_for_small_boards_and_cpu_only_engines() {
        // no GPU is opened for these, whatever the machine has
        let cpu = |n, choice, cpu_only| {
            matches!(Devices::choose(n, choice, None, cpu_only), Ok(Devices::Cpu))
        };
        assert!(cpu(AUTO_GPU_MIN_N - 1, DeviceChoice::Auto, false));
        assert!(cpu(32, DeviceChoice::Auto, true));
        assert!(cpu(32, DeviceChoice::Cpu, false));
        assert_eq!(
            Devices::choose(8, DeviceChoice::Cpu, Some(&[0]), false).unwrap_err(),
            Error::GpusOnCpu
        );
    }
}
