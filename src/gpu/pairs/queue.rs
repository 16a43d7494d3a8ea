//! The quadrant engine's pair count on a GPU: a batch of loaded sieves' lookup tables, or
//! their stored patterns' dense words, reaches and the other side's dense words uploaded
//! (over a bus, where they are narrow, its patterns as they came instead, which the GPU
//! signs, counts by signature and places first: `sign.wgsl`, `places.wgsl`);
//! where it was sent words, the GPU puts the other side in signature order (`order.wgsl`),
//! groups the stored words (`group.wgsl`) and makes the tables (`tables.wgsl`: a workgroup
//! a block transposes them into slices and fills the lookups); then an invocation a
//! pattern of the other side (in turn, where they are more than the invocations) counts
//! its clashes (`pairs.wgsl`) and each lane adds them into their sieves' sums, which are
//! read back with the clashes of the patterns the host spot-checks ([`Sums`]): a few words
//! a sieve, not one a pattern, which the host would have to receive and add.
//!
//! What is sent is the device's: where it shares the host's memory the host's tables are
//! bound as they lie (there the GPU's work is the host's cores' anyway), and over a bus the
//! dense words go, about a sixth of the tables' bytes, and the host makes no transposes
//! (figures: docs/benchmarks.md, "The GPU code's choices").
//!
//! A thread's batches go through its [`PairQueue`]: [`SLOTS`] sets of buffers kept from
//! batch to batch (grown when a batch needs more), one counting on the GPU while the thread
//! builds the next batch in the other, so that no batch allocates memory or first touches
//! its pages. A slot's uploads are mapped while it is not on the GPU: each sieve's tables or
//! stored words, and its other side's patterns, are written straight into the batch's
//! uploads as it is added (each with room for the last batch's and a quarter), the other
//! word lists when the batch is sent.

use crate::error::Error;
use crate::gpu::device::kernel::whole;
use crate::gpu::device::upload::{le_bytes, write_raw, write_rebased};
use crate::gpu::device::wire;
use crate::gpu::device::{self, MOST_WORKGROUPS, WORKGROUP};
use crate::gpu::pairs::batch::{PairBatch, Sums, WordParts};
use crate::gpu::pairs::kernels::Kernels;
use crate::gpu::pairs::pass_times::PassTimes;
use crate::gpu::pairs::quarters::{held, Held, Holding};
use crate::gpu::pairs::wire::PairParams;
use crate::quadrant::{Made, PairWork, Upload, NARROW_WORDS, RAW_WORDS};
use std::collections::VecDeque;
use std::sync::{mpsc, Arc};
use wgpu::BufferUsages as Use;

/// Why a step of a [`PairQueue`] failed: the device said so (its words), or a buffer had no
/// room in the address space ([`room`](crate::gpu::device::room)).
pub enum PairFailure {
    Device(String),
    Room(Error),
}

impl From<String> for PairFailure {
    fn from(e: String) -> PairFailure {
        PairFailure::Device(e)
    }
}

impl From<Error> for PairFailure {
    fn from(e: Error) -> PairFailure {
        PairFailure::Room(e)
    }
}

/// Patterns a lane of the pair kernel takes in a run on average, a workgroup's width apart
/// (a workgroup takes a stretch of the batch's patterns, of about equal cost: the dispatch
/// has a workgroup for this many times its width): their clashes are added up in the
/// lane's registers, and a run of one sieve costs one atomic add to its sum. Four, the
/// patterns a lane a batch holds (`BATCH_LANES`): a run a lane a batch. (Adding a
/// workgroup's runs in workgroup memory first, one atomic add a workgroup, is the way
/// back should a GPU show the adds contended.)
const LANE_RUN: usize = 4;

/// The invocations a pair count's dispatch runs at most (a [`PairQueue`]'s), on every adapter, a
/// CPU-emulated one too: llvmpipe's compute pool hands each of its threads an equal run of
/// a dispatch's workgroups up front, so there a batch must hold many sieves (else one half
/// costs more than the other, and a thread idles while the other finishes) and a workgroup
/// one tile of it (so that a thread's tiles lie together and share their sieves' tables in
/// its caches) (`docs/design.md`, "Batches").
pub(crate) const PAIR_LANES: usize = MOST_WORKGROUPS * WORKGROUP;

/// Sets of buffers a queue keeps: one batch on the GPU while the thread builds the next in
/// the other (the thread waits only when the GPU has not finished the last by then).
pub const SLOTS: usize = 2;

/// A device as the pair count takes it: the device (its queue, limits and whether it
/// shares the host's memory), the kernels, and the quarter tables it holds.
pub(crate) struct Device<'a> {
    pub on: &'a device::Device,
    pub kernels: &'a Kernels,
    pub quarters: &'a Holding,
}

impl Device<'_> {
    /// What the host sends of a sieve: over a bus its stored patterns' dense words, for the
    /// GPU to make the tables; where the GPU shares the host's memory, the tables.
    pub fn takes(&self) -> Made {
        match self.on.shares_memory {
            true => Made::Tables,
            false => Made::Words,
        }
    }
}

/// Which way a [`Staged`] buffer's bytes go.
#[derive(Clone, Copy)]
enum Way {
    /// Written by the host, read by the kernel.
    ToGpu,
    /// Written by the kernel, read by the host.
    FromGpu,
}

/// A buffer the kernel binds and the host maps: one buffer where the device shares the
/// host's memory (an integrated GPU, lavapipe: a copy there is a pass over the bytes on
/// the queue's one thread), else the host's and the GPU's own, copied one into the other
/// around the dispatch.
struct Staged {
    host: wgpu::Buffer,
    /// The GPU's own, where it is not the host's.
    gpu: Option<wgpu::Buffer>,
    way: Way,
}

impl Staged {
    /// `size` bytes going `way`; the host's mapped where the host writes it.
    fn new(device: &Device, label: &str, size: u64, way: Way) -> Result<Staged, Error> {
        // (what the GPU writes is cleared first: a copy's destination)
        let (map, host_copy, gpu_copy, bound) = match way {
            Way::ToGpu => (Use::MAP_WRITE, Use::COPY_SRC, Use::COPY_DST, Use::empty()),
            Way::FromGpu => (Use::MAP_READ, Use::COPY_DST, Use::COPY_SRC, Use::COPY_DST),
        };
        let storage = Use::STORAGE | bound;
        let (host, gpu) = match device.on.shares_memory {
            true => (buffer(&device.on.device, label, size, map | storage)?, None),
            false => (
                buffer(&device.on.device, label, size, map | host_copy)?,
                Some(buffer(&device.on.device, label, size, storage | gpu_copy)?),
            ),
        };
        Ok(Staged { host, gpu, way })
    }

    fn size(&self) -> u64 {
        self.host.size()
    }

    /// The buffer the kernel binds.
    fn bound(&self) -> &wgpu::Buffer {
        self.gpu.as_ref().unwrap_or(&self.host)
    }

    /// Copies the first `bytes` from the host's buffer to the GPU's, or back (its way),
    /// where they are two.
    fn copy(&self, encoder: &mut wgpu::CommandEncoder, bytes: u64) {
        let Some(gpu) = &self.gpu else { return };
        match self.way {
            Way::ToGpu => encoder.copy_buffer_to_buffer(&self.host, 0, gpu, 0, bytes),
            Way::FromGpu => encoder.copy_buffer_to_buffer(gpu, 0, &self.host, 0, bytes),
        }
    }
}

/// One set of a dispatch's buffers: the tables or words sent, the words grouped, their
/// cursors and the tables the GPU makes (where it was sent words), the word lists (at
/// their [`WordParts`]), the kernels' parameters and the sums ([`Sums`]).
struct Slot {
    upload: Staged,
    making: Option<Making>,
    words: Staged,
    params: wgpu::Buffer,
    /// Where each workgroup of the pair kernel starts ([`PairBatch::workgroup_starts`]).
    starts: wgpu::Buffer,
    sums: Staged,
    /// Where each pattern of the other side came, where the GPU groups them ([`Making`]);
    /// a word the pair kernel binds and does not read elsewhere.
    origin: wgpu::Buffer,
    /// Its batch's passes timed, where they are
    /// ([`pass_clock`](crate::gpu::device::Device::pass_clock)).
    times: Option<PassTimes>,
}

/// A buffer of `size` bytes (at least 32), where the address space has room for it.
fn buffer(
    device: &wgpu::Device,
    label: &str,
    size: u64,
    usage: Use,
) -> Result<wgpu::Buffer, Error> {
    let size = size.max(32);
    crate::gpu::device::room::buffer(label, size, || {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage,
            mapped_at_creation: usage.contains(Use::MAP_WRITE),
        })
    })
}

/// The buffers where the GPU makes the tables from the words it is sent: the words
/// grouped, the cursors it groups them by, and the tables; where it puts the other side in
/// signature order: its words ordered, and the cursors it orders them by; and where it
/// signs the other side first: its words signed, and each signature's patterns.
struct Making {
    grouped: wgpu::Buffer,
    cursors: wgpu::Buffer,
    tables: wgpu::Buffer,
    ordered: wgpu::Buffer,
    other_cursors: wgpu::Buffer,
    signed: wgpu::Buffer,
    counts: wgpu::Buffer,
}

impl Making {
    fn new(device: &wgpu::Device) -> Result<Making, Error> {
        Ok(Making {
            grouped: buffer(device, "grouped words", 0, Use::STORAGE)?,
            cursors: buffer(device, "cursors", 0, Use::STORAGE | Use::COPY_DST)?,
            tables: buffer(device, "tables", 0, Use::STORAGE)?,
            ordered: buffer(device, "ordered words", 0, Use::STORAGE)?,
            other_cursors: buffer(device, "other cursors", 0, Use::STORAGE | Use::COPY_DST)?,
            signed: buffer(device, "signed words", 0, Use::STORAGE)?,
            counts: buffer(device, "signature counts", 0, Use::STORAGE | Use::COPY_DST)?,
        })
    }

    /// Makes room for these bytes of grouped words, cursors, tables, ordered words, their
    /// cursors, signed words and signature counts.
    fn fit(&mut self, device: &Device, bytes: [u64; 7]) -> Result<(), Error> {
        let buffers = [
            &mut self.grouped,
            &mut self.cursors,
            &mut self.tables,
            &mut self.ordered,
            &mut self.other_cursors,
            &mut self.signed,
            &mut self.counts,
        ];
        for (buffer, bytes) in buffers.into_iter().zip(bytes) {
            if buffer.size() < bytes {
                let usage = buffer.usage();
                *buffer = self::buffer(
                    &device.on.device,
                    "making tables",
                    grown(bytes, device.on.buffer_limit),
                    usage,
                )?;
            }
        }
        Ok(())
    }
}

impl Slot {
    /// Buffers for batches of up to `upload` bytes of tables or stored words and `words`
    /// bytes of word lists (the others made when the batch is sent); the host's mapped
    /// where it writes them.
    fn new(device: &Device, (upload, words): (u64, u64)) -> Result<Slot, Error> {
        let making = match device.takes() {
            Made::Words => Some(Making::new(&device.on.device)?),
            Made::Tables => None,
        };
        Ok(Slot {
            upload: Staged::new(device, "pair upload", upload, Way::ToGpu)?,
            making,
            words: Staged::new(device, "pair words", words, Way::ToGpu)?,
            params: buffer(
                &device.on.device,
                "pair params",
                size_of::<PairParams>() as u64,
                Use::UNIFORM | Use::COPY_DST,
            )?,
            starts: buffer(
                &device.on.device,
                "workgroup starts",
                4 * (MOST_WORKGROUPS as u64 + 1),
                Use::STORAGE | Use::COPY_DST,
            )?,
            sums: Staged::new(device, "sums", 0, Way::FromGpu)?,
            origin: buffer(&device.on.device, "origin", 0, Use::STORAGE | Use::COPY_DST)?,
            times: (device.on.pass_clock()).map(|tick| PassTimes::new(&device.on.device, tick)),
        })
    }

    /// Makes room for `batch`'s tables (where the GPU makes them) and patterns, keeping the
    /// uploads (the patterns were written into the word lists' as they came).
    fn fit(&mut self, device: &Device, batch: &PairBatch) -> Result<(), Error> {
        let (tables, patterns) = (batch.table_bytes, batch.len() as u64);
        if let Some(making) = self.making.as_mut() {
            let cursors = 4 * batch.cursors.len() as u64;
            let ordered = 4 * (batch.ordered_words() * batch.len()) as u64;
            let signatures = 4 * batch.signature_base() as u64;
            let other_cursors = signatures.max(4 * batch.other_cursors.len() as u64);
            let signed = match batch.signs() {
                true => 4 * (NARROW_WORDS as u64) * patterns,
                false => 0,
            };
            let bytes = [
                batch.upload_bytes,
                cursors,
                tables,
                ordered,
                other_cursors,
                signed,
                signatures,
            ];
            making.fit(device, bytes)?;
            if self.origin.size() < 4 * patterns {
                let bytes = grown(4 * patterns, device.on.buffer_limit);
                self.origin = buffer(
                    &device.on.device,
                    "origin",
                    bytes,
                    Use::STORAGE | Use::COPY_DST,
                )?;
            }
        }
        let sums = 4 * batch.sum_words() as u64;
        if self.sums.size() < sums {
            let bytes = grown(sums, device.on.buffer_limit);
            self.sums = Staged::new(device, "sums", bytes, Way::FromGpu)?;
        }
        Ok(())
    }

    /// The bind groups of a batch's passes in this slot: where the GPU makes the tables,
    /// the order's, the grouping's and the tables'; and the pairs'.
    fn bind_groups(
        &self,
        gpu: &Device,
        parts: &WordParts,
        (signs, sent, joined): (bool, bool, Option<&Held>),
    ) -> BindGroups {
        let making =
            (self.making.as_ref()).map(|making| self.making_groups(gpu, parts, making, signs));
        let signing = (self.making.as_ref().filter(|_| signs))
            .map(|making| self.signing_groups(gpu, parts, making, (sent, joined)));
        let tables = (self.making.as_ref()).map_or(self.upload.bound(), |making| &making.tables);
        let patterns = match &self.making {
            Some(making) => whole(&making.ordered),
            None => self.words_at(&parts.patterns),
        };
        let counting = gpu.kernels.pairs.bind(
            &gpu.on.device,
            [
                ("params", whole(&self.params)),
                ("tables", whole(tables)),
                ("reach", self.words_at(&parts.reach)),
                ("reach_at", self.words_at(&parts.reach_at)),
                ("patterns", patterns),
                ("sums", whole(self.sums.bound())),
                ("origin", whole(&self.origin)),
                ("starts", whole(&self.starts)),
            ],
        );
        BindGroups {
            signing,
            making,
            counting,
        }
    }

    /// Where the GPU makes the tables: the other side ordered (from the signed patterns
    /// where it `signs`), the words grouped, then the tables made of them.
    fn making_groups(
        &self,
        gpu: &Device,
        parts: &WordParts,
        making: &Making,
        signs: bool,
    ) -> [wgpu::BindGroup; 3] {
        let kernels = gpu.kernels;
        let ordered_from = match signs {
            true => whole(&making.signed),
            false => self.words_at(&parts.patterns),
        };
        let ordering = kernels.order.bind(
            &gpu.on.device,
            [
                ("params", whole(&self.params)),
                ("patterns", ordered_from),
                ("ordered", whole(&making.ordered)),
                ("origin", whole(&self.origin)),
                ("cursors", whole(&making.other_cursors)),
            ],
        );
        let grouping = kernels.group.bind(
            &gpu.on.device,
            [
                ("params", whole(&self.params)),
                ("words", whole(self.upload.bound())),
                ("grouped", whole(&making.grouped)),
                ("blocks", self.words_at(&parts.blocks)),
                ("cursors", whole(&making.cursors)),
            ],
        );
        let tables = kernels.tables.bind(
            &gpu.on.device,
            [
                ("params", whole(&self.params)),
                ("words", whole(&making.grouped)),
                ("tables", whole(&making.tables)),
                ("blocks", self.words_at(&parts.blocks)),
            ],
        );
        [ordering, grouping, tables]
    }

    /// Where the GPU signs the other side: the patterns `sent` signed and counted, those
    /// `joined` from the quarters it holds, then their places. A batch may hold sieves of
    /// both: each pass passes over the other's.
    fn signing_groups(
        &self,
        gpu: &Device,
        parts: &WordParts,
        making: &Making,
        (sent, joined): (bool, Option<&Held>),
    ) -> [Option<wgpu::BindGroup>; 3] {
        let kernels = gpu.kernels;
        let shared = || {
            [
                ("params", whole(&self.params)),
                ("signed", whole(&making.signed)),
                ("signing", self.words_at(&parts.signing)),
                ("gathered", self.words_at(&parts.gathered)),
                ("counts", whole(&making.counts)),
            ]
        };
        let sent = sent.then(|| {
            let raw = ("raw", self.words_at(&parts.patterns));
            kernels
                .sign
                .bind(&gpu.on.device, shared().into_iter().chain([raw]))
        });
        let joining = joined.map(|held| {
            let cells = [
                ("cells", self.words_at(&parts.cells)),
                ("cell_places", self.words_at(&parts.cell_places)),
                ("north", whole(&held.north)),
                ("south", whole(&held.south)),
            ];
            kernels
                .join
                .bind(&gpu.on.device, shared().into_iter().chain(cells))
        });
        let placing = kernels.places.bind(
            &gpu.on.device,
            [
                ("params", whole(&self.params)),
                ("signing", self.words_at(&parts.signing)),
                ("counts", whole(&making.counts)),
                ("covered", self.words_at(&parts.covered)),
                ("cursors", whole(&making.other_cursors)),
                ("sums", whole(self.sums.bound())),
            ],
        );
        [sent, joining, Some(placing)]
    }

    /// The range `at` of the slot's words buffer, as a binding binds it.
    fn words_at(&self, at: &std::ops::Range<u64>) -> wgpu::BindingResource<'_> {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: self.words.bound(),
            offset: at.start,
            size: std::num::NonZeroU64::new(at.end - at.start),
        })
    }
}

impl Slot {
    /// Writes `batch`'s parameters and the pair pass's workgroup starts; returns its word
    /// blocks and the pair pass's workgroups.
    fn write_params(&self, gpu: &Device, batch: &PairBatch) -> (usize, usize) {
        let patterns = batch.len();
        let blocks = batch.blocks.len();
        let params = PairParams {
            patterns: patterns as u32,
            lookups: batch.lookups,
            blocks: blocks as u32,
            pattern_words: batch.ordered_words() as u32,
            ordered_here: u32::from(self.making.is_some()),
            sieves: batch.sieves.len() as u32,
            spot_every: batch.spot_every() as u32,
            hints_at: batch.cell_places.len() as u32,
        };
        (gpu.on.queue).write_buffer(&self.params, 0, &le_bytes(wire::words(&[params])));
        let per_run = patterns.div_ceil(WORKGROUP * LANE_RUN);
        let pair_workgroups = per_run.clamp(1, MOST_WORKGROUPS);
        let starts = batch.workgroup_starts(pair_workgroups);
        gpu.on
            .queue
            .write_buffer(&self.starts, 0, &le_bytes(&starts));
        (blocks, pair_workgroups)
    }

    /// Records a batch's passes on `encoder`: the signing, the order (an invocation a
    /// pattern), the grouping and the tables (a workgroup a block) where their bind groups
    /// are, before the pairs': a pass sees what the one before wrote. `workgroups`: the
    /// batch's patterns, sieves and blocks, and the pair pass's workgroups.
    fn record_passes(
        &mut self,
        gpu: &Device,
        encoder: &mut wgpu::CommandEncoder,
        binds: &BindGroups,
        (patterns, sieves, blocks, pair_workgroups): (usize, usize, usize, usize),
    ) {
        let kernels = gpu.kernels;
        let per_pattern = patterns.div_ceil(WORKGROUP);
        let signed = [
            ("sign", &kernels.sign, per_pattern),
            ("join", &kernels.join, per_pattern),
            ("places", &kernels.places, sieves.div_ceil(WORKGROUP)),
        ];
        let made = [
            ("order", &kernels.order, per_pattern),
            ("group", &kernels.group, blocks),
            ("tables", &kernels.tables, blocks),
        ];
        let passes = (binds.signing.iter())
            .flat_map(|binds| signed.iter().zip(binds))
            .filter_map(|(pass, bind)| Some((pass, bind.as_ref()?)))
            .chain(binds.making.iter().flat_map(|binds| made.iter().zip(binds)))
            .map(|(&(label, kernel, workgroups), bind)| (label, kernel, bind, workgroups))
            .chain([("pairs", &kernels.pairs, &binds.counting, pair_workgroups)]);
        for (label, kernel, bind, workgroups) in passes {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: self.times.as_mut().map(|times| times.writes(label)),
            });
            pass.set_pipeline(kernel.pipeline());
            pass.set_bind_group(0, bind, &[]);
            let workgroups = workgroups.clamp(1, MOST_WORKGROUPS);
            pass.dispatch_workgroups(workgroups as u32, 1, 1);
        }
    }

    /// Maps back what a submitted batch leaves: its first `bytes` of sums to read, its
    /// uploads to write the next batch into, its pass times where they are taken; the
    /// receiver hears of each mapping.
    fn map_back(&self, bytes: u64) -> mpsc::Receiver<Result<(), wgpu::BufferAsyncError>> {
        let (sent, mapped) = mpsc::channel();
        let timed = self.times.as_ref().map(|times| &times.read);
        let maps: [_; MAPS] = [
            (&self.sums.host, 0..bytes, wgpu::MapMode::Read),
            (
                &self.upload.host,
                0..self.upload.size(),
                wgpu::MapMode::Write,
            ),
            (&self.words.host, 0..self.words.size(), wgpu::MapMode::Write),
        ];
        let timed = timed.map(|read| (read, 0..read.size(), wgpu::MapMode::Read));
        for (buffer, range, mode) in maps.into_iter().chain(timed) {
            let sent = sent.clone();
            buffer.slice(range).map_async(mode, move |r| {
                let _ = sent.send(r);
            });
        }
        mapped
    }
}

/// A batch's bind groups: where the GPU signs the other side, the signing's of the
/// patterns sent and of those joined (where it holds any), and the places'; where it makes
/// the tables, the order's, the grouping's and the tables'; and the pairs'.
struct BindGroups {
    signing: Option<[Option<wgpu::BindGroup>; 3]>,
    making: Option<[wgpu::BindGroup; 3]>,
    counting: wgpu::BindGroup,
}

/// A batch on the GPU: its slot, and the mappings (the sums to read, the uploads to write
/// the next batch into) that say when it is done.
struct Sent<T> {
    slot: Slot,
    submitted: wgpu::SubmissionIndex,
    mapped: mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    maps_seen: usize,
    /// Its sieves, and the words of its sums.
    sieves: usize,
    sum_words: usize,
    tag: T,
}

impl<T> Sent<T> {
    /// Mappings it waits for: its sums, its two uploads and, where timed, its pass times.
    fn awaited(&self) -> usize {
        MAPS + usize::from(self.slot.times.is_some())
    }
}

/// Mappings every sent batch waits for: its sums and its two uploads.
const MAPS: usize = 3;

/// A thread's batches on one GPU, counted in the order sent, each with the caller's `T`:
/// one being built (its slot `filling`), the others on the GPU.
pub struct PairQueue<'a, T> {
    device: Device<'a>,
    free: Vec<Slot>,
    filling: Option<Slot>,
    /// The quarter tables the batch being built joins its other side from, if it does.
    joins_from: Option<Arc<Held>>,
    sent: VecDeque<Sent<T>>,
    /// The last batch's sums, read back into memory kept from batch to batch.
    sums: Vec<u32>,
}

impl<'a, T> PairQueue<'a, T> {
    pub(crate) fn new(device: Device<'a>) -> PairQueue<'a, T> {
        PairQueue {
            device,
            free: Vec::new(),
            filling: None,
            joins_from: None,
            sent: VecDeque::new(),
            sums: Vec::new(),
        }
    }

    /// What the host sends the GPU of a sieve ([`Device::takes`]).
    pub fn takes(&self) -> Made {
        self.device.takes()
    }

    /// Bytes the batch being built may be sent: of tables or stored words, and of word
    /// lists (0 before [`PairQueue::begin`]).
    pub fn rooms(&self) -> (u64, u64) {
        (self.filling.as_ref()).map_or((0, 0), |slot| (slot.upload.size(), slot.words.size()))
    }

    /// Starts a batch (none being built, or one that holds nothing yet) that may be sent
    /// `upload` bytes of tables or stored words and `words` of word lists (each within the
    /// device's limit): false when every slot is on the GPU (then [`PairQueue::receive`]
    /// one first); an error where the address space has no room for a new slot.
    pub fn begin(&mut self, (upload, words): (u64, u64)) -> Result<bool, Error> {
        if let Some(slot) = self.filling.take() {
            self.free.push(slot);
        }
        let free = self.free.pop();
        if free.is_none() && self.sent.len() >= SLOTS {
            return Ok(false);
        }
        let slot = match free {
            Some(slot) if slot.upload.size() >= upload && slot.words.size() >= words => slot,
            // none yet, or one too small: a new one in its place
            _ => {
                let limit = self.device.on.buffer_limit;
                Slot::new(&self.device, (grown(upload, limit), grown(words, limit)))?
            }
        };
        self.filling = Some(slot);
        Ok(true)
    }

    /// Writes `work`'s tables or stored words (what the device takes) and its patterns into
    /// the batch being built, `batch`, past what it holds (within [`PairQueue::rooms`]),
    /// each pattern's signature made the batch's. The patterns go straight to the word
    /// lists' upload, never copied on the way.
    pub fn write(&mut self, batch: &PairBatch, work: &PairWork) -> Result<(), PairFailure> {
        let slot = self.filling.as_ref().expect("a batch begun");
        let at = batch.upload_bytes;
        let range = slot.upload.host.slice(at..at + work.upload_bytes());
        let mut view = range.get_mapped_range_mut().map_err(|e| e.to_string())?;
        view.copy_from_slice(&match work.upload() {
            Upload::Entries(entries) => le_bytes(entries),
            Upload::Words(words) => le_bytes(words),
        });
        if let Some(cells) = work.signing.as_ref().and_then(|s| s.cells()) {
            // nothing of the other side but its cells, sent with the word lists
            let device = (&self.device.on.device, &self.device.on.queue);
            self.joins_from = Some(held(device, self.device.quarters, cells.quarters())?);
            return Ok(());
        }
        // (a mapped range starts at a multiple of 8 bytes; a pattern's words may not)
        let at = 4 * batch.pattern_data as u64;
        let from = at & !(wgpu::MAP_ALIGNMENT - 1);
        let range = slot
            .words
            .host
            .slice(from..at + 4 * (work.len() * work.pattern_words) as u64);
        let mut view = range.get_mapped_range_mut().map_err(|e| e.to_string())?;
        let to = (&mut view, (at - from) as usize);
        match &work.signing {
            Some(signing) => write_raw::<RAW_WORDS>(to, signing.raw_words()),
            None => write_rebased(
                to,
                &work.patterns,
                work.pattern_words,
                batch.signature_base(),
            ),
        }
        Ok(())
    }

    /// Sends the batch being built, `batch` (not empty, its upload written, its buffers
    /// within the device's limits), to be counted; `tag` comes back with its sums.
    pub fn send(&mut self, batch: &PairBatch, tag: T) -> Result<(), PairFailure> {
        let gpu = &self.device;
        let mut slot = self.filling.take().expect("a batch begun");
        let parts = batch.word_parts();
        let patterns = batch.len();
        slot.fit(gpu, batch)?;
        crate::gpu::device::room::staging()?;
        debug_assert!(
            parts.len() <= slot.words.size(),
            "the word lists' room was asked for"
        );
        write_words(&slot, batch, &parts)?;
        slot.upload.host.unmap();
        let sieves = batch.sieves.len();
        let (blocks, pair_workgroups) = slot.write_params(gpu, batch);
        let mut encoder = (gpu.on.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("pairs"),
        });
        slot.upload.copy(&mut encoder, batch.upload_bytes);
        slot.words.copy(&mut encoder, parts.len());
        let sum_words = batch.sum_words();
        let bytes = 4 * sum_words as u64;
        encoder.clear_buffer(slot.sums.bound(), 0, Some(bytes));
        let signs = batch.signs();
        if let Some(making) = &slot.making {
            let queue = &gpu.on.queue;
            queue.write_buffer(&making.cursors, 0, &le_bytes(&batch.cursors));
            match signs {
                true => {
                    let counts = 4 * batch.signature_base() as u64;
                    encoder.clear_buffer(&making.counts, 0, Some(counts));
                }
                false => {
                    let cursors = le_bytes(&batch.other_cursors);
                    queue.write_buffer(&making.other_cursors, 0, &cursors);
                }
            }
        }
        let joined = self.joins_from.take().filter(|_| batch.joins());
        if joined.is_some() {
            // a place no pattern takes (its candidates that are none) keeps 0 (order.wgsl)
            encoder.clear_buffer(&slot.origin, 0, Some(4 * patterns as u64));
        }
        let sent = batch.pattern_data > 0;
        let binds = slot.bind_groups(gpu, &parts, (signs, sent, joined.as_deref()));
        let workgroups = (patterns, sieves, blocks, pair_workgroups);
        slot.record_passes(gpu, &mut encoder, &binds, workgroups);
        slot.sums.copy(&mut encoder, bytes);
        if let Some(times) = &slot.times {
            times.resolve(&mut encoder);
        }
        let submitted = gpu.on.queue.submit([encoder.finish()]);
        let mapped = slot.map_back(bytes);
        self.sent.push_back(Sent {
            slot,
            submitted,
            mapped,
            maps_seen: 0,
            sieves,
            sum_words,
            tag,
        });
        Ok(())
    }

    /// The oldest batch's tag and its sums, waiting for them if `wait` (else `None` while
    /// the GPU is still counting it); `None` when none is on the GPU.
    pub fn receive(&mut self, wait: bool) -> Result<Option<(T, Sums<'_>)>, String> {
        let Some(oldest) = self.sent.front_mut() else {
            return Ok(None);
        };
        let poll = match wait {
            true => wgpu::PollType::Wait {
                submission_index: Some(oldest.submitted.clone()),
                timeout: None,
            },
            false => wgpu::PollType::Poll,
        };
        self.device
            .on
            .device
            .poll(poll)
            .map_err(|e| e.to_string())?;
        while oldest.maps_seen < oldest.awaited() {
            let mapped = match wait {
                true => oldest.mapped.recv().map_err(|e| e.to_string())?,
                false => match oldest.mapped.try_recv() {
                    Ok(mapped) => mapped,
                    Err(mpsc::TryRecvError::Empty) => return Ok(None),
                    Err(e) => return Err(e.to_string()),
                },
            };
            mapped.map_err(|e| e.to_string())?;
            oldest.maps_seen += 1;
        }
        let mut done = self.sent.pop_front().expect("the oldest, above");
        let readback = &done.slot.sums.host;
        let range = readback.slice(..4 * done.sum_words as u64);
        let view = range.get_mapped_range().map_err(|e| e.to_string())?;
        self.sums.clear();
        let words = view.chunks_exact(4);
        (self.sums).extend(words.map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
        drop(view);
        readback.unmap();
        if let Some(times) = done.slot.times.as_mut() {
            times.add_up()?;
        }
        self.free.push(done.slot);
        Ok(Some((done.tag, Sums::new(&self.sums, done.sieves))))
    }
}

/// A buffer's size for `bytes` (within `limit`): room to grow, so that batches a little
/// larger than the last do not each make new buffers.
fn grown(bytes: u64, limit: u64) -> u64 {
    (bytes + bytes / 4)
        .next_multiple_of(4)
        .min(limit)
        .max(bytes)
}

/// Writes `batch`'s word lists but the patterns (written as each sieve came:
/// [`PairQueue::write`]) into `slot`'s mapped upload at `parts` and unmaps it.
fn write_words(slot: &Slot, batch: &PairBatch, parts: &WordParts) -> Result<(), String> {
    {
        let lists = parts.reach.start..parts.len();
        let range = slot.words.host.slice(lists.clone());
        let mut view = range.get_mapped_range_mut().map_err(|e| e.to_string())?;
        let at = |part: &std::ops::Range<u64>| (part.start - lists.start) as usize;
        // the hints right after the cells' places, in their part
        let hints = at(&parts.cell_places) + 4 * batch.cell_places.len();
        let lists: [(usize, &[u32]); 9] = [
            (at(&parts.reach), &batch.reach),
            (at(&parts.reach_at), wire::words(&batch.reach_at)),
            (at(&parts.blocks), wire::words(&batch.blocks)),
            (at(&parts.signing), wire::words(&batch.signing)),
            (at(&parts.gathered), &batch.gathered),
            (at(&parts.covered), &batch.covered),
            (at(&parts.cells), wire::words(&batch.cells)),
            (at(&parts.cell_places), &batch.cell_places),
            (hints, &batch.hints),
        ];
        for (start, list) in lists {
            (view.slice(start..start + 4 * list.len())).copy_from_slice(&le_bytes(list));
        }
    }
    slot.words.host.unmap();
    Ok(())
}
