//! The pair count's records ([`record!`]).

use crate::gpu::device::wire::record;

record! {
    /// Where a signature of a pair batch reaches (`pairs.wgsl`): its reached blocks,
    /// `reach[start..end]`, its head (its pivots' dense bits, and at bit 16 where a narrow
    /// word's rest starts; 0 for wide words), its sieve's index in the batch and where that
    /// sieve's patterns start in the batch.
    pub(crate) struct ReachAt {
        start: u32,
        end: u32,
        head: u32,
        sieve: u32,
        first: u32,
    }
}

record! {
    /// A block of stored words the GPU groups and makes tables of (`group.wgsl`,
    /// `tables.wgsl`): where its words start in the upload and its first entry in the
    /// tables, its patterns, the words a pattern, its sieve's lookups and the pivots its
    /// words are grouped by, and where its sieve's words and cursors start.
    pub(crate) struct WordBlock {
        words_at: u32,
        first_entry: u32,
        patterns: u32,
        per_pattern: u32,
        lookups: u32,
        pivots: u32,
        sieve_words_at: u32,
        cursors_at: u32,
    }
}

record! {
    /// A sieve whose other side the GPU signs (`signing.wgsl`): its first pattern (or
    /// candidate) and signature in the batch, where its gathered values' signatures start
    /// in `gathered`, its signatures; the masks of the seen diagonals past the pivots and
    /// of the pivots (main, then anti) and how many main diagonals each holds; where it is
    /// joined on the GPU, where its cells start and how many (none: its patterns were
    /// sent) and how far a north placement's words move up when unpacked; where its
    /// patterns were sent, where they start in them.
    pub(crate) struct SignRecord {
        first: u32,
        signature_base: u32,
        gathered_at: u32,
        signatures: u32,
        rest_main: [u32; 2],
        rest_anti: [u32; 2],
        pivots_main: [u32; 2],
        pivots_anti: [u32; 2],
        rest_mains: u32,
        pivot_mains: u32,
        cells_at: u32,
        cells: u32,
        north_main_shift: u32,
        north_anti_shift: u32,
        sent_at: u32,
        padding: u32,
    }
}

record! {
    /// A cell of a half the GPU joins (`join.wgsl`): its first candidate in the batch, where
    /// its north and south placements' places start in the batch's place lists, and how
    /// many south ones it has.
    pub(crate) struct CellRecord {
        first: u32,
        north_at: u32,
        south_at: u32,
        south_len: u32,
    }
}

record! {
    /// What the GPU counted of a sieve of a batch: its patterns' clashes added up
    /// (`pairs.wgsl`: atomic adds to its low and high words) and its first pattern's; where
    /// it signed the other side (`places.wgsl`), the pairs visited and its patterns (those
    /// it joined, where it joined them). The clashes of the batch's spot-checked patterns
    /// follow the sieves' sums in the same buffer.
    pub(crate) struct SieveSums {
        clashes_low: u32,
        clashes_high: u32,
        first_clashes: u32,
        visited_low: u32,
        visited_high: u32,
        patterns: u32,
    }
}

record! {
    /// The parameters of a pair batch's dispatches (`gpu/pairs/queue.rs`), one buffer for
    /// all of its kernels.
    pub(crate) struct PairParams {
        /// Patterns of the other side.
        patterns: u32,
        /// The most lookups of a sieve of the batch (at most 26: a dense word's 128 bits);
        /// a pattern's dense word is 0 past its own sieve's.
        lookups: u32,
        /// The stored blocks of the batch (the tables to make, where it was sent words).
        blocks: u32,
        /// Words a pattern of the other side takes once in signature order: `NARROW_WORDS`
        /// or `DENSE_WORDS + 1` (sent as it came, `RAW_WORDS`, where the GPU signs it).
        pattern_words: u32,
        /// 1 where the GPU put the other side in signature order (`order.wgsl`): the pair
        /// kernel knows the patterns it spot-checks by where they came.
        ordered_here: u32,
        /// Sieves of the batch: the pair kernel writes its spot checks' clashes past their
        /// sums.
        sieves: u32,
        /// Patterns between two of the pair kernel's spot checks past each sieve's first.
        spot_every: u32,
        /// Where the join's hints start in the cells' place lists (`join.wgsl`).
        hints_at: u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::device::wire::layouts;

    #[test]
    fn each_record_is_laid_out_as_its_wgsl_struct() {
        let records = [
            layouts::<ReachAt>(),
            layouts::<WordBlock>(),
            layouts::<SignRecord>(),
            layouts::<CellRecord>(),
            layouts::<SieveSums>(),
            layouts::<PairParams>(),
        ];
        for [wgsl, rust] in records {
            assert_eq!(wgsl, rust);
        }
    }
}
