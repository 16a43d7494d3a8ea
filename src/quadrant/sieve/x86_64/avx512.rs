//! The AVX2 loops with what AVX-512 adds to them: popcounts by `vpopcntq`, a pattern's
//! occupied lookups packed by `vpcompressd`, runs ordered by `vpcompressb`, signatures four
//! at a time by `vpshufbitqmb`, and the slicing's bit transposes by GFNI.

use super::avx2::count_by_pext;
use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::{Signature, Signatures, SortBuffers};
use crate::quadrant::sieve::batching::{RunOrder, RunReads, RUN};
use crate::quadrant::sieve::layout::DenseWords;
use crate::quadrant::sieve::layout::{Gather, Sieve, Sorted, Writes};
use crate::quadrant::sieve::layout::{TABLE_BITS, TABLE_ENTRIES};
use crate::quadrant::sieve::pairs::{Share, SLICE_BYTES};
use std::collections::TryReserveError;
use std::sync::atomic::AtomicBool;

/// [`Sieve::slice`] compiled for AVX2, its transposes by GFNI on AVX-512: paired against
/// the AVX2 slicing on Zen 5, `count 18 -t 1` took 0.95 times as long.
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) fn slice(sieve: &mut Sieve, patterns: &[Pattern]) -> Result<(), TryReserveError> {
    // SAFETY: compiled for them.
    sieve.slice(patterns, |rows| unsafe { transpose64_gfni(rows) })
}

/// [`Sieve::slice_words`] compiled as [`slice()`] is.
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512vbmi,gfni")]
pub(crate) fn slice_words(sieve: &mut Sieve, dense: &DenseWords) -> Result<(), TryReserveError> {
    // SAFETY: compiled for them.
    sieve.slice_words(dense, |rows| unsafe { transpose64_gfni(rows) })
}

/// The AVX2 counting loop with the popcounts taken by `vpopcntq` (AVX-512 VPOPCNTDQ on
/// 256-bit vectors: paired against it on Zen 5, `count 18 -t 1` took 0.97 times as long),
/// and each pattern reading only the lookups it occupies ([`fill_occupied_avx512`]: 0.96 at
/// N = 18, 0.91 at a shard of N = 20).
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512vl,avx512vpopcntdq,avx512bw,avx512vbmi2")]
pub(crate) fn count<const BATCHED: bool>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
) -> Option<u64> {
    use std::arch::x86_64::*;
    let add = |counts: &mut [u64; 4], clash: &[[u64; 4]]| {
        // SAFETY: each points to four u64, read and written unaligned.
        let popcount =
            |c: &[u64; 4]| _mm256_popcnt_epi64(unsafe { _mm256_loadu_si256(c.as_ptr().cast()) });
        // the blocks' counts added up before the sums: one add a pattern waits on the last
        let total = clash[1..].iter().fold(popcount(&clash[0]), |total, c| {
            _mm256_add_epi64(total, popcount(c))
        });
        let sums = unsafe { _mm256_loadu_si256(counts.as_ptr().cast()) };
        let sums = _mm256_add_epi64(sums, total);
        unsafe { _mm256_storeu_si256(counts.as_mut_ptr().cast(), sums) };
    };
    // SAFETY: compiled for AVX-512 F.
    let fill = |dense, first, own, entries: &mut [u32]| unsafe {
        fill_occupied_avx512(dense, first, own, entries)
    };
    // SAFETY: compiled for AVX-512 BW and VBMI2.
    let order = |reads: &RunReads, run, order: &mut RunOrder| unsafe {
        order_by_reads_avx512(reads, run, order)
    };
    count_by_pext::<true, BATCHED>(sieve, share, stop, (add, fill, order))
}

/// The AVX2 sort with the signatures gathered four at a time ([`sign_all_avx512`]).
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512bitalg")]
pub(crate) fn sort<W: Writes>(
    (signatures, write): (&Signatures, W),
    patterns: &[Pattern],
    buffers: SortBuffers<W::Out>,
) -> Sorted {
    // SAFETY: compiled for them.
    let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| unsafe {
        sign_all_avx512(signatures, patterns, out)
    };
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    let record = |p, s| write.write(p, s, |part: &Gather, p| part.gather(p, pext));
    Signatures::sort(
        patterns,
        (sign_all, signatures.groups()),
        (record, W::GROUPED),
        buffers,
    )
}

/// Appends each pattern's signature to `out` ([`Signatures::sign_each`]), four patterns at
/// a time where the pivots allow ([`Signatures::four_at_once`]): one `vpshufbitqmb` takes
/// the pivots' bits of four patterns (a 64-byte load) into a mask, whose kept bits one
/// `pext` packs into their four gathered words; one `pext` a direction a pattern before.
/// Returns the patterns' union.
///
/// # Safety
///
/// The CPU has BMI2 and AVX-512 F, BW and BITALG.
#[inline(always)]
pub(crate) unsafe fn sign_all_avx512(
    signatures: &Signatures,
    patterns: &[Pattern],
    out: &mut Vec<Signature>,
) -> Pattern {
    use std::arch::x86_64::*;
    // SAFETY: the CPU has BMI2 (the caller's promise).
    let pext = |x, mask| unsafe { _pext_u64(x, mask) };
    let Some((indices, keep, width)) = signatures.four_at_once() else {
        return Signatures::sign_each(patterns, out, |p| signatures.signature_by(p, pext));
    };
    let fours = patterns.len() / 4;
    let field = (1u64 << width) - 1;
    let mut words = [0u64; 8];
    // SAFETY: `Pattern` is `repr(C)`, two u64: four are one unaligned 64-byte load, the
    // `i`th four below `fours`; the instructions are the CPU's (the caller's promise).
    unsafe {
        let indices = _mm512_loadu_si512(indices.as_ptr().cast());
        let mut union = _mm512_setzero_si512();
        let from = patterns.as_ptr();
        for i in 0..fours {
            let four = _mm512_loadu_si512(from.add(4 * i).cast());
            union = _mm512_or_si512(union, four);
            let bits = pext(_mm512_bitshuffle_epi64_mask(four, indices), keep);
            out.extend_from_slice(&[
                signatures.of_gathered(bits & field),
                signatures.of_gathered(bits >> width & field),
                signatures.of_gathered(bits >> (2 * width) & field),
                signatures.of_gathered(bits >> (3 * width) & field),
            ]);
        }
        _mm512_storeu_si512(words.as_mut_ptr().cast(), union);
    }
    let rest = &patterns[4 * fours..];
    let union = Signatures::sign_each(rest, out, |p| signatures.signature_by(p, pext));
    (0..4).fold(union, |union, k| {
        union.with(Pattern {
            main: words[2 * k],
            anti: words[2 * k + 1],
        })
    })
}

/// [`fill_every`](crate::quadrant::sieve::portable::fill_every) keeping only the entries of the lookups where the pattern occupies a
/// diagonal (about 40 % of them are empty: reading an empty subset's entry changes nothing),
/// packed at the front by `vpcompressd` in a register, stored whole: `entries` has room for
/// 16, and at most 16 lookups are asked for (`own`: one word holds 64 dense bits).
///
/// # Safety
///
/// The CPU has AVX-512 F.
#[inline(always)]
pub(crate) unsafe fn fill_occupied_avx512(
    dense: u64,
    first: usize,
    own: usize,
    entries: &mut [u32],
) -> usize {
    use std::arch::x86_64::*;
    // lane i's shift: lookup i's bits, for lookups 0..8 and 8..16
    const SHIFT: [i64; 16] = {
        let mut shift = [0; 16];
        let mut i = 0;
        while i < 16 {
            shift[i] = (i as u32 * TABLE_BITS) as i64;
            i += 1;
        }
        shift
    };
    const STEP: [i32; 16] = {
        let mut step = [0; 16];
        let mut i = 0;
        while i < 16 {
            step[i] = (i * TABLE_ENTRIES) as i32;
            i += 1;
        }
        step
    };
    const _: () = assert!(
        SLICE_BYTES == 1 << 5,
        "an entry's offset is its index times 32"
    );
    assert!(
        own <= 16 && entries.len() >= 16,
        "16 entries of room, at most 16 kept"
    );
    // SAFETY: the instructions are the CPU's (the caller's promise); the constants are read
    // as unaligned vectors, and the one store writes 16 u32 to `entries`, which has them.
    unsafe {
        let word = _mm512_set1_epi64(dense as i64);
        let low = _mm512_loadu_si512(SHIFT.as_ptr().cast());
        let high = _mm512_loadu_si512(SHIFT[8..].as_ptr().cast());
        // lookup i's subset in lane i (a shift past 63 gives 0)
        let subsets = _mm512_inserti64x4::<1>(
            _mm512_castsi256_si512(_mm512_cvtepi64_epi32(_mm512_srlv_epi64(word, low))),
            _mm512_cvtepi64_epi32(_mm512_srlv_epi64(word, high)),
        );
        let subsets = _mm512_and_si512(subsets, _mm512_set1_epi32(TABLE_ENTRIES as i32 - 1));
        let lanes = ((1u32 << own) - 1) as u16;
        let occupied = _mm512_mask_test_epi32_mask(lanes, subsets, subsets);
        let at = _mm512_add_epi32(
            _mm512_set1_epi32((first * TABLE_ENTRIES) as i32),
            _mm512_loadu_si512(STEP.as_ptr().cast()),
        );
        let offsets = _mm512_slli_epi32::<5>(_mm512_add_epi32(at, subsets));
        let kept = _mm512_maskz_compress_epi32(occupied, offsets);
        _mm512_storeu_si512(entries.as_mut_ptr().cast(), kept);
        occupied.count_ones() as usize
    }
}

/// [`order_by_reads`](crate::quadrant::sieve::portable::order_by_reads) 64 patterns at a time: for each number of reads, the indices of the
/// patterns reading that many packed by `vpcompressb` (the counting sort's stores were a
/// tenth of the counting loop at N = 16). `reads` past the run's are `u8::MAX`.
///
/// # Safety
///
/// The CPU has AVX-512 F, BW and VBMI2.
#[inline(always)]
pub(crate) unsafe fn order_by_reads_avx512(
    reads: &RunReads,
    (len, most): (usize, usize),
    order: &mut RunOrder,
) {
    use std::arch::x86_64::*;
    const INDICES: [u8; RUN] = {
        let mut indices = [0; RUN];
        let mut i = 0;
        while i < RUN {
            indices[i] = i as u8;
            i += 1;
        }
        indices
    };
    let mut end = 0;
    // SAFETY: each load reads 64 of the RUN bytes of `reads` or `INDICES`; each store
    // writes 64 bytes at `end`, at most RUN (the patterns kept before it), into `order`'s
    // RUN + 64. The instructions are the CPU's (the caller's promise).
    unsafe {
        for r in 0..=most {
            let wanted = _mm512_set1_epi8(r as i8);
            for chunk in 0..len.div_ceil(64) {
                let these = _mm512_loadu_si512(reads.as_ptr().add(chunk * 64).cast());
                let with = _mm512_cmpeq_epi8_mask(these, wanted);
                let indices = _mm512_loadu_si512(INDICES.as_ptr().add(chunk * 64).cast());
                let packed = _mm512_maskz_compress_epi8(with, indices);
                _mm512_storeu_si512(order.as_mut_ptr().add(end).cast(), packed);
                end += with.count_ones() as usize;
            }
        }
    }
}

/// [`transpose64`](crate::quadrant::sieve::portable::transpose64) on AVX-512 with GFNI, about 70 instructions where the rounds take near
/// 400: `vgf2p8affineqb` transposes the 8×8 bit block held in each 64-bit word, so the
/// blocks are gathered into words (a byte shuffle of each 8 rows), transposed, and the words
/// moved to their places (byte, then 128-bit interleaves).
///
/// # Safety
///
/// The CPU has AVX-512 F, BW and VBMI, and GFNI.
#[inline(always)]
pub(crate) unsafe fn transpose64_gfni(rows: &mut [u64; 64]) {
    use std::arch::x86_64::*;
    // word `k` of 8 rows' bytes takes byte `k` of each row, the last row first: the affine
    // transform reads a matrix's rows from its top byte down
    const GATHER: [u8; 64] = {
        let mut at = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            let (k, s) = (i / 8, i % 8);
            at[i] = (8 * (7 - s) + k) as u8;
            i += 1;
        }
        at
    };
    // SAFETY: the instructions are the CPU's (the caller's promise); `rows` is 512 bytes,
    // read and written as eight unaligned 64-byte vectors, `GATHER` 64 bytes.
    unsafe {
        let gather = _mm512_loadu_si512(GATHER.as_ptr().cast());
        // byte `i` of each word: bit `i` of the matrix's rows
        let identity = _mm512_set1_epi64(0x8040_2010_0804_0201_u64 as i64);
        // t[g]'s byte `c`: column `c` of rows 8g..8g + 8, row 8g in bit 0
        let t: [__m512i; 8] = std::array::from_fn(|g| {
            let z = _mm512_loadu_si512(rows.as_ptr().add(8 * g).cast());
            let blocks = _mm512_permutexvar_epi8(gather, z);
            _mm512_gf2p8affine_epi64_epi8::<0>(identity, blocks)
        });
        // interleave the eight: in each 128-bit lane `l`, word `q` of o[r] gathers column
        // 16 l + 2 r + q from all eight
        let a: [__m512i; 8] = std::array::from_fn(|i| {
            let (x, y) = (t[i / 2 * 2], t[i / 2 * 2 + 1]);
            if i % 2 == 0 {
                _mm512_unpacklo_epi8(x, y)
            } else {
                _mm512_unpackhi_epi8(x, y)
            }
        });
        // b[4 u + 2 h + e]: rows 4u..4u + 4 of the result's bytes, columns 16 l + 8 h + 4 e + d
        let b: [__m512i; 8] = std::array::from_fn(|i| {
            let (u, h, e) = (i / 4, i / 2 % 2, i % 2);
            let (x, y) = (a[4 * u + h], a[4 * u + 2 + h]);
            if e == 0 {
                _mm512_unpacklo_epi16(x, y)
            } else {
                _mm512_unpackhi_epi16(x, y)
            }
        });
        let o: [__m512i; 8] = std::array::from_fn(|r| {
            let (x, y) = (b[r / 2], b[4 + r / 2]);
            if r % 2 == 0 {
                _mm512_unpacklo_epi32(x, y)
            } else {
                _mm512_unpackhi_epi32(x, y)
            }
        });
        // lane `l` of o[4 v..4 v + 4] holds columns 16 l + 8 v .. + 8: gather the lanes
        for v in 0..2 {
            let o = &o[4 * v..4 * v + 4];
            let low = _mm512_shuffle_i64x2::<0x44>(o[0], o[1]);
            let high = _mm512_shuffle_i64x2::<0xEE>(o[0], o[1]);
            let low2 = _mm512_shuffle_i64x2::<0x44>(o[2], o[3]);
            let high2 = _mm512_shuffle_i64x2::<0xEE>(o[2], o[3]);
            let lanes = [
                _mm512_shuffle_i64x2::<0x88>(low, low2),
                _mm512_shuffle_i64x2::<0xDD>(low, low2),
                _mm512_shuffle_i64x2::<0x88>(high, high2),
                _mm512_shuffle_i64x2::<0xDD>(high, high2),
            ];
            for (l, lane) in lanes.into_iter().enumerate() {
                _mm512_storeu_si512(rows.as_mut_ptr().add(16 * l + 8 * v).cast(), lane);
            }
        }
    }
}
