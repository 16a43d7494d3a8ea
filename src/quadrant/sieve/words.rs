//! The stored side as a device that groups and slices it itself takes it
//! ([`Made::Words`](super::layout::Made::Words)): each pattern's dense word in the order
//! the joins made them, counted by its pivots' bits (what the grouping's cursors are made
//! of, `Sieve::group_words`); and the grouping the CPU does in its place where the device
//! declines.

use super::layout::{DenseWords, Gather};
use crate::quadrant::pattern::Pattern;
use std::collections::TryReserveError;

impl DenseWords {
    /// Puts these words in `grouped`, each value of their pivots' bits from its place in
    /// `cursors` on (as a device does, but in the order they came: a counting sort's
    /// scatter).
    pub(super) fn group_into(
        &self,
        cursors: &[u32],
        grouped: &mut DenseWords,
    ) -> Result<(), TryReserveError> {
        let mut next = Vec::new();
        next.try_reserve_exact(cursors.len())?;
        next.extend_from_slice(cursors);
        grouped.per_pattern = self.per_pattern;
        match self.per_pattern {
            4 => scatter(&self.wide, &mut grouped.wide, &mut next),
            _ => scatter(&self.narrow, &mut grouped.narrow, &mut next),
        }
    }

    /// Every pattern's words, in order.
    pub(super) fn words(&self) -> &[u32] {
        match self.per_pattern {
            4 => self.wide.as_flattened(),
            _ => self.narrow.as_flattened(),
        }
    }
}

/// Puts each of `words` at `next`'s place for its pivots' bits (the low bits of its first
/// word), and moves that place on.
fn scatter<const W: usize>(
    words: &[[u32; W]],
    to: &mut Vec<[u32; W]>,
    next: &mut [u32],
) -> Result<(), TryReserveError> {
    to.clear();
    to.try_reserve(words.len())?;
    to.resize(words.len(), [0; W]);
    let pivots = next.len() - 1;
    for word in words {
        let at = &mut next[word[0] as usize & pivots];
        to[*at as usize] = *word;
        *at += 1;
    }
    Ok(())
}

/// How each stored pattern is written where a device makes the tables: its dense word
/// ([`DenseWords`]) as `W` 32-bit words, gathered by the seen pivots and the rest moved
/// where the stored patterns are (`pivots`, `rest`; the rest's bits from `pivot_bits` on).
#[derive(Clone, Copy)]
pub(super) struct StoredDense<'a, const W: usize> {
    pub(super) pivots: &'a Gather,
    pub(super) rest: &'a Gather,
    pub(super) pivot_bits: u32,
}

impl<const W: usize> StoredDense<'_, W> {
    /// `p`'s dense word, gathered by `gather`, as `W` 32-bit words.
    #[inline(always)]
    fn words(self, p: Pattern, gather: impl Fn(&Gather, Pattern) -> (u64, u64)) -> [u32; W] {
        let pivots = self.pivots.word(gather(self.pivots, p));
        if W <= 2 {
            // (narrow: the whole word fits 64 bits, and 128-bit shifts cost more)
            let dense = pivots | self.rest.word(gather(self.rest, p)) << self.pivot_bits;
            return std::array::from_fn(|w| (dense >> (32 * w)) as u32);
        }
        let (main, anti) = gather(self.rest, p);
        let rest = u128::from(main) | u128::from(anti) << self.rest.main_count;
        let dense = u128::from(pivots) | rest << self.pivot_bits;
        std::array::from_fn(|w| (dense >> (32 * w)) as u32)
    }

    /// Appends each of `patterns`' dense words to `out`, in order, gathered by `gather`, and
    /// counts them by their pivots' bits (the lowest of the dense word) in `sizes`, which
    /// has a place for every value of them.
    #[inline(always)]
    pub(super) fn all(
        self,
        patterns: &[Pattern],
        gather: impl Fn(&Gather, Pattern) -> (u64, u64) + Copy,
        (out, sizes): (&mut Vec<[u32; W]>, &mut [u32]),
    ) -> Result<(), TryReserveError> {
        out.clear();
        out.try_reserve(patterns.len())?;
        // written in place: pushed one by one (each push reloaded the length) they took 1.3
        // times as long at N = 18, extended from a map twice
        out.resize(patterns.len(), [0; W]);
        let pivots = sizes.len() - 1;
        // four counters a value, a pattern each in turn: joined patterns come in runs of
        // one value, and one counter bumped again and again waits on its own last store
        let mut counters = Vec::new();
        counters.try_reserve_exact(sizes.len())?;
        counters.resize(sizes.len(), [0u32; 4]);
        let (fours, rest) = patterns.as_chunks::<4>();
        let (out_fours, out_rest) = out.as_chunks_mut::<4>();
        for (four, to) in fours.iter().zip(out_fours) {
            for k in 0..4 {
                let words = self.words(four[k], gather);
                counters[words[0] as usize & pivots][k] += 1;
                to[k] = words;
            }
        }
        for (&p, to) in rest.iter().zip(out_rest) {
            let words = self.words(p, gather);
            counters[words[0] as usize & pivots][0] += 1;
            *to = words;
        }
        for (size, counters) in sizes.iter_mut().zip(&counters) {
            *size = counters.iter().sum();
        }
        Ok(())
    }
}
