//! The GPU backend (wgpu: Vulkan, Metal, DX12): counts batches of a plan's subtasks with the
//! WGSL kernel in `count.wgsl`, one depth-first search per subtask.
//!
//! It takes the subtasks whose solutions are counted without looking at them (mirror and
//! plain frames without `--unique`, the full-symmetry frames without ties); the rest (tie
//! frames, canonical forms) stay on the CPU, which runs beside it ([`crate::parallel`]).
//! Results come back per subtask with the same ids, counts and node counts as the CPU's, so
//! shards, checkpoints and merge do not know which device counted what.

use crate::error::Error;
use crate::found::Found;
use crate::split::{LeafRule, Plan};
use std::sync::{mpsc, Arc, Mutex};

/// Words per frame in the frames buffer: 32 allowed masks, must row, must.
const FRAME_WORDS: usize = 34;
/// Words per subtask in the tasks buffer (`Task` in the shader).
const TASK_WORDS: usize = 8;
/// Invocations per workgroup (`@workgroup_size` in the shader).
const WORKGROUP: usize = 32;
/// Rows a lane's stack holds (`LEVELS` in the shader).
const LEVELS: usize = 30;

/// An opened GPU: device, queue and the compiled counting pipeline.
pub struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    info: wgpu::AdapterInfo,
    /// The first error the device reported (a lost device, say), instead of wgpu's panic.
    failure: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A plan's frames, uploaded once per run.
pub struct GpuPlan<'p> {
    plan: &'p Plan,
    frames: wgpu::Buffer,
}

/// The GPU this process opened, shared by every later run (see [`Gpu::shared`]).
static OPENED: Mutex<Option<Arc<Gpu>>> = Mutex::new(None);

impl Gpu {
    /// The process's GPU, opened on first use and shared by every run after it.
    ///
    /// Opening a GPU again for each count fails on real drivers: seen on an NVIDIA H100,
    /// where after a few dozen opens in one process the Vulkan loader reports no driver,
    /// and opens from several threads at once crashed the process. One device serves every
    /// run (wgpu's device and queue are shared across threads). `allow_software`: a
    /// CPU-emulated adapter (lavapipe, WARP) will do; without it, only a real GPU.
    pub fn shared(allow_software: bool) -> Result<Arc<Gpu>, Error> {
        let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
        let gpu = match &*opened {
            Some(gpu) => gpu.clone(),
            None => {
                let gpu = Arc::new(Gpu::open()?);
                *opened = Some(gpu.clone());
                gpu
            }
        };
        if !allow_software && gpu.info.device_type == wgpu::DeviceType::Cpu {
            return Err(Error::Failed(format!(
                "no usable GPU: the only adapter is {} {:?}, which runs on the CPU",
                gpu.info.name, gpu.info.backend
            )));
        }
        Ok(gpu)
    }

    /// Opens the best adapter wgpu finds, CPU-emulated ones included. Each call opens a new
    /// device, so only [`Gpu::shared`] calls it.
    fn open() -> Result<Gpu, Error> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let options = wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        };
        let looked_for = "a Vulkan, Metal or DX12 adapter with compute shaders";
        let adapter = pollster::block_on(instance.request_adapter(&options))
            .map_err(|e| Error::Failed(format!("no usable GPU: looked for {looked_for}: {e}")))?;
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("nqueens"),
            required_limits: wgpu::Limits::downlevel_defaults(),
            ..Default::default()
        }))
        .map_err(|e| Error::Failed(format!("cannot open the GPU {}: {e}", info.name)))?;
        let failure = Arc::new(Mutex::new(None));
        let record = failure.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut first = record.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert_with(|| e.to_string());
        }));
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("count.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("count.wgsl").into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("count"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let gpu = Gpu {
            device,
            queue,
            pipeline,
            info,
            failure,
        };
        gpu.check()?;
        Ok(gpu)
    }

    /// Fails with the first error the device reported, if any.
    fn check(&self) -> Result<(), Error> {
        match &*self.failure.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(Error::Failed(format!(
                "the GPU {} failed: {e}",
                self.info.name
            ))),
            None => Ok(()),
        }
    }

    /// The adapter and its backend, as JSON's `device` reports them.
    pub fn describe(&self) -> String {
        format!("{} ({:?})", self.info.name, self.info.backend)
    }

    /// Uploads the frames of `plan`.
    pub fn prepare<'p>(&self, plan: &'p Plan) -> GpuPlan<'p> {
        let mut words = Vec::with_capacity(plan.frames().len() * FRAME_WORDS);
        for frame in plan.frames() {
            words.extend(frame.masks.allowed.iter().map(|&m| m as u32));
            words.push(frame.masks.must_row as u32);
            words.push(frame.masks.must as u32);
        }
        GpuPlan {
            plan,
            frames: self.storage("frames", &words, wgpu::BufferUsages::empty()),
        }
    }

    /// Counts the subtasks `ids` of the prepared plan (each one [`takes`]) in one dispatch;
    /// the results are in the order of `ids`.
    pub fn count(&self, prepared: &GpuPlan<'_>, ids: &[usize]) -> Result<Vec<Found>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let plan = prepared.plan;
        let n = plan.n();
        let full = crate::board::full_mask(n);
        let mut tasks = Vec::with_capacity(ids.len() * TASK_WORDS);
        for &id in ids {
            let (_, attacks, _) = plan.start(id);
            tasks.extend([
                u32::from(plan.subtask(id).frame),
                plan.depth() as u32,
                attacks.cols as u32,
                (attacks.right_down & full) as u32,
                attacks.left_down as u32,
                0,
                0,
                0,
            ]);
        }
        let params = [n as u32, ids.len() as u32, full as u32, 0];
        let params = self.buffer("params", &params, wgpu::BufferUsages::UNIFORM);
        let tasks = self.storage("tasks", &tasks, wgpu::BufferUsages::empty());
        let bytes = (ids.len() * 16) as u64;
        let results = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("results"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let next = self.storage("next", &[0u32], wgpu::BufferUsages::empty());
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("count"),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                entry(0, &params),
                entry(1, &prepared.frames),
                entry(2, &tasks),
                entry(3, &results),
                entry(4, &next),
            ],
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("count"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("count"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            // one lane per subtask to start with; lanes that finish early take the rest
            let groups = ids.len().div_ceil(WORKGROUP).clamp(1, 65_535) as u32;
            pass.dispatch_workgroups(groups, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&results, 0, &readback, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let (sent, mapped) = mpsc::channel();
        readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = sent.send(r);
        });
        let lost = |e: &dyn std::fmt::Display| Error::Failed(format!("the GPU failed: {e}"));
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| lost(&e))?;
        mapped.recv().map_err(|e| lost(&e))?.map_err(|e| lost(&e))?;
        let view = readback
            .slice(..)
            .get_mapped_range()
            .map_err(|e| lost(&e))?;
        let words: Vec<u32> = view
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        drop(view);
        readback.unmap();
        ids.iter()
            .zip(words.chunks_exact(4))
            .map(|(&id, w)| {
                let solutions = u64::from(w[0]) | u64::from(w[1]) << 32;
                let nodes = u64::from(w[2]) | u64::from(w[3]) << 32;
                let rule = plan.frames()[plan.subtask(id).frame as usize].rule;
                crate::search::counted(rule, solutions, nodes).ok_or_else(|| {
                    Error::Failed(format!("subtask {id} needs its boards: not a GPU subtask"))
                })
            })
            .collect()
    }

    fn storage(&self, label: &str, words: &[u32], extra: wgpu::BufferUsages) -> wgpu::Buffer {
        self.buffer(label, words, wgpu::BufferUsages::STORAGE | extra)
    }

    fn buffer(&self, label: &str, words: &[u32], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            // every binding holds at least one of its elements (a task is 32 bytes)
            size: bytes.len().max(4 * TASK_WORDS) as u64,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buffer, 0, &bytes);
        buffer
    }
}

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

/// The most rows below a subtask's prefix that the GPU takes. A dispatch cannot be
/// interrupted, so a stop request waits for the batch in flight: with 15 rows left the
/// largest subtasks of N = 17..20 (auto split depths) end within seconds on one lane, while
/// the subtasks of a 32×32 board (25 rows left and more) would run for hours. Deeper subtasks
/// stay on the CPU, which a stop request reaches within milliseconds.
pub const GPU_MAX_ROWS_LEFT: usize = 15;
// a lane's stack holds every row a taken subtask has left
const _: () = assert!(GPU_MAX_ROWS_LEFT <= LEVELS + 1);

/// Whether the GPU counts subtask `id`: its solutions are counted without looking at them,
/// and it has at most [`GPU_MAX_ROWS_LEFT`] rows left (which also fit a lane's stack).
pub fn takes(plan: &Plan, id: usize, unique: bool) -> bool {
    let rule = plan.frames()[plan.subtask(id).frame as usize].rule;
    let counted = match rule {
        LeafRule::Weight(_) => !unique,
        LeafRule::Orbit8 => true,
        LeafRule::Side { .. } => false,
    };
    let rows_left = plan.n() - plan.depth();
    counted && rows_left <= GPU_MAX_ROWS_LEFT
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn takes_example() {
        use crate::{EngineChoice, Plan};
        let deep = Plan::new(32, EngineChoice::D4, None, Some(4)).unwrap();
        assert!(!crate::gpu::takes(&deep, 0, false));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::split::EngineChoice;

    #[test]
    fn every_gpu_subtask_equals_the_cpu_subtask_with_its_nodes() {
        let Ok(gpu) = Gpu::shared(true) else {
            // CI runs these on lavapipe and says so: a missing adapter fails there
            assert!(
                std::env::var_os("NQUEENS_REQUIRE_GPU").is_none(),
                "NQUEENS_REQUIRE_GPU is set but no GPU adapter is usable"
            );
            return;
        };
        let stop = std::sync::atomic::AtomicBool::new(false);
        for engine in [EngineChoice::Mirror, EngineChoice::D4] {
            for (n, depth) in [(6, 1), (9, 2), (12, 3), (11, 9), (10, 10)] {
                let plan = Plan::new(n, engine, None, Some(depth)).unwrap();
                for unique in [false, true] {
                    let ids: Vec<usize> = (0..plan.len())
                        .filter(|&id| takes(&plan, id, unique))
                        .collect();
                    let prepared = gpu.prepare(&plan);
                    let found = gpu.count(&prepared, &ids).unwrap();
                    for (&id, f) in ids.iter().zip(&found) {
                        let cpu =
                            crate::search::run_subtask(&plan, id, unique, Kernel::Scalar, &stop)
                                .unwrap();
                        assert_eq!(*f, cpu, "n={n} depth={depth} id={id} {engine:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_gpu_takes_only_subtasks_a_stop_request_can_wait_for() {
        // no adapter needed: which subtasks go to the GPU depends on the plan alone
        for (n, depth) in [(32, 4), (24, 5), (18, 2)] {
            let plan = Plan::new(n, EngineChoice::D4, None, Some(depth)).unwrap();
            assert!(n - plan.depth() > GPU_MAX_ROWS_LEFT);
            assert!((0..plan.len()).all(|id| !takes(&plan, id, false)), "n={n}");
        }
        let plan = Plan::new(18, EngineChoice::D4, None, Some(4)).unwrap();
        assert!((0..plan.len()).any(|id| takes(&plan, id, false)));
    }
}
