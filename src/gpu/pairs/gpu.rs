//! The pair count on one device: what the device keeps for it once a process (the kernels,
//! their known-answer verdict, the quarter tables it holds) and each thread's queue of
//! batches on it.

use crate::error::Error;
use crate::gpu::device::{Device, WORKGROUP};
use crate::gpu::opened::{OnDevice, PerDevice};
use crate::gpu::pairs::batch::{Sieved, Sums};
use crate::gpu::pairs::kernels::{kernels, Kernels};
use crate::gpu::pairs::quarters::Holding;
use crate::gpu::pairs::queue::{self, PairFailure, PairQueue};
use crate::gpu::trust::Verdict;
use std::sync::{Arc, Mutex};

/// What a device keeps for the pair count.
pub(crate) struct Kept {
    /// None where its shaders have no 64-bit integers, which the tables are read in.
    kernels: Option<Kernels>,
    /// What the known-answer check found ([`PairGpu::trust`]).
    trusted: Verdict,
    quarters: Holding,
}

static KEPT: PerDevice<Kept> = PerDevice::new();

/// The pair count on one device.
pub(crate) type PairGpu = OnDevice<Kept>;

impl PairGpu {
    /// The pair count on `device`, its kernels compiled the first time.
    pub fn on(device: &Arc<Device>) -> PairGpu {
        KEPT.on(device, |device| Kept {
            kernels: (device.int64).then(|| kernels(&device.device, WORKGROUP)),
            trusted: Verdict::default(),
            quarters: Mutex::default(),
        })
    }

    /// Runs `check`, the pair kernel's known-answer check, once per process and device
    /// ([`Verdict`]); its verdict, then and later, or an error where the adapter cannot
    /// run the pair kernel at all.
    pub fn trust(
        &self,
        check: impl FnOnce() -> Result<Result<(), String>, Error>,
    ) -> Result<(), Error> {
        if self.kept.kernels.is_none() {
            return Err(Error::Failed(format!(
                "the GPU {} cannot count the quadrant engine's pairs: its driver offers no 64-bit integers in shaders (SHADER_INT64)",
                self.device.identify()
            )));
        }
        self.kept.trusted.on(&self.device, check)
    }

    /// A queue of pair-count batches on this device ([`PairQueue`]) for one thread: each
    /// comes back with its `T`. Only for a device [`PairGpu::trust`] trusted.
    pub fn queue<T>(&self) -> PairQueue<'_, T> {
        PairQueue::new(queue::Device {
            on: &self.device,
            kernels: (self.kept.kernels.as_ref()).expect("a trusted device has the kernels"),
            quarters: &self.kept.quarters,
        })
    }

    /// `e`, a failure of this device's pair count: a buffer's refusal as it is, else the
    /// first error the device reported, or `e` in the device's words.
    pub fn failure(&self, e: PairFailure) -> Error {
        match e {
            PairFailure::Room(refused) => refused,
            PairFailure::Device(e) => {
                (self.device.check().err()).unwrap_or_else(|| self.device.failed(&e))
            }
        }
    }
}

/// The pair count on one device as its executor drives it: a [`PairGpu`], or in the tests
/// a fake one on it (that lies, or sees what it counts).
pub(crate) trait PairCounter: Send + Sync {
    /// The device and what it keeps for the pair count.
    fn pair_gpu(&self) -> &PairGpu;

    /// The sums of batch `dispatch` (the run's dispatches numbered), its sieves `sieves`,
    /// as the device gave them: an error where the device reported one.
    fn sums<'c>(
        &self,
        dispatch: u64,
        sieves: &[Sieved],
        sums: Sums<'c>,
    ) -> Result<Sums<'c>, Error> {
        let _ = (dispatch, sieves);
        self.pair_gpu().device.check().map(|()| sums)
    }

    /// Whether the other side's words are sent narrow where they fit (as on every board a
    /// test counts: a test sends them wide).
    #[cfg(test)]
    fn narrow_words(&self) -> bool {
        true
    }
}

impl PairCounter for PairGpu {
    fn pair_gpu(&self) -> &PairGpu {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_without_64_bit_integers_refuses_the_pairs_and_still_counts_items() {
        let Some(device) = crate::gpu::testing::gpu_without(wgpu::Features::SHADER_INT64) else {
            return;
        };
        let refusal = PairGpu::on(&device).trust(|| unreachable!("no check without the kernel"));
        let refusal = refusal.expect_err("refused").to_string();
        assert!(refusal.contains("SHADER_INT64"), "{refusal}");
        // the row search needs no 64-bit integers: the device keeps its known-answer check
        crate::gpu::rows::trust::known_answer(&device).expect("the row search counts right");
    }
}
