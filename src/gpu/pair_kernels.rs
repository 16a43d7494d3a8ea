//! The pair count's shaders: each assembled from its sources with the constants the host
//! shares with it filled in, and compiled into a pipeline.

use crate::gpu::batch::{HINT_EVERY, REACH_AT_WORDS, SUM_WORDS};
use crate::quadrant::{CELL_WORDS, DENSE_WORDS, NARROW_WORDS, RAW_WORDS, SIGN_WORDS, SUBSET_BITS};

/// Buckets a workgroup of `workgroup` lanes gathers its adds to one word in (`tally.wgsl`):
/// one a lane; in the crate's tests 4, so that signatures of one workgroup often share one
/// and the lanes that find theirs held add alone, as few do on a large board.
fn tally_buckets(workgroup: usize) -> usize {
    if cfg!(test) {
        4
    } else {
        workgroup
    }
}

/// `source`, a shader of the pair count, after the parameters both take, its constants
/// filled in.
fn shader(source: &str, workgroup: usize) -> String {
    [include_str!("pair_params.wgsl"), source]
        .concat()
        .replace("{WG}", &workgroup.to_string())
        .replace("{DENSE_WORDS}", &DENSE_WORDS.to_string())
        .replace("{NARROW_WORDS}", &NARROW_WORDS.to_string())
        .replace("{SUBSET_BITS}", &SUBSET_BITS.to_string())
        .replace("{REACH_AT_WORDS}", &REACH_AT_WORDS.to_string())
        .replace("{SUM_WORDS}", &SUM_WORDS.to_string())
        .replace("{SIGN_WORDS}", &SIGN_WORDS.to_string())
        .replace("{RAW_WORDS}", &RAW_WORDS.to_string())
        .replace("{HINT_EVERY}", &HINT_EVERY.to_string())
        .replace("{CELL_WORDS}", &CELL_WORDS.to_string())
        .replace("{TALLY_BUCKETS}", &tally_buckets(workgroup).to_string())
}

/// The other side's signing (of the patterns sent, or joined from the quarter tables),
/// places and order, the grouping of the stored words, the making of the tables, and the
/// pair kernel.
pub(super) struct Kernels {
    pub sign: wgpu::ComputePipeline,
    pub join: wgpu::ComputePipeline,
    pub places: wgpu::ComputePipeline,
    pub order: wgpu::ComputePipeline,
    pub group: wgpu::ComputePipeline,
    pub tables: wgpu::ComputePipeline,
    pub pairs: wgpu::ComputePipeline,
}

/// The pair count's kernels compiled for `device`, the pair kernel `workgroup` invocations a
/// workgroup.
pub(super) fn kernels(device: &wgpu::Device, workgroup: usize) -> Kernels {
    let pipeline = |label: &str, source: &str| {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(shader(source, workgroup).into()),
        });
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let signing = |source: &str| [include_str!("signing.wgsl"), source].concat();
    Kernels {
        sign: pipeline("sign.wgsl", &signing(include_str!("sign.wgsl"))),
        join: pipeline("join.wgsl", &signing(include_str!("join.wgsl"))),
        places: pipeline("places.wgsl", include_str!("places.wgsl")),
        order: pipeline(
            "order.wgsl",
            &[include_str!("tally.wgsl"), include_str!("order.wgsl")].concat(),
        ),
        group: pipeline("group.wgsl", include_str!("group.wgsl")),
        tables: pipeline("tables.wgsl", include_str!("tables.wgsl")),
        pairs: pipeline("pairs.wgsl", include_str!("pairs.wgsl")),
    }
}
