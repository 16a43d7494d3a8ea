//! The GPUs this process opened: each a device ([`device`](crate::gpu::device)) with both
//! backends' kernels, opened once a process, trusted once (the row search's known answer at
//! open, the pair count's before it counts a unit), and shared by every later run.

use crate::error::Error;
use crate::execute::contract::Facts;
use crate::gpu::device::{self, room, Device, Wants, WORKGROUP};
use crate::gpu::pairs::kernels::{kernels, Kernels as PairKernels};
use crate::gpu::pairs::quarters;
use crate::gpu::pairs::queue::{Device as PairDevice, PairFailure, PairQueue};
use crate::gpu::rows::dispatch::{self, Flight, RowKernels, DROPPED};
use crate::gpu::rows::items::{Item, ItemCount, Kind};
use crate::gpu::rows::trust;
use crate::parallel::{lock, Workers};
use crate::plan::Rows;
use crate::subtask::Kernels;
use std::sync::{Arc, Mutex, OnceLock};

/// An opened device on one adapter, with both backends' kernels compiled.
pub struct Gpu {
    device: Device,
    /// The row search's kernels.
    rows: RowKernels,
    /// The quadrant engine's pair kernels ([`PairQueue`]); none where the adapter has no
    /// 64-bit integers in shaders, which it reads its tables in.
    pairs: Option<PairKernels>,
    /// What the pair kernel's known-answer check found, once per process ([`Gpu::trust_pairs`]).
    pairs_trusted: OnceLock<Result<(), String>>,
    /// The quarter tables it holds, to join the other side of sieves from.
    quarters: quarters::Holding,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// What an executor counting on `gpus` and the CPU threads `workers` (on `kernels`) reports:
/// the GPUs named `name`, `2 x name`, or joined by ` + `, and the `notes` it kept.
pub(crate) fn facts(
    (kernels, workers): (Kernels, &Workers),
    gpus: &[Arc<Gpu>],
    notes: &Mutex<Vec<String>>,
) -> Facts {
    let names: Vec<String> = gpus.iter().map(|g| g.describe()).collect();
    let device = match names.as_slice() {
        [one] => one.clone(),
        [first, ..] if names.iter().all(|n| n == first) => format!("{} x {first}", names.len()),
        _ => names.join(" + "),
    };
    Facts {
        kernel: kernels.reported(),
        threads: workers.count(),
        device,
        notes: lock(notes).clone(),
    }
}

/// Which device of which adapter: (adapter, how many times it came earlier in one list).
type DeviceKey = (usize, usize);

/// Devices this process opened.
static OPENED: Mutex<Vec<(DeviceKey, Arc<Gpu>)>> = Mutex::new(Vec::new());

/// The GPUs a run asked for: `indices` of [`adapters`](device::adapters) (an index may repeat: each time opens
/// a device of its own on that adapter), or, without indices, every adapter that is not a
/// software one, else (only when `allow_software`) the first software one.
///
/// Devices are opened once per process and shared by every later run: opening a GPU again
/// for each count fails on real drivers (after a few dozen opens in one process the Vulkan
/// loader reports no driver, and opens from several threads at once crash it).
pub fn open(indices: Option<&[usize]>, allow_software: bool) -> Result<Vec<Arc<Gpu>>, Error> {
    let mut opened = lock(&OPENED);
    if opened.is_empty() {
        // (listing the adapters alone can run out of address space)
        refusing_for_auto(room::within(
            "listing and opening the GPU ",
            room::TO_LIST + room::to_open(),
            || (),
        ))?;
    }
    let known = device::adapters()?;
    let chosen: Vec<usize> = match indices {
        Some(list) => {
            if let Some(&bad) = list.iter().find(|&&i| i >= known.len()) {
                return Err(Error::NoSuchGpu {
                    index: bad,
                    found: known.len(),
                });
            }
            list.to_vec()
        }
        None => {
            let real: Vec<usize> = known
                .iter()
                .filter(|a| !a.software)
                .map(|a| a.index)
                .collect();
            if !real.is_empty() {
                real
            } else if let Some(soft) = known.iter().find(|a| a.software) {
                if !allow_software {
                    return Err(Error::Failed(format!(
                        "no usable GPU: the only adapter is {}, which runs on the CPU",
                        soft.name
                    )));
                }
                vec![soft.index]
            } else {
                return Err(Error::Failed(
                    "no usable GPU: looked for a Vulkan, Metal or DX12 adapter with compute shaders"
                        .into(),
                ));
            }
        }
    };
    let mut gpus = Vec::new();
    for (k, &index) in chosen.iter().enumerate() {
        let key = (index, chosen[..k].iter().filter(|&&i| i == index).count());
        let gpu = match opened.iter().find(|(at, _)| *at == key) {
            Some((_, gpu)) => gpu.clone(),
            None => {
                refusing_for_auto(room::within("opening the GPU ", room::to_open(), || ()))?;
                let gpu = Gpu::open(device::adapter(index)?)?;
                // once per device and process: a device that fails is not kept, and `auto`
                // (which goes on without it) says why
                refusing_for_auto(gpu.earn_trust())?;
                let gpu = Arc::new(gpu);
                opened.push((key, gpu.clone()));
                gpu
            }
        };
        gpus.push(gpu);
    }
    Ok(gpus)
}

/// Why the last GPU refused by its known-answer check, or for want of address space, was
/// refused, if one was.
static REFUSED: Mutex<Option<String>> = Mutex::new(None);

/// `result`, its refusal kept for `auto`'s note ([`refused`]).
fn refusing_for_auto<T>(result: Result<T, Error>) -> Result<T, Error> {
    if let Err(e) = &result {
        *lock(&REFUSED) = Some(e.to_string());
    }
    result
}

/// Why a GPU of this process was refused by its known-answer check ([`trust`]) or for want
/// of address space ([`room`]), if one was: what `--device auto`, which goes on without it,
/// says.
pub fn refused() -> Option<String> {
    lock(&REFUSED).clone()
}

/// The real GPUs of the machine, opened (none when there is no real one, or it fails to
/// open): what `--device auto` counts on.
pub fn open_real() -> Vec<Arc<Gpu>> {
    if !device::may_have_real_gpu() {
        return Vec::new();
    }
    open(None, false).unwrap_or_default()
}

impl Gpu {
    /// Opens a device on `adapter` and compiles the kernels.
    fn open(adapter: &wgpu::Adapter) -> Result<Gpu, Error> {
        let mut features = adapter.features();
        if crate::stages::over_a_bus() {
            // (its buffers then copied as a discrete GPU's are, and it is sent words)
            features.remove(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);
        }
        Gpu::open_with(adapter, features)
    }

    /// [`Gpu::open`] using only those of `features` the kernels take.
    fn open_with(adapter: &wgpu::Adapter, features: wgpu::Features) -> Result<Gpu, Error> {
        let wants = Wants {
            features,
            // each pass of the pair count timed on the GPU (`pass_times`)
            timed: crate::stages::KEPT,
        };
        let device = Device::open(adapter, wants)?;
        Ok(Gpu {
            rows: RowKernels::new(&device),
            pairs: (device.int64).then(|| kernels(&device.device, WORKGROUP)),
            pairs_trusted: OnceLock::new(),
            quarters: Mutex::default(),
            device,
        })
    }

    /// The known-answer check ([`trust`]): the check's items counted here, each invocation
    /// taking several in turn, and by the CPU; an error naming the adapter and its driver
    /// where any item's count differs.
    fn earn_trust(&self) -> Result<(), Error> {
        let (plan, batch) = trust::items(|kind| self.item_rows(kind))?;
        let frames = self.frames(plan.rows().expect("a row plan"))?;
        let per_workgroup = WORKGROUP * trust::ITEMS_PER_INVOCATION;
        let few = |items: usize| items.div_ceil(per_workgroup).max(1) as u32;
        let items = [&batch[0][..], &batch[1][..]];
        let flight =
            (self.rows).launch_with(&self.device, plan.n(), &frames, items, DROPPED, few)?;
        let counts = self.wait(flight)?;
        match trust::differing(&plan, &batch, &counts) {
            (0, _) => Ok(()),
            (differ, items) => Err(Error::Failed(format!(
                "the GPU {} miscounted a known answer: {differ} of {items} items of N = {} differ from the CPU's count; it is not used",
                self.identify(),
                trust::CHECK_N
            ))),
        }
    }

    /// Runs `check`, the pair kernel's known-answer check, once per process and device;
    /// its verdict, then and later: an error naming the adapter and its driver where it
    /// found a difference, or where the adapter cannot run the pair kernel at all.
    /// A check that could not run (no room for its buffers) is no verdict: its error is
    /// given, and the check runs again next time.
    pub fn trust_pairs(
        &self,
        check: impl FnOnce() -> Result<Result<(), String>, Error>,
    ) -> Result<(), Error> {
        if self.pairs.is_none() {
            return Err(Error::Failed(format!(
                "the GPU {} cannot count the quadrant engine's pairs: its driver offers no 64-bit integers in shaders (SHADER_INT64)",
                self.identify()
            )));
        }
        let verdict = match self.pairs_trusted.get() {
            Some(verdict) => verdict,
            None => {
                let verdict = check()?;
                self.pairs_trusted.get_or_init(|| verdict)
            }
        };
        verdict.clone().map_err(|why| {
            Error::Failed(format!(
                "the GPU {} miscounted a known answer: {why}; it is not used",
                self.identify()
            ))
        })
    }

    /// A queue of pair-count batches on this GPU ([`PairQueue`]) for one thread: each comes
    /// back with its `T`. Only for a GPU that [`Gpu::trust_pairs`] trusted.
    pub fn pair_queue<T>(&self) -> PairQueue<'_, T> {
        PairQueue::new(PairDevice {
            on: &self.device,
            kernels: (self.pairs.as_ref()).expect("a GPU trusted with pairs has the kernel"),
            quarters: &self.quarters,
        })
    }

    /// `e`, a failure of this GPU's pair count: a buffer's refusal as it is, else the first
    /// error the device reported, or `e` in the device's words.
    pub fn pair_failure(&self, e: PairFailure) -> Error {
        match e {
            PairFailure::Room(refused) => refused,
            PairFailure::Device(e) => self.check().err().unwrap_or_else(|| self.device.failed(&e)),
        }
    }

    /// Whether the quadrant engine's units have their other halves joined on this device
    /// (over a bus: [`PairDevice::takes`]), from the whole quarter tables it holds.
    pub fn joins_halves(&self) -> bool {
        !self.device.shares_memory
    }

    /// The most bytes a buffer of this device may hold and bind.
    pub fn buffer_limit(&self) -> u64 {
        self.device.buffer_limit
    }

    /// Fails with the first error the device reported, if any.
    pub fn check(&self) -> Result<(), Error> {
        self.device.check()
    }

    /// The adapter and its driver, as a refusal names them.
    pub fn identify(&self) -> String {
        self.device.identify()
    }

    /// The adapter and its backend, as JSON's `device` reports them.
    pub fn describe(&self) -> String {
        self.device.describe()
    }

    /// The most rows an item of `kind` may leave this device's kernel.
    pub fn item_rows(&self, kind: Kind) -> usize {
        self.rows.item_rows(kind)
    }

    /// The adapter's facts, for the tests that open it again.
    #[cfg(test)]
    pub(crate) fn info(&self) -> &wgpu::AdapterInfo {
        &self.device.info
    }

    /// Whether the adapter runs on the CPU (lavapipe, WARP).
    pub fn is_software(&self) -> bool {
        self.device.is_software()
    }

    /// The invocations a row search's dispatch runs at most: the lanes a dispatch of fewer
    /// items leaves idle (a pair count's: [`PAIR_LANES`](crate::gpu::pairs::queue::PAIR_LANES)).
    pub fn lanes(&self) -> usize {
        dispatch::lanes(&self.device)
    }

    /// Uploads the frames of `plan` (what every item's kernel reads its row masks from).
    pub fn frames(&self, plan: &Rows) -> Result<wgpu::Buffer, Error> {
        dispatch::frames(&self.device, plan)
    }

    /// Starts counting `batch` (items of each kind) of a plan whose frames are `frames`,
    /// giving up items whose node count reaches `drop_at` (at most [`DROPPED`]);
    /// [`Gpu::wait`] gives the counts.
    pub fn launch(
        &self,
        n: usize,
        frames: &wgpu::Buffer,
        batch: [&[Item]; 2],
        drop_at: u32,
    ) -> Result<Flight, Error> {
        let workgroups = |items| dispatch::workgroups(&self.device, items);
        (self.rows).launch_with(&self.device, n, frames, batch, drop_at, workgroups)
    }

    /// Waits for `flight` and gives each item's count, per kind, in the order of its batch.
    pub fn wait(&self, flight: Flight) -> Result<[Vec<ItemCount>; 2], Error> {
        flight.wait(&self.device)
    }
}

/// The GPUs of the test machine, or `None` (then a test is skipped, unless CI asks for a GPU
/// with NQUEENS_REQUIRE_GPU).
#[cfg(test)]
pub(crate) fn test_gpus() -> Option<Vec<Arc<Gpu>>> {
    let found = open(None, true).ok();
    assert!(
        found.is_some()
            || crate::environment::set(|name| std::env::var(name).ok(), "NQUEENS_REQUIRE_GPU")
                .is_none(),
        "NQUEENS_REQUIRE_GPU is set but no GPU adapter is usable"
    );
    found
}

/// A device of its own on the test machine's GPU ([`test_gpus`]) without `features`, or
/// `None`.
#[cfg(test)]
pub(crate) fn test_gpu_without(features: wgpu::Features) -> Option<Gpu> {
    let gpus = test_gpus()?;
    let adapter = device::listed_adapter(gpus[0].info());
    Some(Gpu::open_with(adapter, adapter.features() - features).expect("the device opens"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_adapter_without_64_bit_integers_refuses_the_pairs_and_still_counts_items() {
        let Some(gpu) = test_gpu_without(wgpu::Features::SHADER_INT64) else {
            return;
        };
        let refusal = gpu.trust_pairs(|| unreachable!("no check without the kernel"));
        let refusal = refusal.expect_err("refused").to_string();
        assert!(refusal.contains("SHADER_INT64"), "{refusal}");
        // the row search needs no 64-bit integers: the device keeps its known-answer check
        gpu.earn_trust().expect("the row search counts right");
    }
}
