//! The GPU's own time in each pass of a batch of the pair count, where the build keeps
//! stage times (`stage-times`) and the device writes timestamps (`TIMESTAMP_QUERY`): each
//! pass's start and end are written to a query set, resolved into a buffer read back with
//! the batch's sums, and added up by pass ([`crate::stages::gpu_pass`]). Where the host
//! waits on a GPU that is busy, this says which pass it waits on.

use crate::stages::{gpu_pass, GPU_PASSES};
use wgpu::BufferUsages as Use;

/// Timestamps a batch takes at most: a start and an end a pass.
const QUERIES: u32 = 2 * GPU_PASSES.len() as u32;

/// A slot's timestamps: the passes of the batch it last held, in the order run.
pub(super) struct PassTimes {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    /// What the host maps: the resolved timestamps copied.
    pub read: wgpu::Buffer,
    /// The passes timed (of [`GPU_PASSES`]), in the order run.
    passes: Vec<usize>,
    /// Nanoseconds a tick.
    period: f32,
}

impl PassTimes {
    /// Timestamps for one slot's batches, a tick `period` nanoseconds.
    pub fn new(device: &wgpu::Device, period: f32) -> PassTimes {
        let bytes = 8 * QUERIES as u64;
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        };
        PassTimes {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass times"),
                ty: wgpu::QueryType::Timestamp,
                count: QUERIES,
            }),
            resolved: buffer("pass times resolved", Use::QUERY_RESOLVE | Use::COPY_SRC),
            read: buffer("pass times read", Use::MAP_READ | Use::COPY_DST),
            passes: Vec::new(),
            period,
        }
    }

    /// The timestamp writes of the batch's next pass, `label` (one of [`GPU_PASSES`]).
    pub fn writes(&mut self, label: &str) -> wgpu::ComputePassTimestampWrites<'_> {
        let pass =
            (GPU_PASSES.iter().position(|&name| name == label)).expect("a pass of the pair count");
        let at = 2 * self.passes.len() as u32;
        self.passes.push(pass);
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(at),
            end_of_pass_write_index: Some(at + 1),
        }
    }

    /// Resolves the batch's timestamps and copies them where the host maps them.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        let queries = 2 * self.passes.len() as u32;
        encoder.resolve_query_set(&self.set, 0..queries, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.read, 0, 8 * queries as u64);
    }

    /// Adds each pass's time to its total (`read` mapped), and unmaps it.
    pub fn add_up(&mut self) -> Result<(), String> {
        let view = self
            .read
            .slice(..)
            .get_mapped_range()
            .map_err(|e| e.to_string())?;
        let tick = |k: usize| u64::from_le_bytes(view[8 * k..8 * k + 8].try_into().unwrap());
        for (k, &pass) in self.passes.iter().enumerate() {
            let ticks = tick(2 * k + 1).saturating_sub(tick(2 * k));
            gpu_pass(pass, (ticks as f64 * self.period as f64) as u64);
        }
        drop(view);
        self.read.unmap();
        self.passes.clear();
        Ok(())
    }
}
