//! The sieve's loops compiled for AVX2 (the 256-bit ORs become one instruction), BMI2
//! (`pext` packs a pattern's seen diagonals) and popcnt.
//!
//! Each is a function compiled for them that makes its steps as closures: a closure made
//! in a function not compiled for them went through a shim built for the baseline CPU
//! (SSE2), not inlined (6 % of `count 18 -t 1` in the slicing, the other side's order 1.2
//! times as long).

use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::{Signature, Signatures, SortBuffers};
use crate::quadrant::sieve::batching::{RunOrder, RunReads};
use crate::quadrant::sieve::layout::DenseWords;
use crate::quadrant::sieve::layout::NARROW_WORDS;
use crate::quadrant::sieve::layout::{Gather, Sieve, Sorted, Writes};
use crate::quadrant::sieve::offload::PairWork;
use crate::quadrant::sieve::pairs::{count_body, Ordered, Share};
use crate::quadrant::sieve::portable::disjoint_narrow as portable_disjoint_narrow;
use crate::quadrant::sieve::portable::{add_popcounts, fill_every, order_by_reads, transpose64};
use crate::quadrant::sieve::words::StoredDense;
use std::collections::TryReserveError;
use std::sync::atomic::AtomicBool;

/// [`Sieve::slice`] compiled for AVX2.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn slice(sieve: &mut Sieve, patterns: &[Pattern]) -> Result<(), TryReserveError> {
    #[allow(clippy::redundant_closure)]
    sieve.slice(patterns, |rows| transpose64(rows))
}

/// [`Sieve::slice_words`] compiled for AVX2.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn slice_words(sieve: &mut Sieve, dense: &DenseWords) -> Result<(), TryReserveError> {
    #[allow(clippy::redundant_closure)]
    sieve.slice_words(dense, |rows| transpose64(rows))
}

/// The counting loop ([`count_body`]) compiled for AVX2, BMI2 and popcnt, on the portable
/// steps but for `pext`.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn count<const BATCHED: bool>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
) -> Option<u64> {
    let steps = (add_popcounts, fill_every, order_by_reads);
    count_by_pext::<false, BATCHED>(sieve, share, stop, steps)
}

/// [`count_body`] with a pattern's seen diagonals packed by `pext`, the clashes' popcounts
/// added up by `add`: the body of the loops built for BMI2.
#[inline(always)]
pub(super) fn count_by_pext<const COMPACT: bool, const BATCHED: bool>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
    (add, fill_rest, order): (
        impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
        impl Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
        impl Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
    ),
) -> Option<u64> {
    // SAFETY: inlined only into loops compiled for BMI2, which are made only where the CPU
    // has it (`PairKernel`).
    let pext = |x, mask| unsafe { std::arch::x86_64::_pext_u64(x, mask) };
    let pack = |part: &Gather, p| part.gather(p, pext);
    count_body::<COMPACT, BATCHED>(sieve, share, stop, (pack, add, fill_rest, order))
}

/// A loaded sieve's work for a device ([`PairWork`]) compiled for BMI2, the dense words
/// gathered by `pext`.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn work<'a>(
    sieve: &'a Sieve,
    others: Ordered<'a>,
    written: Option<&'a [[u32; NARROW_WORDS]]>,
) -> PairWork<'a> {
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    sieve.work_with(others, written, |part: &Gather, p| part.gather(p, pext))
}

/// [`StoredDense::all`] compiled for BMI2, the dense words gathered by `pext`.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn dense<const W: usize>(
    write: StoredDense<W>,
    patterns: &[Pattern],
    buffers: (&mut Vec<[u32; W]>, &mut [u32]),
) -> Result<(), TryReserveError> {
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    write.all(patterns, |part: &Gather, p| part.gather(p, pext), buffers)
}

/// [`portable::disjoint_narrow`](crate::quadrant::sieve::portable::disjoint_narrow)
/// compiled for AVX2 (a spot check's count over the words).
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn disjoint_narrow(words: &[[u32; 2]], dense: u64) -> usize {
    portable_disjoint_narrow(words, dense)
}

/// [`Signatures::sort`] compiled for BMI2, the signatures and what `write` writes gathered
/// by `pext`.
#[target_feature(enable = "avx2,bmi2,popcnt")]
pub(crate) fn sort<W: Writes>(
    (signatures, write): (&Signatures, W),
    patterns: &[Pattern],
    buffers: SortBuffers<W::Out>,
) -> Sorted {
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| {
        Signatures::sign_each(patterns, out, |p| signatures.signature_by(p, pext))
    };
    let record = |p, s| write.write(p, s, |part: &Gather, p| part.gather(p, pext));
    Signatures::sort(
        patterns,
        (sign_all, signatures.groups()),
        (record, W::GROUPED),
        buffers,
    )
}
