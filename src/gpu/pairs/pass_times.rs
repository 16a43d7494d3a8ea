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
pub(crate) struct PassTimes {
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
        for (pass, start, end) in self.stamps()? {
            let ticks = end.saturating_sub(start);
            gpu_pass(pass, (ticks as f64 * self.period as f64) as u64);
        }
        Ok(())
    }

    /// Each pass of the batch, in the order run, with the ticks it began and ended at
    /// (`read` mapped); unmaps it, and the next batch's passes are timed from the first
    /// timestamp on.
    fn stamps(&mut self) -> Result<Vec<(usize, u64, u64)>, String> {
        let view = self
            .read
            .slice(..)
            .get_mapped_range()
            .map_err(|e| e.to_string())?;
        let tick = |k: usize| u64::from_le_bytes(view[8 * k..8 * k + 8].try_into().unwrap());
        let stamps = (self.passes.iter().enumerate())
            .map(|(k, &pass)| (pass, tick(2 * k), tick(2 * k + 1)))
            .collect();
        drop(view);
        self.read.unmap();
        self.passes.clear();
        Ok(stamps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::kernel::{whole, Kernel};
    use std::sync::mpsc;

    /// Two passes timed on the test GPU (where it writes timestamps) come back as run, each
    /// ending no earlier than it began, and the slot's next batch is timed from the start.
    #[test]
    fn a_batchs_passes_come_back_timed_in_the_order_run() {
        let Some(gpus) = crate::gpu::testing::gpus() else {
            return;
        };
        let adapter = crate::gpu::device::listed_adapter(&gpus[0].info);
        let timestamps = wgpu::Features::TIMESTAMP_QUERY;
        if !adapter.features().contains(timestamps) {
            return;
        }
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_features: timestamps,
            ..Default::default()
        }))
        .expect("the device opens");
        let source = "@group(0) @binding(0) var<storage, read_write> x: array<u32>;
            @compute @workgroup_size(64)
            fn main(@builtin(global_invocation_id) g: vec3<u32>) { x[g.x] = 3u * x[g.x] + g.x; }";
        let kernel = Kernel::new(&device, "test", source);
        let groups = 256;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 4 * 64 * groups,
            usage: Use::STORAGE,
            mapped_at_creation: false,
        });
        let bind = kernel.bind(&device, [("x", whole(&buffer))]);
        let mut times = PassTimes::new(&device, queue.get_timestamp_period());
        let mut encoder = device.create_command_encoder(&Default::default());
        let labels = ["order", "pairs"];
        for label in labels {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                timestamp_writes: Some(times.writes(label)),
            });
            pass.set_pipeline(kernel.pipeline());
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(groups as u32, 1, 1);
        }
        times.resolve(&mut encoder);
        queue.submit([encoder.finish()]);
        let (sent, mapped) = mpsc::channel();
        times
            .read
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |r| {
                let _ = sent.send(r);
            });
        let wait = wgpu::PollType::Wait {
            submission_index: None,
            timeout: None,
        };
        device.poll(wait).expect("the GPU finishes");
        mapped.recv().expect("mapped").expect("mapped");
        let stamps = times.stamps().expect("read");
        let passes = labels.map(|label| GPU_PASSES.iter().position(|&p| p == label).unwrap());
        assert_eq!(stamps.iter().map(|s| s.0).collect::<Vec<_>>(), passes);
        let [(_, first, first_end), (_, second, second_end)] = stamps[..] else {
            unreachable!("two passes, above")
        };
        assert!(first > 0, "{stamps:?}: a timestamp was written");
        assert!(
            first <= first_end && first <= second && second <= second_end,
            "{stamps:?}"
        );
        let next = times.writes("join");
        assert_eq!(next.beginning_of_pass_write_index, Some(0));
    }
}
