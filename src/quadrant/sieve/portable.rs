//! The portable loops, which every CPU runs (ARM's, and x86's without AVX2): the
//! sieve's steps in plain Rust, and the layout, count and sort built of them.

use super::batching::{RunOrder, RunReads};
use super::layout::DenseWords;
use super::layout::{Gather, Sieve, Sorted, Writes, MOST_LOOKUPS};
use super::pairs::{count_body, fill_entries, Share};
use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::{Signature, Signatures, SortBuffers};
use std::collections::TryReserveError;
use std::sync::atomic::AtomicBool;

/// [`Sieve::slice`] with the transposes by rounds of shifts.
pub(super) fn slice(sieve: &mut Sieve, patterns: &[Pattern]) -> Result<(), TryReserveError> {
    sieve.slice(patterns, transpose64)
}

/// [`Sieve::slice_words`] with the transposes by rounds of shifts.
pub(super) fn slice_words(sieve: &mut Sieve, dense: &DenseWords) -> Result<(), TryReserveError> {
    sieve.slice_words(dense, transpose64)
}

/// The counting loop ([`count_body`]) on the portable steps: diagonals gathered a lookup
/// at a time, every lookup read, runs ordered by a counting sort.
pub(super) fn count<const BATCHED: bool>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
) -> Option<u64> {
    let loops = (
        Gather::gather_by_lookups,
        add_popcounts,
        fill_every,
        order_by_reads,
    );
    count_body::<false, BATCHED>(sieve, share, stop, loops)
}

/// [`Signatures::sort`] a signature and a written pattern at a time, by lookups.
pub(super) fn sort<W: Writes>(
    (signatures, write): (&Signatures, W),
    patterns: &[Pattern],
    buffers: SortBuffers<W::Out>,
) -> Sorted {
    let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| {
        Signatures::sign_each(patterns, out, |p| signatures.signature(p))
    };
    let record = |p, s| write.write(p, s, Gather::gather_by_lookups);
    Signatures::sort(
        patterns,
        (sign_all, signatures.groups()),
        (record, W::GROUPED),
        buffers,
    )
}

/// Transposes a 64×64 bit matrix in place: bit `c` of `rows[r]` becomes bit `r` of
/// `rows[c]` (six rounds of swapping off-diagonal blocks of 32, 16, ... 1 bits).
#[inline(always)]
pub(super) fn transpose64(rows: &mut [u64; 64]) {
    swap_blocks::<32>(rows, 0x0000_0000_FFFF_FFFF);
    swap_blocks::<16>(rows, 0x0000_FFFF_0000_FFFF);
    swap_blocks::<8>(rows, 0x00FF_00FF_00FF_00FF);
    swap_blocks::<4>(rows, 0x0F0F_0F0F_0F0F_0F0F);
    swap_blocks::<2>(rows, 0x3333_3333_3333_3333);
    swap_blocks::<1>(rows, 0x5555_5555_5555_5555);
}

/// One round of [`transpose64`]: rows `k` and `k + W` (`k & W == 0`) swap the bits of `low`
/// shifted up by `W` with those of `low`. The rows of a round come in runs of `W`, which
/// the compiler turns into vector code.
#[inline(always)]
pub(super) fn swap_blocks<const W: usize>(rows: &mut [u64; 64], low: u64) {
    for base in (0..64).step_by(2 * W) {
        for k in base..base + W {
            let swap = ((rows[k] >> W) ^ rows[k + W]) & low;
            rows[k + W] ^= swap;
            rows[k] ^= swap << W;
        }
    }
}

/// A pattern's entries for every one of its `own` lookups from `first` on.
#[inline(always)]
pub(super) fn fill_every(dense: u64, first: usize, own: usize, entries: &mut [u32]) -> usize {
    fill_entries(dense, first, &mut entries[..own]);
    own
}

/// Puts a run's `len` patterns (`reads[..len]`, each at most `most`) in `order` by
/// increasing reads, in the run's order where they read alike: a counting sort (the
/// definition, which the loops without compaction never need).
pub(super) fn order_by_reads(reads: &RunReads, (len, _): (usize, usize), order: &mut RunOrder) {
    let mut by_reads = [0u16; MOST_LOOKUPS + 2];
    for &r in &reads[..len] {
        by_reads[usize::from(r) + 1] += 1;
    }
    for r in 1..by_reads.len() {
        by_reads[r] += by_reads[r - 1];
    }
    for (i, &r) in reads[..len].iter().enumerate() {
        let at = &mut by_reads[usize::from(r)];
        order[usize::from(*at)] = i as u8;
        *at += 1;
    }
}

/// Adds each word's popcount to `counts` (kept per word, so the compiler keeps a vector).
#[inline(always)]
pub(super) fn add_popcounts(counts: &mut [u64; 4], clash: &[[u64; 4]]) {
    for c in clash {
        for w in 0..4 {
            counts[w] += u64::from(c[w].count_ones());
        }
    }
}

/// How many of the narrow dense `words` (low word first) share no bit with `dense`: a
/// loop the compiler turns into vector code.
#[inline(always)]
pub(super) fn disjoint_narrow(words: &[[u32; 2]], dense: u64) -> usize {
    let mut disjoint = 0;
    for w in words {
        disjoint += usize::from((u64::from(w[0]) | u64::from(w[1]) << 32) & dense == 0);
    }
    disjoint
}
