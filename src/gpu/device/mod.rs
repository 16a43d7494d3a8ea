//! The device layer, under both GPU backends and importing no engine: the machine's
//! adapters, a device opened on one with its limits and the first error it reported, room
//! in the address space for what its driver maps, buffers and uploads, kernels with their
//! bindings by name, and the records host and shaders share.

pub(crate) mod kernel;
pub(crate) mod room;
pub(crate) mod upload;
pub(crate) mod wire;

use crate::adapter::Adapter;
use crate::error::Error;
use crate::parallel::lock;
use std::sync::{Arc, Mutex, OnceLock};

/// Invocations per workgroup (`WG` in the shaders): a multiple of every subgroup width
/// (NVIDIA 32, AMD 32 or 64, lavapipe 8).
pub(crate) const WORKGROUP: usize = 64;

/// The most workgroups of a dispatch on a GPU, and of a pair count's on every adapter.
pub(crate) const MOST_WORKGROUPS: usize = 4096;

struct Listed {
    adapters: Vec<wgpu::Adapter>,
}

/// The adapters, once listed.
static LISTED: OnceLock<Listed> = OnceLock::new();

/// The machine's adapters, listed once per process: those of the first backend that has
/// any (Vulkan, then Metal, then DX12), so that a GPU seen by two backends is listed once.
/// Refused where the address space has no room to list them ([`room`]).
fn listed() -> Result<&'static Listed, Error> {
    if LISTED.get().is_none() {
        room::to_list()?;
    }
    Ok(LISTED.get_or_init(|| {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let all = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let backend = [
            wgpu::Backend::Vulkan,
            wgpu::Backend::Metal,
            wgpu::Backend::Dx12,
        ]
        .into_iter()
        .find(|&b| all.iter().any(|a| a.get_info().backend == b));
        let adapters = all
            .into_iter()
            .filter(|a| Some(a.get_info().backend) == backend)
            .collect();
        Listed { adapters }
    }))
}

/// The adapters `--device gpu` can use, in the order `--gpus` numbers them.
pub fn adapters() -> Result<Vec<Adapter>, Error> {
    let listed = listed()?.adapters.iter();
    Ok(listed
        .enumerate()
        .map(|(index, a)| {
            let info = a.get_info();
            Adapter {
                index,
                name: format!("{} ({:?})", info.name, info.backend),
                software: info.device_type == wgpu::DeviceType::Cpu,
            }
        })
        .collect())
}

/// The listed adapter of index `index` ([`adapters`]).
pub(crate) fn adapter(index: usize) -> Result<&'static wgpu::Adapter, Error> {
    Ok(&listed()?.adapters[index])
}

/// The listed adapter whose device gave `info`.
#[cfg(test)]
pub(crate) fn listed_adapter(info: &wgpu::AdapterInfo) -> &'static wgpu::Adapter {
    (listed()
        .expect("listed before a device opened")
        .adapters
        .iter())
    .find(|a| a.get_info() == *info)
    .expect("the device's adapter is listed")
}

/// What a device is opened for, besides what every kernel takes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wants {
    /// Of the adapter's features, those it may use.
    pub features: wgpu::Features,
    /// Its passes timed on the GPU (timestamps), where the adapter offers them.
    pub timed: bool,
}

/// A device opened on one adapter: its queue, its limits and what it shares with the host.
pub(crate) struct Device {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// The adapter's workgroup memory, in bytes.
    pub workgroup_bytes: u32,
    /// The most bytes a buffer of this device may hold and bind.
    pub buffer_limit: u64,
    /// Whether the device works in the host's memory and binds what the host maps (no
    /// copies).
    pub shares_memory: bool,
    /// Whether its shaders have 64-bit integers.
    pub int64: bool,
    /// The first error the device reported (a lost device, say), instead of wgpu's panic.
    failure: Arc<Mutex<Option<String>>>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl Device {
    /// A device on `adapter`, for what `wants` says.
    pub fn open(adapter: &wgpu::Adapter, wants: Wants) -> Result<Device, Error> {
        let info = adapter.get_info();
        let features = wants.features;
        let int64 = features.contains(wgpu::Features::SHADER_INT64);
        // buffers both mapped and bound: only where the GPU's memory is the host's (on a
        // discrete GPU the kernel would read them over the bus)
        let shares_memory = matches!(
            info.device_type,
            wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu
        ) && features.contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS);
        let mut required_features = features & wgpu::Features::SHADER_INT64;
        if shares_memory {
            required_features |= wgpu::Features::MAPPABLE_PRIMARY_BUFFERS;
        }
        if wants.timed {
            required_features |= features & wgpu::Features::TIMESTAMP_QUERY;
        }
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("nqueens"),
            // the tie kernel binds six storage buffers (every desktop driver offers eight or
            // more); workgroup memory sizes the items
            required_limits: wgpu::Limits {
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
                max_compute_workgroup_storage_size: limits.max_compute_workgroup_storage_size,
                ..wgpu::Limits::downlevel_defaults()
            },
            required_features,
            memory_hints: room::memory_hints(),
            ..Default::default()
        }))
        .map_err(|e| Error::Failed(format!("cannot open the GPU {}: {e}", info.name)))?;
        let failure = Arc::new(Mutex::new(None));
        let record = failure.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            let mut first = lock(&record);
            first.get_or_insert_with(|| e.to_string());
        }));
        let opened = Device {
            device,
            queue,
            info,
            workgroup_bytes: limits.max_compute_workgroup_storage_size,
            buffer_limit: (limits.max_buffer_size).min(limits.max_storage_buffer_binding_size),
            shares_memory,
            int64,
            failure,
        };
        opened.check()?;
        Ok(opened)
    }

    /// This device as one that binds at most `bytes` a buffer (a smaller GPU, for tests).
    #[cfg(test)]
    pub fn limited_to(&self, bytes: u64) -> Device {
        Device {
            device: self.device.clone(),
            queue: self.queue.clone(),
            info: self.info.clone(),
            buffer_limit: bytes,
            failure: self.failure.clone(),
            ..*self
        }
    }

    /// Fails with the first error the device reported, if any.
    pub fn check(&self) -> Result<(), Error> {
        match &*lock(&self.failure) {
            Some(e) => Err(self.failed(e)),
            None => Ok(()),
        }
    }

    /// `e`, a failure of this device, in its words.
    pub fn failed(&self, e: &dyn std::fmt::Display) -> Error {
        Error::Failed(format!("the GPU {} failed: {e}", self.info.name))
    }

    /// The adapter and its driver, as a refusal names them.
    pub fn identify(&self) -> String {
        let info = &self.info;
        format!(
            "{} (driver {} {})",
            info.name, info.driver, info.driver_info
        )
    }

    /// The adapter and its backend, as JSON's `device` reports them.
    pub fn describe(&self) -> String {
        format!("{} ({:?})", self.info.name, self.info.backend)
    }

    /// Whether the adapter runs on the CPU (lavapipe, WARP).
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// Nanoseconds a tick of its timestamps, where its passes are timed.
    pub fn pass_clock(&self) -> Option<f32> {
        (self.device.features())
            .contains(wgpu::Features::TIMESTAMP_QUERY)
            .then(|| self.queue.get_timestamp_period())
    }

    /// `words` uploaded to a buffer of `usage`, where the address space has room.
    pub fn buffer(
        &self,
        label: &str,
        words: &[u32],
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, Error> {
        upload::words_buffer((&self.device, &self.queue), label, words, usage)
    }

    /// A buffer of `size` bytes that a kernel fills, where the address space has room.
    pub fn empty_buffer(
        &self,
        label: &str,
        size: u64,
        usage: wgpu::BufferUsages,
    ) -> Result<wgpu::Buffer, Error> {
        room::buffer(label, size, || {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            })
        })
    }
}

/// Whether the machine may have a real GPU. On Linux a real GPU's driver opens a device node
/// (a DRM render node, NVIDIA's, or WSL's `/dev/dxg`): without one, loading the Vulkan
/// drivers to look can only find a CPU-emulated adapter, and lavapipe alone adds 60 MB of
/// resident memory to a count. Elsewhere the drivers are asked.
pub(crate) fn may_have_real_gpu() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let render_node = std::fs::read_dir("/dev/dri").is_ok_and(|nodes| {
        nodes
            .flatten()
            .any(|node| node.file_name().to_string_lossy().starts_with("renderD"))
    });
    render_node
        || ["/dev/nvidiactl", "/dev/dxg"]
            .iter()
            .any(|p| std::path::Path::new(p).exists())
}
