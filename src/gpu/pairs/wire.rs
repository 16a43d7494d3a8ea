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

/// A block of stored words the GPU groups and makes tables of (`group.wgsl`,
/// `tables.wgsl`): where its words start in the upload and its first entry in the tables,
/// its patterns, the words a pattern, its sieve's lookups and the pivots its words are
/// grouped by, and where its sieve's words and cursors start.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct WordBlock {
    pub words_at: u32,
    pub first_entry: u32,
    pub patterns: u32,
    pub per_pattern: u32,
    pub lookups: u32,
    pub pivots: u32,
    pub sieve_words_at: u32,
    pub cursors_at: u32,
}

/// [`WordBlock`] in WGSL.
pub(crate) const WORD_BLOCK_WGSL: &str = "
struct WordBlock {
    words_at: u32,
    first_entry: u32,
    patterns: u32,
    per_pattern: u32,
    lookups: u32,
    pivots: u32,
    sieve_words_at: u32,
    cursors_at: u32,
}
";

/// A sieve whose other side the GPU signs (`signing.wgsl`): its first pattern (or
/// candidate) and signature in the batch, where its gathered values' signatures start in
/// `gathered`, its signatures; the masks of the seen diagonals past the pivots and of the
/// pivots (main, then anti, each low word first) and how many main diagonals each holds;
/// where it is joined on the GPU, where its cells start and how many (none: its patterns
/// were sent) and how far a north placement's words move up when unpacked; where its
/// patterns were sent, where they start in them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct SignRecord {
    pub first: u32,
    pub signature_base: u32,
    pub gathered_at: u32,
    pub signatures: u32,
    pub rest_main: [u32; 2],
    pub rest_anti: [u32; 2],
    pub pivots_main: [u32; 2],
    pub pivots_anti: [u32; 2],
    pub rest_mains: u32,
    pub pivot_mains: u32,
    pub cells_at: u32,
    pub cells: u32,
    pub north_main_shift: u32,
    pub north_anti_shift: u32,
    pub sent_at: u32,
    pub padding: u32,
}

/// [`SignRecord`] in WGSL.
pub(crate) const SIGN_RECORD_WGSL: &str = "
struct SignRecord {
    first: u32,
    signature_base: u32,
    gathered_at: u32,
    signatures: u32,
    rest_main: vec2<u32>,
    rest_anti: vec2<u32>,
    pivots_main: vec2<u32>,
    pivots_anti: vec2<u32>,
    rest_mains: u32,
    pivot_mains: u32,
    cells_at: u32,
    cells: u32,
    north_main_shift: u32,
    north_anti_shift: u32,
    sent_at: u32,
    padding: u32,
}
";

/// A mask of 64 diagonals as a record holds it: its low word first.
pub(crate) fn halves(mask: u64) -> [u32; 2] {
    [mask as u32, (mask >> 32) as u32]
}

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
        let block = rust_layout!(
            WordBlock,
            [
                words_at,
                first_entry,
                patterns,
                per_pattern,
                lookups,
                pivots,
                sieve_words_at,
                cursors_at
            ]
        );
        assert_eq!(wgsl_layout(WORD_BLOCK_WGSL, "WordBlock"), block);
        let sign = rust_layout!(
            SignRecord,
            [
                first,
                signature_base,
                gathered_at,
                signatures,
                rest_main,
                rest_anti,
                pivots_main,
                pivots_anti,
                rest_mains,
                pivot_mains,
                cells_at,
                cells,
                north_main_shift,
                north_anti_shift,
                sent_at,
                padding
            ]
        );
        assert_eq!(wgsl_layout(SIGN_RECORD_WGSL, "SignRecord"), sign);
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
