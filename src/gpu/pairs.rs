//! The quadrant engine's pair count on a GPU (`pairs.wgsl`): a loaded sieve's lookup
//! tables, reaches and the other side's dense words uploaded, one invocation per pattern (in
//! turn, where they are more than the invocations), each pattern's clashes read back.

use crate::gpu::batch::PairBatch;
use crate::gpu::upload::{entry, words_buffer};
use crate::quadrant::{DENSE_WORDS, SUBSET_BITS};
use std::sync::mpsc;

/// The pair kernel's shader, its constants filled in.
fn shader(workgroup: usize) -> String {
    include_str!("pairs.wgsl")
        .replace("{WG}", &workgroup.to_string())
        .replace("{DENSE_WORDS}", &DENSE_WORDS.to_string())
        .replace("{SUBSET_BITS}", &SUBSET_BITS.to_string())
}

/// The pair kernel compiled for `device`, `workgroup` invocations a workgroup.
pub(super) fn pipeline(device: &wgpu::Device, workgroup: usize) -> wgpu::ComputePipeline {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("pairs.wgsl"),
        source: wgpu::ShaderSource::Wgsl(shader(workgroup).into()),
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("pairs"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// A device as the pair kernel takes it: its queue, the kernel, and the most workgroups a
/// dispatch runs.
pub(super) struct Device<'a> {
    pub device: &'a wgpu::Device,
    pub queue: &'a wgpu::Queue,
    pub pipeline: &'a wgpu::ComputePipeline,
    pub most_workgroups: usize,
    /// Invocations per workgroup.
    pub workgroup: usize,
}

impl Device<'_> {
    /// The clashes of each pattern of `batch` (the stored patterns of the blocks it reaches
    /// that share a diagonal with it), counted on this device; an error the device reported.
    /// The batch's buffers fit the device ([`PairBatch::largest_with`]).
    pub fn count_clashes(&self, batch: &PairBatch) -> Result<Vec<u32>, String> {
        let words = |len: usize| (len * 4) as u64;
        let patterns = batch.len();
        if patterns == 0 {
            return Ok(Vec::new());
        }
        let tables = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("tables"),
            size: (batch.tables.len() as u64).max(32),
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: true,
        });
        {
            let mut view = tables
                .slice(..)
                .get_mapped_range_mut()
                .map_err(|e| e.to_string())?;
            view.copy_from_slice(&batch.tables);
        }
        tables.unmap();
        let storage = wgpu::BufferUsages::STORAGE;
        let gpu = (self.device, self.queue);
        let params = [patterns as u32, batch.lookups, 0, 0];
        let params = words_buffer(gpu, "pair params", &params, wgpu::BufferUsages::UNIFORM);
        let reach = words_buffer(gpu, "reach", &batch.reach, storage);
        let reach_at = words_buffer(gpu, "reach at", &batch.reach_at, storage);
        let others = words_buffer(gpu, "patterns", &batch.patterns, storage);
        let workgroups = patterns
            .div_ceil(self.workgroup)
            .clamp(1, self.most_workgroups);
        let bytes = words(patterns);
        let clashes = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("clashes"),
            size: bytes,
            usage: storage | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let readback = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("clashes readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("pairs"),
            layout: &self.pipeline.get_bind_group_layout(0),
            entries: &[
                entry(0, &params),
                entry(1, &tables),
                entry(2, &reach),
                entry(3, &reach_at),
                entry(4, &others),
                entry(5, &clashes),
            ],
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("pairs"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pairs"),
                timestamp_writes: None,
            });
            pass.set_pipeline(self.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(workgroups as u32, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&clashes, 0, &readback, 0, bytes);
        let submitted = self.queue.submit([encoder.finish()]);
        let (sent, mapped) = mpsc::channel();
        readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = sent.send(r);
        });
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(submitted),
                timeout: None,
            })
            .map_err(|e| e.to_string())?;
        mapped
            .recv()
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        let view = readback
            .slice(..)
            .get_mapped_range()
            .map_err(|e| e.to_string())?;
        let clashes = view
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        drop(view);
        readback.unmap();
        Ok(clashes)
    }
}
