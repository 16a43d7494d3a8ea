//! Trust in a GPU, one rule for both backends: a device counts a known answer before it is
//! used (once a process: [`Verdict`]), its counts are spot-checked against the CPU's while
//! it counts, and at the first disagreement it is dropped ([`dropped`]) and what it
//! counted since its last passing check is counted again on the CPU. Each backend says
//! what its known answer is, what it spot-checks and what it holds until a check passes.

use crate::error::Error;
use crate::gpu::device::Device;
use std::sync::OnceLock;

/// A known-answer check's verdict on one device, found once a process.
#[derive(Default)]
pub(crate) struct Verdict(OnceLock<Result<(), String>>);

impl Verdict {
    /// The verdict on `device`: `check`'s (what differs, if anything does), run the first
    /// time. A check that could not run (no room for its buffers) is no verdict: its
    /// error is given, and the check runs again next time.
    pub fn on(
        &self,
        device: &Device,
        check: impl FnOnce() -> Result<Result<(), String>, Error>,
    ) -> Result<(), Error> {
        let verdict = match self.0.get() {
            Some(verdict) => verdict,
            None => {
                let verdict = check()?;
                self.0.get_or_init(|| verdict)
            }
        };
        verdict.clone().map_err(|why| miscounted(device, &why))
    }
}

/// The refusal of `device`, which miscounted a known answer (`why`: what differed).
pub(crate) fn miscounted(device: &Device, why: &str) -> Error {
    Error::Failed(format!(
        "the GPU {} miscounted a known answer: {why}; it is not used",
        device.identify()
    ))
}

/// What a run notes of `device`, dropped when it disagreed with `what`, and `recounted`
/// (then counted on the CPU).
pub(crate) fn dropped(device: &Device, what: &str, recounted: &str) -> String {
    format!(
        "the GPU {} disagreed with {what}: it was dropped, and {recounted} counted on the CPU",
        device.identify()
    )
}
