//! The pair count's shaders: each assembled from its sources with the constants the host
//! shares with it filled in, and compiled into a pipeline.

use super::wire::{CellRecord, PairParams, ReachAt, SieveSums, SignRecord, WordBlock};
use crate::gpu::device::kernel::Kernel;
use crate::gpu::device::wire::{words_of, Record};
use crate::gpu::pairs::batch::HINT_EVERY;
use crate::quadrant::{DENSE_WORDS, NARROW_WORDS, RAW_WORDS, SUBSET_BITS};

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

/// `source`, a shader of the pair count, after the parameters and records all take, its
/// constants filled in.
fn shader(source: &str, workgroup: usize) -> String {
    [
        PairParams::WGSL,
        ReachAt::WGSL,
        WordBlock::WGSL,
        SignRecord::WGSL,
        CellRecord::WGSL,
        SieveSums::WGSL,
        include_str!("pair_params.wgsl"),
        source,
    ]
    .concat()
    .replace("{WG}", &workgroup.to_string())
    .replace("{DENSE_WORDS}", &DENSE_WORDS.to_string())
    .replace("{NARROW_WORDS}", &NARROW_WORDS.to_string())
    .replace("{SUBSET_BITS}", &SUBSET_BITS.to_string())
    .replace("{SUM_WORDS}", &words_of::<SieveSums>().to_string())
    .replace(
        "{SUM_FIRST}",
        &(std::mem::offset_of!(SieveSums, first_clashes) / 4).to_string(),
    )
    .replace("{RAW_WORDS}", &RAW_WORDS.to_string())
    .replace("{HINT_EVERY}", &HINT_EVERY.to_string())
    .replace("{TALLY_BUCKETS}", &tally_buckets(workgroup).to_string())
}

/// The other side's signing (of the patterns sent, or joined from the quarter tables),
/// places and order, the grouping of the stored words, the making of the tables, and the
/// pair kernel.
pub(crate) struct Kernels {
    pub sign: Kernel,
    pub join: Kernel,
    pub places: Kernel,
    pub order: Kernel,
    pub group: Kernel,
    pub tables: Kernel,
    pub pairs: Kernel,
}

/// The pair count's kernels compiled for `device`, the pair kernel `workgroup` invocations a
/// workgroup.
pub(crate) fn kernels(device: &wgpu::Device, workgroup: usize) -> Kernels {
    let kernel = |label: &str, source: &str| Kernel::new(device, label, &shader(source, workgroup));
    let signing = |source: &str| [include_str!("signing.wgsl"), source].concat();
    Kernels {
        sign: kernel("sign", &signing(include_str!("sign.wgsl"))),
        join: kernel("join", &signing(include_str!("join.wgsl"))),
        places: kernel("places", include_str!("places.wgsl")),
        order: kernel(
            "order",
            &[include_str!("tally.wgsl"), include_str!("order.wgsl")].concat(),
        ),
        group: kernel("group", include_str!("group.wgsl")),
        tables: kernel("tables", include_str!("tables.wgsl")),
        pairs: kernel("pairs", include_str!("pairs.wgsl")),
    }
}
