//! The pair count's records ([`wire`](crate::gpu::device::wire)).

use bytemuck::{Pod, Zeroable};

/// Where a signature of a pair batch reaches (`pairs.wgsl`): its reached blocks,
/// `reach[start..end]`, its head (its pivots' dense bits, and at bit 16 where a narrow
/// word's rest starts; 0 for wide words), its sieve's index in the batch and where that
/// sieve's patterns start in the batch.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct ReachAt {
    pub start: u32,
    pub end: u32,
    pub head: u32,
    pub sieve: u32,
    pub first: u32,
}

/// [`ReachAt`] in WGSL.
pub(crate) const REACH_AT_WGSL: &str = "
struct ReachAt {
    start: u32,
    end: u32,
    head: u32,
    sieve: u32,
    first: u32,
}
";

/// The parameters of a pair batch's dispatches (`gpu/pairs/queue.rs`), one buffer for all of
/// its kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct PairParams {
    /// Patterns of the other side.
    pub patterns: u32,
    /// The most lookups of a sieve of the batch (at most 26: a dense word's 128 bits); a
    /// pattern's dense word is 0 past its own sieve's.
    pub lookups: u32,
    /// The stored blocks of the batch (the tables to make, where it was sent words).
    pub blocks: u32,
    /// Words a pattern of the other side takes once in signature order: `NARROW_WORDS` or
    /// `DENSE_WORDS + 1` (sent as it came, `RAW_WORDS`, where the GPU signs it).
    pub pattern_words: u32,
    /// 1 where the GPU put the other side in signature order (`order.wgsl`): the pair
    /// kernel knows the patterns it spot-checks by where they came.
    pub ordered_here: u32,
    /// Sieves of the batch: the pair kernel writes its spot checks' clashes past their sums.
    pub sieves: u32,
    /// Patterns between two of the pair kernel's spot checks past each sieve's first.
    pub spot_every: u32,
    /// Where the join's hints start among the cells' words (`join.wgsl`).
    pub hints_at: u32,
}

/// [`PairParams`] in WGSL.
pub(crate) const PAIR_PARAMS_WGSL: &str = "
struct Params {
    patterns: u32,
    lookups: u32,
    blocks: u32,
    pattern_words: u32,
    ordered_here: u32,
    sieves: u32,
    spot_every: u32,
    hints_at: u32,
}
";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::wire::{rust_layout, wgsl_layout};

    #[test]
    fn each_record_is_laid_out_as_its_wgsl_struct() {
        assert_eq!(
            wgsl_layout(REACH_AT_WGSL, "ReachAt"),
            rust_layout!(ReachAt, [start, end, head, sieve, first])
        );
        let pair_params = rust_layout!(
            PairParams,
            [
                patterns,
                lookups,
                blocks,
                pattern_words,
                ordered_here,
                sieves,
                spot_every,
                hints_at
            ]
        );
        assert_eq!(wgsl_layout(PAIR_PARAMS_WGSL, "Params"), pair_params);
    }
}
