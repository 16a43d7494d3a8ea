//! Joining two quarters' placements into half-board patterns: every pair that shares no
//! diagonal (the quadrant engine's tables give the pairs to try, cell by cell).

use super::pair_kernel::PairKernel;
use super::pattern::{Packed, Pattern, Region, Stored};
use std::collections::TryReserveError;
use std::mem::MaybeUninit;

/// The quarter placements of one cell: north ones packed in their region (unpacked once
/// each), south ones as patterns.
pub type Cell<'a> = (&'a [Packed], &'a [Pattern]);

/// Appends to `out`, for each cell `(upper, lower)` of `cells` in turn, every `p.with(q)`
/// for `p` of `upper` (placements of `region`) and `q` of `lower` that share no diagonal
/// with each other or with `avoid`, on the loop `pairs`. Several cells a call: a call per
/// cell took `count 17 -t 1` 1.02 times as long.
pub fn pair_up(
    pairs: PairKernel,
    (region, cells): (Region, &[Cell]),
    avoid: Pattern,
    out: &mut Vec<Pattern>,
) -> Result<(), TryReserveError> {
    // candidates are written unconditionally into room for every pair, never zeroed first
    let pairs_in = |&(upper, lower): &Cell| upper.len() * lower.len();
    let room: usize = cells.iter().map(pairs_in).sum();
    out.try_reserve(room)?;
    let room = &mut out.spare_capacity_mut()[..room];
    let kept = match pairs {
        PairKernel::Scalar => each_cell(cells, room, |cell, room| {
            pair_up_body((region, cell.0), cell.1, avoid, room)
        }),
        // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2 and popcnt.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2 => unsafe { pair_up_avx2(region, cells, avoid, room) },
        // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has AVX-512 F
        // and VL besides.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2WithAvx512 => unsafe { pair_up_avx512(region, cells, avoid, room) },
    };
    // SAFETY: the loops wrote `room[..kept]`, which lies within the capacity reserved above.
    unsafe { out.set_len(out.len() + kept) };
    Ok(())
}

/// The patterns of a row set's cells: cell `c`'s at `offsets[c]..offsets[c + 1]` of the
/// patterns.
pub type Cells<'a, P> = (&'a [u32], &'a [P]);

/// Appends to `kept` the patterns of each cell of `cells` that share no diagonal with
/// `avoid`, and to `kept_offsets` where each cell's start and end fall there, on the loop
/// `pairs`.
pub fn keep_disjoint(
    pairs: PairKernel,
    cells: Cells<Pattern>,
    avoid: Pattern,
    (kept_offsets, kept): (&mut Vec<u32>, &mut Vec<Pattern>),
) -> Result<(), TryReserveError> {
    kept_offsets.try_reserve(cells.0.len())?;
    kept.try_reserve(cells.1.len())?;
    let base = kept.len();
    let room = &mut kept.spare_capacity_mut()[..cells.1.len()];
    let out = (room, base, &mut *kept_offsets);
    let end = match pairs {
        // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has AVX-512 F
        // and VL.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2WithAvx512 => unsafe { keep_disjoint_avx512(cells, avoid, out) },
        _ => each_kept_cell(cells, out, |from, to| keep_disjoint_body(from, avoid, to)),
    };
    // SAFETY: the loops wrote `room[..end]`, which lies within the capacity reserved above.
    unsafe { kept.set_len(base + end) };
    Ok(())
}

/// Runs `keep` on each cell of `cells` with the room past what the cells before it kept,
/// pushing where each ends (past `base`); how many they kept in all.
#[inline(always)]
fn each_kept_cell(
    (offsets, patterns): Cells<Pattern>,
    (room, base, ends): (&mut [MaybeUninit<Pattern>], usize, &mut Vec<u32>),
    mut keep: impl FnMut(&[Pattern], &mut [MaybeUninit<Pattern>]) -> usize,
) -> usize {
    ends.extend(offsets.first().map(|_| base as u32));
    let mut end = 0;
    for cell in offsets.windows(2) {
        end += keep(
            &patterns[cell[0] as usize..cell[1] as usize],
            &mut room[end..],
        );
        ends.push((base + end) as u32);
    }
    end
}

/// Writes at the front of `to` (as long as `from`) the patterns of `from` that share no
/// diagonal with `avoid`; how many.
#[inline(always)]
fn keep_disjoint_body(from: &[Pattern], avoid: Pattern, to: &mut [MaybeUninit<Pattern>]) -> usize {
    // every pattern is written and the end moves past the free ones: a branch on whether
    // one is free mispredicts half the time
    let to = &mut to[..from.len()];
    let mut kept = 0;
    for &q in from {
        to[kept].write(q);
        kept += usize::from(q.disjoint(avoid));
    }
    kept
}

/// [`keep_disjoint_body`] on each cell four patterns at a time: one `vptestmq` tests them,
/// and `vpcompressq` packs the kept ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,avx512f,avx512vl")]
fn keep_disjoint_avx512(
    cells: Cells<Pattern>,
    avoid: Pattern,
    out: (&mut [MaybeUninit<Pattern>], usize, &mut Vec<u32>),
) -> usize {
    use std::arch::x86_64::*;
    let none = _mm512_setzero_si512();
    let avoid_v = _mm512_broadcast_i32x4(_mm_set_epi64x(avoid.anti as i64, avoid.main as i64));
    each_kept_cell(cells, out, |from, to| {
        assert!(to.len() >= from.len(), "room for every pattern");
        let fours = from.len() / 4;
        let mut kept = 0;
        // SAFETY: `Pattern` is `repr(C)`, two u64: four are one unaligned 512-bit load. Each
        // store of four at `kept` (at most `4 i`) ends at most at `from.len()`, within `to`
        // (asserted above); the rest one at a time, after them. The instructions are the
        // CPU's (compiled for them).
        unsafe {
            let (src, dst) = (from.as_ptr(), to.as_mut_ptr());
            for i in 0..fours {
                let q = _mm512_loadu_si512(src.add(4 * i).cast());
                kept += keep_four(q, (none, avoid_v), dst.add(kept));
            }
        }
        kept + keep_disjoint_body(&from[4 * fours..], avoid, &mut to[kept..])
    })
}

/// Runs `join` on each cell with the room past what the cells before it kept; how many
/// they kept in all.
#[inline(always)]
fn each_cell(
    cells: &[Cell],
    room: &mut [MaybeUninit<Pattern>],
    mut join: impl FnMut(Cell, &mut [MaybeUninit<Pattern>]) -> usize,
) -> usize {
    let mut end = 0;
    for &cell in cells {
        end += join(cell, &mut room[end..]);
    }
    end
}

/// The same loop on 128-bit registers: a pattern is one register, a clash test one `vptest`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn pair_up_avx2(
    region: Region,
    cells: &[Cell],
    avoid: Pattern,
    room: &mut [MaybeUninit<Pattern>],
) -> usize {
    each_cell(cells, room, |(upper, lower), room| {
        // SAFETY: compiled for AVX2, which has SSE4.1.
        unsafe { pair_up_simd::<false, Packed>((region, upper), lower, avoid, room) }
    })
}

/// The same loop four pairs at a time on 512-bit registers: one `vptestmq` tests them, and
/// `vpcompressq` packs the kept ones into a register stored whole (a compress into memory is
/// slow on Zen 4). Paired against [`pair_up_avx2`] on Zen 5, `count 18 -t 1` took 0.95
/// times as long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt,avx512f,avx512vl")]
fn pair_up_avx512(
    region: Region,
    cells: &[Cell],
    avoid: Pattern,
    room: &mut [MaybeUninit<Pattern>],
) -> usize {
    each_cell(cells, room, |(upper, lower), room| {
        // SAFETY: compiled for AVX-512 F and VL.
        unsafe {
            if upper.len() > lower.len() {
                pair_down_avx512((region, upper), lower, avoid, room)
            } else {
                pair_up_simd::<true, Packed>((region, upper), lower, avoid, room)
            }
        }
    })
}

/// North placements a chunk of [`pair_down_avx512`] unpacks at a time (2 KiB on the stack).
#[cfg(target_arch = "x86_64")]
const DOWN_CHUNK: usize = 128;

/// [`pair_up_simd`] turned round, for a cell with more north placements than south ones:
/// the north placements that share no diagonal with `avoid` are unpacked, a chunk at a time,
/// four at a time (a 32-byte load widened and shifted, packed by `vpcompressq`), and each
/// south pattern is tried against them four at a time. Many cells pair a few south
/// patterns with many north placements, whose fixed cost a placement then paid for a few
/// pairs. Unpacked once, not once a south pattern, and without those on the middle
/// column's queen's diagonals (half of them on odd boards), with [`keep_disjoint`]'s south
/// row sets: `count 19 -t 2` 0.94 times as long, the south row sets alone 0.97.
///
/// # Safety
///
/// The CPU has AVX-512 F and VL.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pair_down_avx512(
    (region, upper): (Region, &[Packed]),
    lower: &[Pattern],
    avoid: Pattern,
    room: &mut [MaybeUninit<Pattern>],
) -> usize {
    assert!(
        room.len() >= upper.len() * lower.len(),
        "room for every pair"
    );
    // not zeroed: 2 KiB cleared a cell was 2 % of `count 19`
    let mut free = [const { MaybeUninit::<Pattern>::uninit() }; DOWN_CHUNK];
    let mut end = 0;
    for chunk in upper.chunks(DOWN_CHUNK) {
        // SAFETY: the caller's promise. `unpack_free` wrote `free[..kept]`.
        let free = unsafe {
            let kept = unpack_free(region, chunk, avoid, &mut free);
            std::slice::from_raw_parts(free.as_ptr().cast::<Pattern>(), kept)
        };
        // SAFETY: the caller's promise; AVX-512 F has SSE4.1. The chunk's pairs are at most
        // `chunk.len() * lower.len()`, so the chunks' together fit `room` (asserted above).
        end += unsafe {
            pair_up_simd::<true, Pattern>((region, lower), free, avoid, &mut room[end..])
        };
    }
    end
}

/// Writes at the front of `free` the board patterns of the placements of `region` in
/// `placements` (at most `free.len()`) that share no diagonal with `avoid`; how many.
///
/// # Safety
///
/// The CPU has AVX-512 F and VL.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn unpack_free(
    region: Region,
    placements: &[Packed],
    avoid: Pattern,
    free: &mut [MaybeUninit<Pattern>],
) -> usize {
    use std::arch::x86_64::*;
    assert!(placements.len() <= free.len(), "room for every placement");
    let (main_low, anti_low) = region.lowest_diagonals();
    let fours = placements.len() / 4;
    let mut kept = 0;
    // SAFETY: `Packed` is `repr(C)`, two u32: four are one unaligned 256-bit load, widened
    // to four (main, anti) pairs of u64 as `Pattern` (`repr(C)`, two u64) lays them out.
    // Each store of four at `kept` (at most `4 i`) ends at most at `placements.len()`,
    // within `free` (asserted above); the rest one at a time, after them. The instructions
    // are the CPU's (the caller's promise).
    unsafe {
        let to_board = _mm512_set_epi64(
            anti_low as i64,
            main_low as i64,
            anti_low as i64,
            main_low as i64,
            anti_low as i64,
            main_low as i64,
            anti_low as i64,
            main_low as i64,
        );
        let none = _mm512_setzero_si512();
        let avoid_v = _mm512_broadcast_i32x4(_mm_set_epi64x(avoid.anti as i64, avoid.main as i64));
        let (src, dst) = (placements.as_ptr(), free.as_mut_ptr());
        for i in 0..fours {
            let packed = _mm256_loadu_si256(src.add(4 * i).cast());
            let p = _mm512_sllv_epi64(_mm512_cvtepu32_epi64(packed), to_board);
            kept += keep_four(p, (none, avoid_v), dst.add(kept));
        }
        for p in &placements[4 * fours..] {
            let p = p.unpack(region);
            dst.add(kept).write(MaybeUninit::new(p));
            kept += usize::from(p.disjoint(avoid));
        }
    }
    kept
}

/// The vector joins' loop: each placement of `upper` against `lower` one pair at a time
/// (128-bit registers), or (`FOURS`) four at a time and the last few one at a time. Plain
/// loops, inlined into each build, no closures: a closure here was not inlined, and the
/// join ran 2x slower.
///
/// # Safety
///
/// The CPU has SSE4.1, and AVX-512 F and VL for `FOURS`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pair_up_simd<const FOURS: bool, P: Stored>(
    (region, upper): (Region, &[P]),
    lower: &[Pattern],
    avoid: Pattern,
    room: &mut [MaybeUninit<Pattern>],
) -> usize {
    use std::arch::x86_64::*;
    assert!(
        room.len() >= upper.len() * lower.len(),
        "room for every pair"
    );
    // SAFETY: SSE2 is every x86-64's.
    let avoid_v = unsafe { _mm_set_epi64x(avoid.anti as i64, avoid.main as i64) };
    let fours = if FOURS { lower.len() / 4 } else { 0 };
    let mut end = 0;
    for p in upper {
        let p = p.board(region);
        if !p.disjoint(avoid) {
            continue;
        }
        // SAFETY: as above.
        let (p, clash) = unsafe {
            let p = _mm_set_epi64x(p.anti as i64, p.main as i64);
            (p, _mm_or_si128(p, avoid_v))
        };
        let mut kept = 0usize;
        // SAFETY: `Pattern` is `repr(C)`, two u64: four are one unaligned 512-bit load or
        // store. Each store of four at `end + kept` (`kept` at most `4 i`) ends at most at
        // `end + lower.len()`, within `room` (asserted above, `end` growing by at most
        // `lower.len()` per pattern of `upper`); the rest one at a time, after them. The
        // instructions are the CPU's (the caller's promise).
        unsafe {
            let dst = room.as_mut_ptr().add(end);
            if FOURS {
                let (pv, clash_v) = (_mm512_broadcast_i32x4(p), _mm512_broadcast_i32x4(clash));
                let src = lower.as_ptr();
                for i in 0..fours {
                    let q = _mm512_loadu_si512(src.add(4 * i).cast());
                    kept += keep_four(q, (pv, clash_v), dst.add(kept));
                }
            }
            kept += pair_each(p, clash, &lower[4 * fours..], dst.add(kept));
        }
        end += kept;
    }
    end
}

/// Stores at `dst`, packed at the front, each of the four patterns of `candidates` ORed with
/// `with` where neither of its two words meets `clash`; how many it kept. Each word's
/// clashes are ORed with its neighbour's in the register, so both words of a kept pair are
/// free (a mask shuffled in general registers took longer), and `vpcompressq` packs them
/// into a register stored whole (a compress into memory is slow on Zen 4).
///
/// # Safety
///
/// `dst` has room for four patterns, and the CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn keep_four(
    candidates: std::arch::x86_64::__m512i,
    (with, clash): (std::arch::x86_64::__m512i, std::arch::x86_64::__m512i),
    dst: *mut MaybeUninit<Pattern>,
) -> usize {
    use std::arch::x86_64::*;
    // SAFETY: the caller's promises; `Pattern` is `repr(C)`, two u64: four are one
    // unaligned 512-bit store.
    unsafe {
        let hit = _mm512_and_si512(candidates, clash);
        let hit = _mm512_or_si512(hit, _mm512_shuffle_epi32::<_MM_PERM_BADC>(hit));
        let keep = _mm512_testn_epi64_mask(hit, hit);
        let out = _mm512_maskz_compress_epi64(keep, _mm512_or_si512(candidates, with));
        _mm512_storeu_si512(dst.cast(), out);
        (keep.count_ones() / 2) as usize
    }
}

/// Writes `p` ORed with each pattern of `lower` from `dst` on, moving past those that share
/// no diagonal with `clash`; how many it kept.
///
/// # Safety
///
/// `dst` has room for `lower.len()` patterns, and the CPU has SSE4.1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn pair_each(
    p: std::arch::x86_64::__m128i,
    clash: std::arch::x86_64::__m128i,
    lower: &[Pattern],
    dst: *mut MaybeUninit<Pattern>,
) -> usize {
    use std::arch::x86_64::*;
    let mut kept = 0;
    for q in lower {
        // SAFETY: `Pattern` is `repr(C)`, two u64: one unaligned 128-bit load or store each,
        // the store below `dst + lower.len()` (`kept` is at most the patterns passed).
        unsafe {
            let q = _mm_loadu_si128(std::ptr::from_ref(q).cast());
            _mm_storeu_si128(dst.add(kept).cast(), _mm_or_si128(p, q));
            kept += _mm_testz_si128(q, clash) as usize;
        }
    }
    kept
}

/// Returns how many it wrote, at the front of `room`.
#[inline(always)]
fn pair_up_body(
    (region, upper): (Region, &[Packed]),
    lower: &[Pattern],
    avoid: Pattern,
    room: &mut [MaybeUninit<Pattern>],
) -> usize {
    let mut end = 0;
    for p in upper {
        let p = p.unpack(region);
        if !p.disjoint(avoid) {
            continue;
        }
        let clash = p.with(avoid);
        // every candidate is written and the end moves only past the disjoint ones: whether
        // a pair clashes is a coin toss, a branch on it mispredicts
        let slots = &mut room[end..end + lower.len()];
        let mut kept = 0;
        for q in lower {
            slots[kept].write(p.with(*q));
            kept += usize::from(q.disjoint(clash));
        }
        end += kept;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cells of random sparse patterns (empty ones, ones shorter than a vector and longer),
    /// kept by each loop as by a plain filter, cell by cell, after what was kept before.
    #[test]
    fn keeps_the_disjoint_patterns_of_each_cell() {
        let mut next =
            crate::quadrant::sieve::tests::random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
                main: x & x >> 13 & 0xFF_FFFF,
                anti: x >> 26 & x >> 39 & 0xFF_FFFF,
            });
        let sizes = [0, 3, 0, 0, 17, 1, 4, 64, 9];
        let mut offsets = vec![0u32];
        for size in sizes {
            offsets.push(offsets.last().unwrap() + size);
        }
        let patterns: Vec<Pattern> = (0..offsets[sizes.len()]).map(|_| next()).collect();
        // a queen's two diagonals, as the middle column's queen
        let avoid = Pattern {
            main: 1 << 9,
            anti: 1 << 14,
        };
        let cell = |c: usize| &patterns[offsets[c] as usize..offsets[c + 1] as usize];
        let before = next();
        let want: Vec<Vec<Pattern>> = (0..sizes.len())
            .map(|c| {
                cell(c)
                    .iter()
                    .copied()
                    .filter(|q| q.disjoint(avoid))
                    .collect()
            })
            .collect();
        let kept_in_all: usize = want.iter().map(Vec::len).sum();
        assert!(
            kept_in_all > 10 && kept_in_all < patterns.len(),
            "{kept_in_all}"
        );
        for kernel in PairKernel::available() {
            let (mut kept_offsets, mut kept) = (vec![7], vec![before]);
            keep_disjoint(
                kernel,
                (&offsets, &patterns),
                avoid,
                (&mut kept_offsets, &mut kept),
            )
            .unwrap();
            assert_eq!((kept_offsets[0], kept[0]), (7, before), "{kernel:?}");
            assert_eq!(kept_offsets.len(), offsets.len() + 1, "{kernel:?}");
            for (c, want) in want.iter().enumerate() {
                let (from, to) = (kept_offsets[c + 1], kept_offsets[c + 2]);
                assert_eq!(
                    &kept[from as usize..to as usize],
                    want,
                    "{kernel:?}, cell {c}"
                );
            }
        }
    }

    /// Random sparse patterns, paired up by each loop and by a plain filter: cells with
    /// more south patterns than north placements and fewer (which the AVX-512 loop takes
    /// the other way round), several in one call, in a region whose north placements are
    /// stored moved down (packed).
    #[test]
    fn pairs_up_like_the_plain_filter() {
        let mut next =
            crate::quadrant::sieve::tests::random_patterns(0x2545_F491_4F6C_DD1D, |x| Pattern {
                main: x & x >> 11 & x >> 23 & 0xFF_FFFF,
                anti: x >> 24 & x >> 37 & x >> 40 & 0xFF_FFFF,
            });
        let region = Region {
            n: 24,
            row0: 3,
            rows: 10,
            col0: 2,
            cols: 8,
        };
        let (main_low, anti_low) = region.lowest_diagonals();
        assert!(main_low > 0 && anti_low > 0, "packed placements move");
        let shapes: [&[(usize, usize)]; 6] = [
            &[(0, 3), (1, 0), (1, 1)],
            &[(5, 9)],
            &[(17, 4), (4, 17)],
            &[(40, 40), (33, 2), (2, 33), (9, 11)],
            &[(23, 7); 3],
            &[(300, 5), (257, 2)],
        ];
        for (case, cells) in shapes.iter().enumerate() {
            let avoid = if case % 2 == 0 {
                Pattern::default()
            } else {
                next()
            };
            let made: Vec<(Vec<Pattern>, Vec<Pattern>)> = cells
                .iter()
                .map(|&(a, b)| {
                    let upper = (0..a).map(|_| next()).map(|p| Pattern {
                        main: p.main << main_low,
                        anti: p.anti << anti_low,
                    });
                    (upper.collect(), (0..b).map(|_| next()).collect())
                })
                .collect();
            let mut want: Vec<Pattern> = made
                .iter()
                .flat_map(|(upper, lower)| {
                    upper
                        .iter()
                        .flat_map(move |p| lower.iter().map(move |q| (*p, *q)))
                })
                .filter(|&(p, q)| p.disjoint(avoid) && p.disjoint(q) && q.disjoint(avoid))
                .map(|(p, q)| p.with(q))
                .collect();
            let pairs: usize = cells.iter().map(|&(a, b)| a * b).sum();
            assert!(
                pairs < 100 || !want.is_empty() && want.len() < pairs,
                "{cells:?} tests something"
            );
            let packed: Vec<Vec<Packed>> = made
                .iter()
                .map(|(upper, _)| upper.iter().map(|&p| Packed::store(region, p)).collect())
                .collect();
            let cells: Vec<Cell> = packed
                .iter()
                .zip(&made)
                .map(|(upper, (_, lower))| (&upper[..], &lower[..]))
                .collect();
            let key = |p: &Pattern| (p.main, p.anti);
            want.sort_by_key(key);
            for kernel in PairKernel::available() {
                // appended after what `out` holds
                let first = next();
                let mut out = vec![first];
                pair_up(kernel, (region, &cells), avoid, &mut out).unwrap();
                assert_eq!(out[0], first, "{kernel:?}, {cells:?}");
                let mut got = out[1..].to_vec();
                got.sort_by_key(key);
                assert_eq!(got, want, "{kernel:?}, {cells:?}");
            }
        }
    }
}
