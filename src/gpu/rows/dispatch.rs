//! The row search on a device: its kernels (`count.wgsl`, and for tie frames the sections
//! of `ties.wgsl`) compiled for the device's workgroup memory, the frames uploaded, and
//! dispatches of items ([`super::items`]) whose counts come back per item.

use super::items::{Item, ItemCount, Kind, MAX_ITEM_ROWS};
use super::wire::{Frame, RowParams};
use crate::error::Error;
use crate::gpu::device::kernel::{whole, Kernel};
use crate::gpu::device::wire::{words, Record};
use crate::gpu::device::{Device, MOST_WORKGROUPS, WORKGROUP};
use crate::gpu::opened::{OnDevice, PerDevice};
use crate::plan::Rows;
use std::sync::{mpsc, Arc};

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
    (2..=MAX_ITEM_ROWS)
        .rev()
        .find(|&rows| workgroup_bytes(kind, rows) <= limit as usize)
        .expect("two rows fit any device")
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
    [RowParams::WGSL, Frame::WGSL, include_str!("count.wgsl")]
        .concat()
        .replace("{WG}", &WORKGROUP.to_string())
        .replace("{ROWS}", &rows.to_string())
        .replace("{BOARD}", if ties { "ROWS - 1u" } else { "1u" })
        .replace("{TIE_BINDINGS}", &section("BINDINGS"))
        .replace("{TIE_FUNCTIONS}", &section("FUNCTIONS"))
        .replace("{TIE_COUNT}", &count)
}

/// The row search's two kernels on one device, plain and tie-frame, by [`Kind`].
pub(crate) struct RowKernels {
    kernels: [Kernel; 2],
    /// The most rows each kernel's items may have (its workgroup memory is sized for them).
    rows: [usize; 2],
}

/// Each device's row kernels, compiled once a process.
static KERNELS: PerDevice<RowKernels> = PerDevice::new();

/// The row search on one device: its kernels, and dispatches of items.
pub(crate) type RowGpu = OnDevice<RowKernels>;

impl RowGpu {
    /// The row search on `device`, its kernels compiled the first time.
    pub fn on(device: &Arc<Device>) -> RowGpu {
        KERNELS.on(device, |device| {
            let rows =
                [Kind::Plain, Kind::Ties].map(|kind| kernel_rows(kind, device.workgroup_bytes));
            let kernel = |kind: Kind| {
                Kernel::new(&device.device, "count", &shader(kind, rows[kind as usize]))
            };
            RowKernels {
                kernels: [kernel(Kind::Plain), kernel(Kind::Ties)],
                rows,
            }
        })
    }

    /// The most rows an item of `kind` may leave the kernel.
    pub fn item_rows(&self, kind: Kind) -> usize {
        self.kept.rows[kind as usize]
    }

    /// The invocations a dispatch runs at most: the lanes a dispatch of fewer items leaves
    /// idle (a pair count's: [`PAIR_LANES`](crate::gpu::pairs::queue::PAIR_LANES)).
    pub fn lanes(&self) -> usize {
        self.most_workgroups() * WORKGROUP
    }

    /// Enough persistent invocations to fill a GPU (about a thousand a multiprocessor with
    /// this kernel's workgroup memory), a few per thread on a CPU-emulated one.
    fn most_workgroups(&self) -> usize {
        if self.device.is_software() {
            64
        } else {
            MOST_WORKGROUPS
        }
    }

    /// The frames of `plan` uploaded (what every item's kernel reads its row masks from).
    pub fn frames(&self, plan: &Rows) -> Result<wgpu::Buffer, Error> {
        let frames: Vec<Frame> = (plan.frames().iter())
            .map(|frame| Frame {
                allowed: frame.masks.allowed.map(|m| m as u32),
                must_row: frame.masks.must_row as u32,
                must: frame.masks.must as u32,
            })
            .collect();
        (self.device).buffer("frames", words(&frames), wgpu::BufferUsages::STORAGE)
    }

    /// Starts counting `batch` (items of each kind) of a plan whose frames are `frames`,
    /// each invocation taking `per_invocation` items in turn (or more, on the most
    /// invocations a dispatch runs), giving up items whose node count reaches `drop_at`
    /// (at most [`DROPPED`]); [`Flight::wait`] gives the counts.
    pub fn launch(
        &self,
        n: usize,
        frames: &wgpu::Buffer,
        batch: [&[Item]; 2],
        drop_at: u32,
        per_invocation: usize,
    ) -> Result<Flight, Error> {
        let (most, per_workgroup) = (self.most_workgroups(), WORKGROUP * per_invocation);
        let workgroups = |items: usize| items.div_ceil(per_workgroup).clamp(1, most) as u32;
        debug_assert!(drop_at <= DROPPED);
        let device = &*self.device;
        let mut encoder = (device.device).create_command_encoder(&wgpu::CommandEncoderDescriptor {
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
            let params = device.buffer("params", words(&[params]), wgpu::BufferUsages::UNIFORM)?;
            let words = |f: &dyn Fn(&Item) -> &[u32]| -> Vec<u32> {
                items.iter().flat_map(|i| f(i).iter().copied()).collect()
            };
            let state =
                device.buffer("items", &words(&|i| &i.state), wgpu::BufferUsages::STORAGE)?;
            let rows = device.buffer(
                "item rows",
                &words(&|i| std::slice::from_ref(&i.at)),
                wgpu::BufferUsages::STORAGE,
            )?;
            let bytes = (items.len() * 16) as u64;
            let results = device.empty_buffer(
                "results",
                bytes,
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            )?;
            let readback = device.empty_buffer(
                "readback",
                bytes,
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )?;
            let next = device.buffer("next item", &[0], wgpu::BufferUsages::STORAGE)?;
            let prefix = match kind {
                Kind::Ties => Some(device.buffer(
                    "item prefixes",
                    &words(&|i| &i.prefix),
                    wgpu::BufferUsages::STORAGE,
                )?),
                Kind::Plain => None,
            };
            let kernel = &self.kept.kernels[kind as usize];
            let bound = [
                ("params", whole(&params)),
                ("frames", whole(frames)),
                ("items", whole(&state)),
                ("item_rows", whole(&rows)),
                ("results", whole(&results)),
                ("next_item", whole(&next)),
            ];
            let prefix = prefix.as_ref().map(|prefix| ("item_prefix", whole(prefix)));
            let bind = kernel.bind(&device.device, bound.into_iter().chain(prefix));
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
        let submitted = device.queue.submit([encoder.finish()]);
        Ok(Flight::new(submitted, readbacks, drop_at))
    }
}

/// The row search on one device as its executor drives it: a [`RowGpu`], or in the tests
/// a fake one on it (that lies, or vanishes).
pub(crate) trait RowCounter: Send + Sync {
    /// The device and its kernels.
    fn row_gpu(&self) -> &RowGpu;

    /// The counts of `flight`, launched on this device ([`Flight::wait`]).
    fn wait(&self, flight: Flight) -> Result<[Vec<ItemCount>; 2], Error> {
        flight.wait(&self.row_gpu().device)
    }
}

impl RowCounter for RowGpu {
    fn row_gpu(&self) -> &RowGpu {
        self
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
    /// The dispatch `submitted`, its results mapped into `readbacks` (one a kind, where it
    /// has items) as they come.
    fn new(
        submitted: wgpu::SubmissionIndex,
        readbacks: Vec<Option<wgpu::Buffer>>,
        drop_at: u32,
    ) -> Flight {
        let (sent, mapped) = mpsc::channel();
        for (kind, readback) in readbacks.iter().enumerate() {
            if let Some(readback) = readback {
                let sent = sent.clone();
                readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                    let _ = sent.send((kind, r));
                });
            }
        }
        Flight {
            submitted,
            readbacks,
            mapped,
            drop_at,
        }
    }

    /// Waits for the dispatch and gives each item's count, per kind, in the order of the
    /// batch.
    pub fn wait(self, device: &Device) -> Result<[Vec<ItemCount>; 2], Error> {
        let lost = |e: &dyn std::fmt::Display| device.failed(e);
        device
            .device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(self.submitted),
                timeout: None,
            })
            .map_err(|e| lost(&e))?;
        device.check()?;
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
