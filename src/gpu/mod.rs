//! The GPU backend (wgpu: Vulkan, Metal, DX12): the adapters of the machine, an opened
//! device with its two kernels, and dispatches of items ([`items`]) to them.
//!
//! Subtasks are cut into items on the host; a dispatch uploads a batch of items, the WGSL
//! kernel in `count.wgsl` counts each item (persistent invocations, one depth-first search
//! per item at a time) and the counts come back per item, for the executor to fold into
//! their subtasks. Results are the CPU's, subtask by subtask (nodes included), so shards,
//! checkpoints and merge do not know which device counted what.

pub(crate) mod batch;
pub(crate) mod device;
pub(crate) mod items;
pub(crate) mod ledger;
mod pair_kernels;
mod pairs;
mod pass_times;
mod quarters;
pub use pairs::{PairFailure, PairQueue};
mod trust;
mod wire;

use crate::error::Error;
use crate::parallel::lock;
use crate::plan::Rows;
pub use device::adapters;
use device::kernel::{whole, Kernel};
use device::{room, Device, Wants};
pub(crate) use items::ItemCount;
use items::{Item, Kind};
use std::sync::{mpsc, Arc, Mutex, OnceLock};
use wire::{Frame, RowParams};

/// Invocations per workgroup (`WG` in the shader): a multiple of every subgroup width
/// (NVIDIA 32, AMD 32 or 64, lavapipe 8).
pub(crate) const WORKGROUP: usize = 64;
/// The most workgroups of a dispatch on a GPU, and of a pair count's on every adapter.
const MOST_WORKGROUPS: usize = 4096;
/// The invocations a pair count's dispatch runs at most ([`pairs`]), on every adapter, a
/// CPU-emulated one too: llvmpipe's compute pool hands each of its threads an equal run of
/// a dispatch's workgroups up front, so there a batch must hold many sieves (else one half
/// costs more than the other, and a thread idles while the other finishes) and a workgroup
/// one tile of it (so that a thread's tiles lie together and share their sieves' tables in
/// its caches) (`docs/design.md`, "Batches").
pub(crate) const PAIR_LANES: usize = MOST_WORKGROUPS * WORKGROUP;
/// The node count at which the kernel gives an item up to the CPU: past it a 32-bit count
/// could wrap before the kernel looks again (`params.limit` in the shader).
pub(crate) const DROPPED: u32 = 0x8000_0000;

/// Bytes of workgroup memory a kernel for items of `rows` rows takes, per workgroup: per
/// lane, a stack entry of four words for every row of an item but the last (one spare: the
/// kernel stores above the top whatever it does), the mask of every row but the first, and
/// for tie frames the queen of every row but the last (the shader's `STACK`, `MASKS`,
/// `BOARD`). Plain kernels take 20 bytes a lane a row, tie kernels 24.
pub(crate) const fn workgroup_bytes(kind: Kind, rows: usize) -> usize {
    let board = if matches!(kind, Kind::Ties) {
        rows - 1
    } else {
        1
    };
    WORKGROUP * 4 * (4 * (rows - 1) + (rows - 1) + board)
}

/// The most rows a kernel's items may have on a device with `limit` bytes of workgroup
/// memory: every device has 16 KiB (13 and 11 rows), desktop GPUs 32 to 64 KiB (16).
fn kernel_rows(kind: Kind, limit: u32) -> usize {
    (2..=items::MAX_ITEM_ROWS)
        .rev()
        .find(|&rows| workgroup_bytes(kind, rows) <= limit as usize)
        .expect("two rows fit any device")
}

/// An opened device on one adapter, with its two kernels compiled.
pub struct Gpu {
    device: Device,
    /// Plain and tie-frame kernels, by [`Kind`].
    kernels: [Kernel; 2],
    /// The most rows each kernel's items may have (its workgroup memory is sized for them).
    rows: [usize; 2],
    /// The quadrant engine's pair kernel ([`pairs`]); none where the adapter has no 64-bit
    /// integers in shaders, which it reads its tables in.
    pairs: Option<pair_kernels::Kernels>,
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

/// Which device of which adapter: (adapter, how many times it came earlier in one list).
type DeviceKey = (usize, usize);

/// Devices this process opened.
static OPENED: Mutex<Vec<(DeviceKey, Arc<Gpu>)>> = Mutex::new(Vec::new());

/// The GPUs a run asked for: `indices` of [`adapters`] (an index may repeat: each time opens
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
    let known = adapters()?;
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

/// The shader of a kernel for items of `rows` rows: `count.wgsl` with its constants filled
/// in, and for tie frames the sections of `ties.wgsl` in their places.
fn shader(kind: Kind, rows: usize) -> String {
    let ties = kind == Kind::Ties;
    let section = |name: &str| -> String {
        if !ties {
            return String::new();
        }
        let source = include_str!("ties.wgsl");
        let marker = format!("//# {name}\n");
        let from = source.find(&marker).expect("a section of ties.wgsl") + marker.len();
        let body = &source[from..];
        body[..body.find("//# ").unwrap_or(body.len())].to_string()
    };
    let count = if ties {
        section("COUNT")
    } else {
        "counts.x += select(0u, 1u, child_last && child_free != 0u);".into()
    };
    [
        wire::ROW_PARAMS_WGSL,
        wire::FRAME_WGSL,
        include_str!("count.wgsl"),
    ]
    .concat()
    .replace("{WG}", &WORKGROUP.to_string())
    .replace("{ROWS}", &rows.to_string())
    .replace("{BOARD}", if ties { "ROWS - 1u" } else { "1u" })
    .replace("{TIE_BINDINGS}", &section("BINDINGS"))
    .replace("{TIE_FUNCTIONS}", &section("FUNCTIONS"))
    .replace("{TIE_COUNT}", &count)
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
        let rows = [Kind::Plain, Kind::Ties].map(|kind| kernel_rows(kind, device.workgroup_bytes));
        let kernel =
            |kind: Kind| Kernel::new(&device.device, "count", &shader(kind, rows[kind as usize]));
        Ok(Gpu {
            kernels: [kernel(Kind::Plain), kernel(Kind::Ties)],
            rows,
            pairs: (device.int64).then(|| pair_kernels::kernels(&device.device, WORKGROUP)),
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
        let flight = self.launch_with(plan.n(), &frames, [&batch[0], &batch[1]], DROPPED, few)?;
        let counts = flight.wait(self)?;
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

    /// A queue of pair-count batches on this GPU ([`pairs`]) for one thread: each comes
    /// back with its `T`. Only for a GPU that [`Gpu::trust_pairs`] trusted.
    pub fn pair_queue<T>(&self) -> PairQueue<'_, T> {
        PairQueue::new(pairs::Device {
            device: &self.device.device,
            queue: &self.device.queue,
            kernels: self
                .pairs
                .as_ref()
                .expect("a GPU trusted with pairs has the kernel"),
            most_workgroups: MOST_WORKGROUPS,
            workgroup: WORKGROUP,
            limit: self.device.buffer_limit,
            shares_memory: self.device.shares_memory,
            quarters: &self.quarters,
            pass_clock: self.device.pass_clock(),
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
    /// (over a bus: [`pairs::Device::takes`]), from the whole quarter tables it holds.
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
        self.rows[kind as usize]
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

    /// The workgroups a dispatch of `items` runs: enough persistent invocations to fill the
    /// GPU (about a thousand a multiprocessor with this kernel's workgroup memory), a few
    /// per thread on a CPU-emulated one.
    fn workgroups(&self, items: usize) -> u32 {
        items.div_ceil(WORKGROUP).clamp(1, self.most_workgroups()) as u32
    }

    fn most_workgroups(&self) -> usize {
        if self.is_software() {
            64
        } else {
            MOST_WORKGROUPS
        }
    }

    /// The invocations a row search's dispatch runs at most: the lanes a dispatch of fewer
    /// items leaves idle (a pair count's: [`PAIR_LANES`]).
    pub fn lanes(&self) -> usize {
        self.most_workgroups() * WORKGROUP
    }

    /// Uploads the frames of `plan` (what every item's kernel reads its row masks from).
    pub fn frames(&self, plan: &Rows) -> Result<wgpu::Buffer, Error> {
        let frames: Vec<Frame> = (plan.frames().iter())
            .map(|frame| Frame {
                allowed: frame.masks.allowed.map(|m| m as u32),
                must_row: frame.masks.must_row as u32,
                must: frame.masks.must as u32,
            })
            .collect();
        self.buffer("frames", wire::words(&frames), wgpu::BufferUsages::STORAGE)
    }

    /// Starts counting `batch` (items of each kind) of a plan whose frames are `frames`,
    /// giving up items whose node count reaches `drop_at` (at most [`DROPPED`]);
    /// [`Flight::wait`] gives the counts.
    pub fn launch(
        &self,
        n: usize,
        frames: &wgpu::Buffer,
        batch: [&[Item]; 2],
        drop_at: u32,
    ) -> Result<Flight, Error> {
        self.launch_with(n, frames, batch, drop_at, |items| self.workgroups(items))
    }

    /// [`Gpu::launch`] on the workgroups `workgroups` gives for a kind's items (fewer than
    /// the items need: each invocation counts several in turn).
    fn launch_with(
        &self,
        n: usize,
        frames: &wgpu::Buffer,
        batch: [&[Item]; 2],
        drop_at: u32,
        workgroups: impl Fn(usize) -> u32,
    ) -> Result<Flight, Error> {
        debug_assert!(drop_at <= DROPPED);
        let mut encoder =
            (self.device.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("count"),
            });
        let mut readbacks = Vec::new();
        for (kind, items) in [Kind::Plain, Kind::Ties].into_iter().zip(batch) {
            if items.is_empty() {
                readbacks.push(None);
                continue;
            }
            let full = crate::board::full_mask(n) as u32;
            let params = RowParams {
                n: n as u32,
                count: items.len() as u32,
                full,
                limit: drop_at,
            };
            let params = self.buffer(
                "params",
                wire::words(&[params]),
                wgpu::BufferUsages::UNIFORM,
            )?;
            let words = |f: &dyn Fn(&Item) -> &[u32]| -> Vec<u32> {
                items.iter().flat_map(|i| f(i).iter().copied()).collect()
            };
            let state = self.buffer("items", &words(&|i| &i.state), wgpu::BufferUsages::STORAGE)?;
            let rows = self.buffer(
                "item rows",
                &words(&|i| std::slice::from_ref(&i.at)),
                wgpu::BufferUsages::STORAGE,
            )?;
            let bytes = (items.len() * 16) as u64;
            let results = self.empty_buffer(
                "results",
                bytes,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            )?;
            let readback = self.empty_buffer(
                "readback",
                bytes,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )?;
            let next = self.buffer("next item", &[0], wgpu::BufferUsages::STORAGE)?;
            let prefix = match kind {
                Kind::Ties => Some(self.buffer(
                    "item prefixes",
                    &words(&|i| &i.prefix),
                    wgpu::BufferUsages::STORAGE,
                )?),
                Kind::Plain => None,
            };
            let kernel = &self.kernels[kind as usize];
            let bound = [
                ("params", whole(&params)),
                ("frames", whole(frames)),
                ("items", whole(&state)),
                ("item_rows", whole(&rows)),
                ("results", whole(&results)),
                ("next_item", whole(&next)),
            ];
            let prefix = prefix.as_ref().map(|prefix| ("item_prefix", whole(prefix)));
            let bind = kernel.bind(&self.device.device, bound.into_iter().chain(prefix));
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("count"),
                    timestamp_writes: None,
                });
                pass.set_pipeline(kernel.pipeline());
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(workgroups(items.len()), 1, 1);
            }
            encoder.copy_buffer_to_buffer(&results, 0, &readback, 0, bytes);
            readbacks.push(Some(readback));
        }
        let submitted = self.device.queue.submit([encoder.finish()]);
        let (sent, mapped) = mpsc::channel();
        for (kind, readback) in readbacks.iter().enumerate() {
            if let Some(readback) = readback {
                let sent = sent.clone();
                readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                    let _ = sent.send((kind, r));
                });
            }
        }
        Ok(Flight {
            submitted,
            readbacks,
            mapped,
            drop_at,
        })
    }

    fn buffer(
        &self,
        label: &str,
        words: &[u32],
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, Error> {
        self.device.buffer(label, words, usage)
    }

    fn empty_buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, Error> {
        self.device.empty_buffer(label, size, usage)
    }
}

/// A dispatch on its way: its results, once the GPU has them.
pub struct Flight {
    submitted: wgpu::SubmissionIndex,
    readbacks: Vec<Option<wgpu::Buffer>>,
    mapped: mpsc::Receiver<(usize, Result<(), wgpu::BufferAsyncError>)>,
    drop_at: u32,
}

impl Flight {
    /// Waits for the dispatch and gives each item's count, per kind, in the order of the
    /// batch.
    pub fn wait(self, gpu: &Gpu) -> Result<[Vec<ItemCount>; 2], Error> {
        let lost = |e: &dyn std::fmt::Display| gpu.device.failed(e);
        gpu.device
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(self.submitted),
                timeout: None,
            })
            .map_err(|e| lost(&e))?;
        gpu.check()?;
        let mut counts = [Vec::new(), Vec::new()];
        for _ in self.readbacks.iter().flatten() {
            let (kind, mapped) = self.mapped.recv().map_err(|e| lost(&e))?;
            mapped.map_err(|e| lost(&e))?;
            let readback = self.readbacks[kind].as_ref().expect("mapped above");
            let view = readback
                .slice(..)
                .get_mapped_range()
                .map_err(|e| lost(&e))?;
            counts[kind] = view
                .chunks_exact(16)
                .map(|b| {
                    let w: [u32; 4] = std::array::from_fn(|i| {
                        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
                    });
                    (w[3] < self.drop_at).then_some(w)
                })
                .collect();
            drop(view);
            readback.unmap();
        }
        Ok(counts)
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
