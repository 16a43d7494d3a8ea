//! The quadrant engine's inner loop: how many pairs of half-board patterns share no diagonal.
//!
//! One side's patterns are stored bit-sliced: for every diagonal that a pattern of the other
//! side can occupy, the set of patterns occupying it, 256 patterns to a block. A pattern of
//! the other side is compatible with exactly the patterns outside the union of its diagonals'
//! sets, so a pair test costs a fraction of an OR and a popcount instead of two ANDs and a
//! compare. The sets are kept five diagonals at a time as the unions of every subset of the
//! five (a four-Russians table), so a block costs one read per five diagonals, whichever of
//! them the pattern occupies.
//!
//! Most pairs clash, and on a few diagonals most of all. Where the lists are long, the
//! stored patterns are sorted by *signature* (which of up to fifteen such pivot diagonals
//! they occupy) before slicing; a pattern of the other side then visits only the blocks
//! holding a signature disjoint from its own. Each pivot removes about a quarter of the
//! pairs, so the pair work shrinks many times where it matters, at large N. The other side,
//! put in signature order, is counted a run of one signature at a time (up to 256
//! patterns), block by block: a block's tables then serve the whole run from the nearest
//! cache. The pivots have lookups of their own, which every pattern of a run reads alike: a
//! block's are read once for the run, and each pattern reads only the rest. Where the
//! stored blocks are many (N = 24 and above), runs are taken in batches that pass over the
//! blocks a stretch at a time, so that a block's tables serve every run of the batch.

use super::pair_kernel::PairKernel;
use super::pattern::{for_each_bit, Pattern, Shift};
use super::pivots::{compatible, Pivots, Signature, Signatures, SortBuffers, PIVOTS};
use std::cell::RefCell;
use std::collections::TryReserveError;
use std::sync::atomic::{AtomicBool, Ordering};

/// Patterns counted between two looks at the stop flag.
const STOP_CHECK: usize = 256;

/// Transposes a 64×64 bit matrix in place: bit `c` of `rows[r]` becomes bit `r` of
/// `rows[c]` (six rounds of swapping off-diagonal blocks of 32, 16, ... 1 bits).
#[inline(always)]
fn transpose64(rows: &mut [u64; 64]) {
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
fn swap_blocks<const W: usize>(rows: &mut [u64; 64], low: u64) {
    for base in (0..64).step_by(2 * W) {
        for k in base..base + W {
            let swap = ((rows[k] >> W) ^ rows[k + W]) & low;
            rows[k + W] ^= swap;
            rows[k] ^= swap << W;
        }
    }
}

/// [`transpose64`] on AVX-512 with GFNI, about 70 instructions where the rounds take near
/// 400: `vgf2p8affineqb` transposes the 8×8 bit block held in each 64-bit word, so the
/// blocks are gathered into words (a byte shuffle of each 8 rows), transposed, and the words
/// moved to their places (byte, then 128-bit interleaves).
///
/// # Safety
///
/// The CPU has AVX-512 F, BW and VBMI, and GFNI.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn transpose64_gfni(rows: &mut [u64; 64]) {
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

/// Patterns per block: one 256-bit vector per diagonal.
const BLOCK: usize = 256;

/// Fewest stored blocks for which grouping pays: below it, sorting the stored patterns by
/// signature costs more than the blocks it skips.
const MIN_GROUPED_BLOCKS: usize = 3;

/// Fewest patterns on the other side for which grouping pays: the sort costs per stored
/// pattern, the skipping saves per pattern of the other side (measured: 512, 1024, 2048 and
/// 4096 tried at N = 16, 17, 18 on Zen 3; 1024 was best or within noise of it).
const MIN_GROUPED_OTHERS: usize = 1024;

/// Fewest pairs (stored patterns times the other side's) for which grouping pays: the sorts
/// cost per pattern, the skipping saves per pair (2^22 against none: `count 16 -t 1` took
/// 0.92 times as long, `count 18 -t 1` alike; 2^23 alike, 2^24 slower at N = 18).
const MIN_GROUPED_PAIRS: usize = 1 << 22;

/// The stored side as the other side's patterns see it: its diagonals that the other side can
/// occupy, in the other side's coordinates, and the lookups that turn a pattern of the other
/// side into table offsets without moving it (moving each cost 8 % at N = 18).
///
/// A pattern's seen diagonals are numbered (its *dense* word) pivots first, in lookups of
/// their own (padded with diagonals no pattern occupies), then the rest: every pattern of a
/// run of one signature has the same pivot bits, so a block's pivot lookups are read once
/// for the whole run.
#[derive(Clone, Debug)]
struct Seen {
    /// The seen pivots, and the other seen diagonals.
    pivots: Gather,
    rest: Gather,
    /// Lookups of the pivots alone: `TABLE_BITS` dense bits each, before the rest's.
    pivot_lookups: usize,
    /// The other side's signature (its pivots moved into its coordinates).
    signature: Signatures,
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            pivots: Gather::new(Pattern::default()),
            rest: Gather::new(Pattern::default()),
            pivot_lookups: 0,
            signature: Signatures::from_diagonals(std::iter::empty()),
        }
    }
}

impl Seen {
    /// Dense bits before the rest's: the pivots' lookups.
    fn pivot_bits(&self) -> usize {
        self.pivot_lookups * TABLE_BITS as usize
    }

    /// Bits of the dense word, padding included.
    fn bits(&self) -> usize {
        self.pivot_bits() + self.rest.len()
    }

    /// Each dense bit's diagonal moved by `shift` (main diagonal `d` at `d`, anti-diagonal
    /// `d` at `64 + d`; [`NO_DIAGONAL`] for the padding). A move keeps the order of each
    /// direction's diagonals, so the bits keep their places.
    fn diagonals(&self, shift: Shift) -> [u8; MOST_DENSE_BITS] {
        let mut diagonals = [NO_DIAGONAL; MOST_DENSE_BITS];
        for (part, first) in [(&self.pivots, 0), (&self.rest, self.pivot_bits())] {
            let mut next = first;
            let moved = shift.apply(part.mask);
            for (offset, mask) in [(0, moved.main), (64, moved.anti)] {
                for_each_bit(mask, |d| {
                    diagonals[next] = (offset + d) as u8;
                    next += 1;
                });
            }
        }
        diagonals
    }
}

/// Some of the seen diagonals, and how a pattern's bits on them are packed into a dense
/// word: main diagonals first, then anti-diagonals, each upwards.
#[derive(Clone, Debug)]
struct Gather {
    mask: Pattern,
    /// How many main diagonals `mask` holds: the anti-diagonals' bits follow them.
    main_count: u32,
    /// Each diagonal's rank among those of its direction (main diagonal `d` at `d`,
    /// anti-diagonal `d` at `64 + d`).
    rank: [u8; 128],
}

impl Gather {
    fn new(mask: Pattern) -> Gather {
        let mut rank = [0u8; 128];
        for (offset, mask) in [(0, mask.main), (64, mask.anti)] {
            let mut next = 0;
            for_each_bit(mask, |d| {
                rank[offset + d] = next;
                next += 1;
            });
        }
        Gather {
            mask,
            main_count: mask.main.count_ones(),
            rank,
        }
    }

    fn len(&self) -> usize {
        (self.mask.main.count_ones() + self.mask.anti.count_ones()) as usize
    }

    /// `p`'s bits on the main and on the anti-diagonals, each packed low. `extract` takes
    /// the bits of a word at a mask's bits, packed low (`pext`).
    #[inline(always)]
    fn gather(&self, p: Pattern, extract: impl Fn(u64, u64) -> u64) -> (u64, u64) {
        (
            extract(p.main, self.mask.main),
            extract(p.anti, self.mask.anti),
        )
    }

    /// A pattern's gathered bits ([`Gather::gather`]) as one dense word: its anti-diagonals'
    /// after its main ones (where they fit 64 bits).
    #[inline(always)]
    fn word(&self, (main, anti): (u64, u64)) -> u64 {
        main | anti << self.main_count
    }

    /// `p` as the counting loop reads it where the other side is grouped and narrow
    /// ([`Sieve::reads_records`]), `self` being the seen diagonals other than the pivots:
    /// its dense word in `main` (gathered by `gather`: [`Gather::gather`] or
    /// [`Gather::gather_by_lookups`]), 0 in `anti` (its pivots are its signature's).
    #[inline(always)]
    fn record(&self, p: Pattern, gather: impl Fn(&Gather, Pattern) -> (u64, u64)) -> Pattern {
        Pattern {
            main: self.word(gather(self, p)),
            anti: 0,
        }
    }

    /// [`Gather::gather`] without `pext`: a lookup per diagonal `p` occupies.
    #[inline(always)]
    fn gather_by_lookups(&self, p: Pattern) -> (u64, u64) {
        let (mut main, mut anti) = (0u64, 0u64);
        for_each_bit(p.main & self.mask.main, |d| main |= 1 << self.rank[d]);
        for_each_bit(p.anti & self.mask.anti, |d| anti |= 1 << self.rank[64 + d]);
        (main, anti)
    }
}

/// Most bits of a dense word: every diagonal seen, and the pivots' padding.
const MOST_DENSE_BITS: usize = 128 + TABLE_BITS as usize - 1;

/// A dense bit of the pivots' padding, which no pattern occupies.
const NO_DIAGONAL: u8 = u8::MAX;

/// Seen diagonals looked up together: a pattern's `TABLE_BITS` consecutive bits of its
/// dense word ([`Seen`]) pick one precomputed OR of their slices (a four-Russians table), so a
/// block costs one read per `TABLE_BITS` seen diagonals, whichever the pattern occupies.
const TABLE_BITS: u32 = 5;

/// Most lookups a block has (one per `TABLE_BITS` dense bits).
const MOST_LOOKUPS: usize = MOST_DENSE_BITS.div_ceil(TABLE_BITS as usize);

/// Entries of one lookup: every subset of `TABLE_BITS` diagonals.
const TABLE_ENTRIES: usize = 1 << TABLE_BITS;

/// One entry of a lookup table: a block's patterns on a subset of diagonals, 256 bits.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct Slice([u64; 4]);

/// The lookup tables' entries, each on a 32-byte boundary so that no read of one spans two
/// cache lines: at 8-byte alignment half the reads did wherever the allocator put them, and
/// `count 17 -t 1` took 7 % longer. They lie in a buffer of plain words, from its first
/// 32-byte boundary on: a buffer allocated over-aligned cannot be grown in place, and
/// copying it raised the peak of `count 20 -t 2` by 5 %.
#[derive(Clone, Debug, Default)]
struct Entries {
    words: Vec<u64>,
    /// The first word on a 32-byte boundary.
    start: usize,
}

/// Words of an entry.
const ENTRY_WORDS: usize = std::mem::size_of::<Slice>() / 8;

impl Entries {
    /// Room for at least `len` entries; what they held is not kept.
    fn make_room(&mut self, len: usize) -> Result<(), TryReserveError> {
        let words = len * ENTRY_WORDS + ENTRY_WORDS - 1;
        if self.words.len() < words {
            self.words.try_reserve_exact(words - self.words.len())?;
            self.words.resize(words, 0);
        }
        let misaligned = self.words.as_ptr().addr() % std::mem::align_of::<Slice>();
        self.start =
            (std::mem::align_of::<Slice>() - misaligned) % std::mem::align_of::<Slice>() / 8;
        Ok(())
    }

    fn len(&self) -> usize {
        (self.words.len() - self.start) / ENTRY_WORDS
    }

    fn as_slice(&self) -> &[Slice] {
        // SAFETY: `words[start..]` begins on a 32-byte boundary (`make_room`) and holds `len`
        // whole entries; a `Slice` is four `u64`, any bits of which are one.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr().add(self.start).cast(), self.len())
        }
    }

    fn as_mut_slice(&mut self) -> &mut [Slice] {
        let len = self.len();
        // SAFETY: as in `as_slice`, and the words are borrowed mutably for the slice's life.
        unsafe {
            std::slice::from_raw_parts_mut(self.words.as_mut_ptr().add(self.start).cast(), len)
        }
    }
}

/// One side's patterns, grouped by signature and bit-sliced by diagonal.
#[derive(Clone, Debug, Default)]
pub struct Sieve {
    len: usize,
    blocks: usize,
    /// Lookups per block: `TABLE_BITS` seen diagonals each.
    lookups: usize,
    /// The stored diagonals, in their own coordinates.
    main: u64,
    anti: u64,
    /// Moves a pattern of the other side where the stored patterns are.
    others_shift: Shift,
    seen: Seen,
    /// Block-major, then lookup, then subset: for block `b`, lookup `l` and a subset `v`
    /// of its diagonals, the stored patterns occupying one of them at
    /// `(b * lookups + l) * TABLE_ENTRIES + v` (entry 0 is empty); longer than that when an
    /// earlier unit needed more (it is only grown).
    data: Entries,
    pivots: Pivots,
    /// For signature `s`, the blocks holding a pattern it can pair with (where they start in
    /// `data`), at `reach[reach_at[s]..reach_at[s + 1]]`, and how many patterns those blocks
    /// hold.
    reach: Vec<u32>,
    reach_at: Vec<usize>,
    covered: Vec<u64>,
    /// Buffers: the stored patterns in signature order, their signatures, and where each
    /// signature's patterns start.
    sorted: Vec<Pattern>,
    signatures: Vec<Signature>,
    start: Vec<usize>,
    /// How the counting loop takes runs in batches where the blocks are many, and its
    /// buffers.
    batching: Batching,
    batch: RefCell<BatchBuffers>,
}

impl Sieve {
    /// Replaces the stored patterns with `patterns`, grouped for counting against patterns
    /// like `others`, which `others_shift` moves where `patterns` are (the buffers are
    /// reused), laid out by the loops `pairs`; an error when the memory for them cannot be had.
    pub fn load(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        (others, others_shift): (&[Pattern], Shift),
    ) -> Result<(), TryReserveError> {
        self.others_shift = others_shift;
        let blocks = patterns.len().div_ceil(BLOCK);
        // enough pivots to tell the blocks apart, and one more to split them further (two
        // were 3 % slower at N = 18 once a pattern read only its occupied lookups), but no
        // more signatures than the other side has runs of 32 patterns: a run reads its
        // blocks' tables once (measured at N = 18, 20, 22: 1 to 3 % faster than without)
        let count = if blocks < MIN_GROUPED_BLOCKS
            || others.len() < MIN_GROUPED_OTHERS
            || patterns.len().saturating_mul(others.len()) < MIN_GROUPED_PAIRS
        {
            0
        } else {
            let runs = others.len() / 32;
            (blocks.ilog2() + 1).min(runs.ilog2()) as usize
        }
        .min(PIVOTS);
        self.pivots = Pivots::choose(count, patterns, (others, others_shift));
        let mut start = std::mem::take(&mut self.start);
        let union = if self.pivots.count == 0 {
            start.clear();
            start.extend([0, patterns.len()]);
            patterns.iter().fold(Pattern::default(), |u, &p| u.with(p))
        } else {
            let mut signatures = std::mem::take(&mut self.signatures);
            let grouped = sort_on(
                pairs,
                (&Signatures::new(&self.pivots), None),
                patterns,
                (&mut self.sorted, &mut signatures, &mut start),
            );
            self.signatures = signatures;
            grouped?
        };
        (self.main, self.anti) = (union.main, union.anti);
        self.see_from_others();
        let sorted = std::mem::take(&mut self.sorted);
        let grouped = if self.pivots.count == 0 {
            patterns
        } else {
            &sorted
        };
        let sliced = self.slice_on(pairs, grouped);
        self.sorted = sorted;
        sliced?;
        let reach = self.index_reach(&start);
        self.start = start;
        reach
    }

    /// The stored diagonals in the other side's coordinates: stored diagonal `d` is the other
    /// side's `d - shift`; those below 0 or past 63 there hold no pattern of the other side.
    fn see_from_others(&mut self) {
        let theirs = |d: usize, up: i8| {
            let theirs = d as isize - isize::from(up);
            (0..64).contains(&theirs).then_some(theirs as usize)
        };
        let kept = [
            (self.main, self.others_shift.main),
            (self.anti, self.others_shift.anti),
        ]
        .map(|(mask, up)| {
            let mut kept = 0u64;
            for_each_bit(mask, |d| {
                if let Some(theirs) = theirs(d, up) {
                    kept |= 1 << theirs;
                }
            });
            kept
        });
        let shift = self.others_shift;
        let pivots: Vec<(usize, Signature)> = self
            .pivots
            .diagonals()
            .filter_map(|(d, bit)| {
                let theirs = if d < 64 {
                    theirs(d, shift.main)
                } else {
                    theirs(d - 64, shift.anti).map(|t| 64 + t)
                };
                theirs.map(|t| (t, bit))
            })
            .collect();
        let pivot_lookups = pivots.len().div_ceil(TABLE_BITS as usize);
        let signature = Signatures::from_diagonals(pivots.into_iter());
        let pivot_mask = signature.mask();
        let rest = Pattern {
            main: kept[0] & !pivot_mask.main,
            anti: kept[1] & !pivot_mask.anti,
        };
        self.seen = Seen {
            pivot_lookups,
            pivots: Gather::new(pivot_mask),
            rest: Gather::new(rest),
            signature,
        };
    }

    /// [`Sieve::slice`] compiled for the loops `pairs` (the transposes and the subsets' ORs
    /// are vector code).
    fn slice_on(&mut self, pairs: PairKernel, patterns: &[Pattern]) -> Result<(), TryReserveError> {
        match pairs {
            PairKernel::Scalar => self.slice(patterns, transpose64),
            // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and
            // popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 => unsafe { slice_avx2(self, patterns) },
            // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those
            // and AVX-512 F, BW and VBMI, and GFNI.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2WithAvx512 => unsafe { slice_avx512(self, patterns) },
        }
    }

    /// Bit-slices `patterns` into blocks, on the diagonals the other side sees (64 patterns
    /// at a time by `transpose`, a [`transpose64`]), and fills each lookup's subsets.
    #[inline(always)]
    fn slice(
        &mut self,
        patterns: &[Pattern],
        transpose: impl Fn(&mut [u64; 64]) + Copy,
    ) -> Result<(), TryReserveError> {
        let (main, anti) = (self.main, self.anti);
        self.len = patterns.len();
        // each dense bit's stored diagonal, in the stored patterns' own coordinates (main
        // diagonal `d` at `d`, anti-diagonal `d` at `64 + d`; none for the padding): the
        // seen diagonals moved back (none falls off: each came from a stored diagonal)
        let seen = self.seen.bits();
        let source = self.seen.diagonals(self.others_shift);
        self.lookups = seen.div_ceil(TABLE_BITS as usize);
        self.blocks = patterns.len().div_ceil(BLOCK);
        let stride = self.lookups * TABLE_ENTRIES;
        // every entry is written below: the buffer is only grown, never cleared
        let len = stride * self.blocks;
        self.data.make_room(len)?;
        // (an empty mask shifts by 63, not 64)
        let (main_low, anti_low) = (main.trailing_zeros().min(63), anti.trailing_zeros().min(63));
        // a half-board's diagonals of one direction span at most 32 (up to N = 22): both
        // directions then fit one 64-bit row and one transpose
        let packed = (main >> main_low) >> 32 == 0 && (anti >> anti_low) >> 32 == 0;
        let (main_low, anti_low) = (main_low as usize, anti_low as usize);
        // the block's slice of each dense bit: every word of each seen diagonal's is written
        // for a whole block, the padding's stay empty (zeroed for each block, they were 1 %
        // of `count 18`)
        let mut slices = [[0u64; 4]; MOST_DENSE_BITS];
        let slices = &mut slices[..seen];
        let mut rows = [0u64; 64];
        for (b, block) in patterns.chunks(BLOCK).enumerate() {
            if block.len() < BLOCK {
                // a last, short block's words past its patterns are empty
                slices.fill([0; 4]);
            }
            // 64 patterns at a time: a bit-matrix transpose turns their masks into one word
            // per diagonal (setting bits one by one chains read-modify-writes through memory)
            for (word, chunk) in block.chunks(64).enumerate() {
                if packed {
                    if chunk.len() < 64 {
                        // rows past a short chunk's are empty
                        rows.fill(0);
                    }
                    for (row, p) in rows.iter_mut().zip(chunk) {
                        *row = p.main >> main_low | (p.anti >> anti_low) << 32;
                    }
                    transpose(&mut rows);
                    for (slice, &d) in slices.iter_mut().zip(&source) {
                        let d = usize::from(d);
                        if d < 64 {
                            slice[word] = rows[d - main_low];
                        } else if d != usize::from(NO_DIAGONAL) {
                            slice[word] = rows[32 + d - 64 - anti_low];
                        }
                    }
                    continue;
                }
                for offset in [0, 64] {
                    // a last chunk of fewer than 64 leaves rows past it: they must not keep
                    // the other direction's transpose
                    rows.fill(0);
                    for (row, p) in rows.iter_mut().zip(chunk) {
                        *row = if offset == 0 { p.main } else { p.anti };
                    }
                    transpose(&mut rows);
                    for (slice, &d) in slices.iter_mut().zip(&source) {
                        let d = usize::from(d);
                        if d != usize::from(NO_DIAGONAL) && (offset..offset + 64).contains(&d) {
                            slice[word] = rows[d - offset];
                        }
                    }
                }
            }
            // each lookup's subsets, doubled a diagonal at a time: those holding diagonal
            // `bit` are those below `1 << bit` with its slice added (bounds known when
            // compiled, no branch: the loop by lowest bit took twice as long)
            let table = &mut self.data.as_mut_slice()[b * stride..][..stride];
            for (l, lookup) in table.chunks_exact_mut(TABLE_ENTRIES).enumerate() {
                lookup[0] = Slice::default();
                for bit in 0..TABLE_BITS as usize {
                    let d = l * TABLE_BITS as usize + bit;
                    let slice = slices.get(d).copied().unwrap_or_default();
                    let (below, above) = lookup.split_at_mut(1 << bit);
                    for (to, from) in above[..1 << bit].iter_mut().zip(below.iter()) {
                        *to = Slice(std::array::from_fn(|i| from.0[i] | slice[i]));
                    }
                }
            }
        }
        Ok(())
    }

    /// For every signature, the blocks worth visiting: those holding a compatible group
    /// (group `g` is `start[g]..start[g + 1]` of the stored patterns). The compatible groups
    /// come in increasing order, so their blocks do too.
    fn index_reach(&mut self, start: &[usize]) -> Result<(), TryReserveError> {
        let groups = 1usize << self.pivots.count;
        let stride = self.lookups * TABLE_ENTRIES;
        self.reach.clear();
        self.reach_at.clear();
        self.covered.clear();
        self.reach_at.try_reserve(groups + 1)?;
        self.covered.try_reserve(groups)?;
        self.reach_at.push(0);
        for s in 0..groups {
            let mut covered = 0;
            // room for every block, so the pushes below never allocate
            self.reach.try_reserve(self.blocks)?;
            let mut next = 0;
            for t in compatible(s, groups) {
                let (from, to) = (start[t], start[t + 1]);
                if from < to {
                    for b in (from / BLOCK).max(next)..=(to - 1) / BLOCK {
                        self.reach.push((b * stride) as u32);
                        covered += (self.len - b * BLOCK).min(BLOCK) as u64;
                    }
                    next = next.max((to - 1) / BLOCK + 1);
                }
            }
            self.reach_at.push(self.reach.len());
            self.covered.push(covered);
        }
        Ok(())
    }

    /// Whether the counting loop reads the other side as records of dense words (see
    /// [`Sieve::order`]) rather than as patterns: where it is grouped and the seen
    /// diagonals other than the pivots fit one word.
    fn reads_records(&self) -> bool {
        self.pivots.count > 0 && self.seen.rest.len() <= 64
    }

    /// Puts the other side's `patterns` in the order the counting loop runs fastest, in
    /// `ordered`, where each signature `s` starts at `start[s]`: patterns of one signature
    /// visit the same blocks, so a run of them keeps those blocks' tables in the nearest
    /// cache (a counting sort on the loops `pairs`). Where [`Sieve::reads_records`], each
    /// is written as a record the loop reads as it is ([`Gather::record`]: the dense word of
    /// its seen diagonals other than the pivots, gathered once here, not again by the loop;
    /// its pivots are its signature's). Without pivots, `ordered` is left empty: the loop reads
    /// `patterns` as they are.
    fn order(
        &self,
        pairs: PairKernel,
        patterns: &[Pattern],
        buffers: SortBuffers,
    ) -> Result<(), TryReserveError> {
        let (ordered, signatures, start) = buffers;
        if self.pivots.count == 0 {
            ordered.clear();
            start.clear();
            start.extend([0, patterns.len()]);
            return Ok(());
        }
        let records = self.reads_records().then_some(&self.seen.rest);
        let buffers = (ordered, signatures, start);
        sort_on(pairs, (&self.seen.signature, records), patterns, buffers)?;
        Ok(())
    }

    /// How many pairs (stored pattern, pattern of `others`) share no diagonal, on the fastest
    /// loop this CPU runs.
    #[cfg(test)]
    pub fn count_disjoint(&mut self, others: &[Pattern]) -> u64 {
        let never = AtomicBool::new(false);
        self.count_disjoint_on(PairKernel::best(), others, &never)
            .expect("memory for the order")
            .expect("never stopped")
    }

    /// How many pairs (stored pattern, pattern of `others` moved as [`Sieve::load`] was told)
    /// share no diagonal, on the loop `pairs`, the other side first put in signature order
    /// ([`Sieve::order`]); `None` when `stop` was set first (it is looked at every few
    /// patterns), an error when the memory for the order cannot be had.
    pub fn count_disjoint_on(
        &mut self,
        pairs: PairKernel,
        others: &[Pattern],
        stop: &AtomicBool,
    ) -> Result<Option<u64>, TryReserveError> {
        if self.len == 0 {
            return Ok(Some(0));
        }
        if self.lookups == 0 {
            // no stored pattern occupies a diagonal the other side can: every pair is disjoint
            return Ok(Some(self.len as u64 * others.len() as u64));
        }
        let (mut ordered, mut signatures, mut start) = (
            std::mem::take(&mut self.sorted),
            std::mem::take(&mut self.signatures),
            std::mem::take(&mut self.start),
        );
        let made = self.order(pairs, others, (&mut ordered, &mut signatures, &mut start));
        let counted = made.map(|()| {
            let others = if self.pivots.count == 0 {
                others
            } else {
                &ordered
            };
            self.count_ordered(pairs, (others, &start), stop)
        });
        (self.sorted, self.signatures, self.start) = (ordered, signatures, start);
        counted
    }

    /// [`Sieve::count_disjoint_on`] of the other side once ordered: signature `s`'s
    /// patterns (or records) at `others[start[s]..start[s + 1]]`.
    fn count_ordered(&self, pairs: PairKernel, others: Ordered, stop: &AtomicBool) -> Option<u64> {
        // the loops with batches and those without are compiled apart: together, the code
        // of one made the other slower (`count 18 -t 1`, none batched, 1.04 times as long)
        if self.blocks > self.batching.stretch {
            self.count_ordered_on::<true>(pairs, others, stop)
        } else {
            self.count_ordered_on::<false>(pairs, others, stop)
        }
    }

    /// [`Sieve::count_ordered`] on the loops `pairs`, the runs taken in batches or not.
    fn count_ordered_on<const BATCHED: bool>(
        &self,
        pairs: PairKernel,
        others: Ordered,
        stop: &AtomicBool,
    ) -> Option<u64> {
        match pairs {
            PairKernel::Scalar => {
                let loops = (
                    Gather::gather_by_lookups,
                    add_popcounts,
                    fill_every,
                    order_by_reads,
                );
                count_body::<false, BATCHED>(self, others, stop, loops)
            }
            // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 => unsafe { count_avx2::<BATCHED>(self, others, stop) },
            // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those
            // and AVX-512 F, VL and VPOPCNTDQ.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2WithAvx512 => unsafe {
                count_avx2_with_avx512::<BATCHED>(self, others, stop)
            },
        }
    }
}

/// [`Sieve::slice`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt")]
fn slice_avx2(sieve: &mut Sieve, patterns: &[Pattern]) -> Result<(), TryReserveError> {
    // a closure made here, compiled for AVX2: the function itself went through a shim built
    // for the baseline CPU (SSE2), not inlined (6 % of `count 18 -t 1` on these loops)
    #[allow(clippy::redundant_closure)]
    sieve.slice(patterns, |rows| transpose64(rows))
}

/// [`Sieve::slice`] compiled for AVX2, its transposes by GFNI on AVX-512: paired against
/// [`slice_avx2`] on Zen 5, `count 18 -t 1` took 0.95 times as long.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512vbmi,gfni")]
fn slice_avx512(sieve: &mut Sieve, patterns: &[Pattern]) -> Result<(), TryReserveError> {
    // SAFETY: compiled for them.
    sieve.slice(patterns, |rows| unsafe { transpose64_gfni(rows) })
}

/// The same loop compiled for AVX2 (the 256-bit ORs become one instruction), BMI2 (`pext`
/// packs a pattern's seen diagonals) and popcnt.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt")]
fn count_avx2<const BATCHED: bool>(
    sieve: &Sieve,
    others: Ordered,
    stop: &AtomicBool,
) -> Option<u64> {
    count_by_pext::<false, BATCHED>(
        sieve,
        others,
        stop,
        (add_popcounts, fill_every, order_by_reads),
    )
}

/// [`count_body`] with a pattern's seen diagonals packed by `pext`, the clashes' popcounts added up by `add`: the body of the loops built for BMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn count_by_pext<const COMPACT: bool, const BATCHED: bool>(
    sieve: &Sieve,
    others: Ordered,
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
    count_body::<COMPACT, BATCHED>(sieve, others, stop, (pack, add, fill_rest, order))
}

/// [`count_avx2`] with the popcounts taken by `vpopcntq` (AVX-512 VPOPCNTDQ on 256-bit
/// vectors: paired against it on Zen 5, `count 18 -t 1` took 0.97 times as long), and each
/// pattern reading only the lookups it occupies ([`fill_occupied_avx512`]: 0.96 at N = 18,
/// 0.91 at a shard of N = 20).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512vl,avx512vpopcntdq,avx512bw,avx512vbmi2")]
fn count_avx2_with_avx512<const BATCHED: bool>(
    sieve: &Sieve,
    others: Ordered,
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
    count_by_pext::<true, BATCHED>(sieve, others, stop, (add, fill, order))
}

/// [`Signatures::sort`] with the signatures computed by the loops `pairs` (`pext` on AVX2,
/// four at a time on AVX-512), each pattern written as it is or, given `records` (the other
/// side's seen diagonals other than the pivots), as the record [`Gather::record`] makes.
fn sort_on(
    pairs: PairKernel,
    (signatures, records): (&Signatures, Option<&Gather>),
    patterns: &[Pattern],
    buffers: SortBuffers,
) -> Result<Pattern, TryReserveError> {
    match pairs {
        PairKernel::Scalar => {
            let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| {
                Signatures::sign_each(patterns, out, |p| signatures.signature(p))
            };
            let sort = (sign_all, signatures.groups());
            match records {
                Some(rest) => {
                    let record = |p| rest.record(p, Gather::gather_by_lookups);
                    Signatures::sort(patterns, sort, record, buffers)
                }
                None => Signatures::sort(patterns, sort, |p| p, buffers),
            }
        }
        // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and popcnt.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2 => unsafe { sort_avx2((signatures, records), patterns, buffers) },
        // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those and
        // AVX-512 F, BW and BITALG.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2WithAvx512 => unsafe {
            sort_avx512((signatures, records), patterns, buffers)
        },
    }
}

/// [`sort_on`] compiled for BMI2, signatures and records gathered by `pext`. Its closures
/// are made here: made in a function not compiled for BMI2, they were not inlined (the
/// other side's order 1.2 times as long).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt")]
fn sort_avx2(
    (signatures, records): (&Signatures, Option<&Gather>),
    patterns: &[Pattern],
    buffers: SortBuffers,
) -> Result<Pattern, TryReserveError> {
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| {
        Signatures::sign_each(patterns, out, |p| signatures.signature_by(p, pext))
    };
    let sort = (sign_all, signatures.groups());
    match records {
        Some(rest) => {
            let record = |p| rest.record(p, |part: &Gather, p| part.gather(p, pext));
            Signatures::sort(patterns, sort, record, buffers)
        }
        None => Signatures::sort(patterns, sort, |p| p, buffers),
    }
}

/// [`sort_avx2`] with the signatures gathered four at a time ([`sign_all_avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512bitalg")]
fn sort_avx512(
    (signatures, records): (&Signatures, Option<&Gather>),
    patterns: &[Pattern],
    buffers: SortBuffers,
) -> Result<Pattern, TryReserveError> {
    let pext = |x, mask| std::arch::x86_64::_pext_u64(x, mask);
    // SAFETY: compiled for them.
    let sign_all = |patterns: &[Pattern], out: &mut Vec<Signature>| unsafe {
        sign_all_avx512(signatures, patterns, out)
    };
    let sort = (sign_all, signatures.groups());
    match records {
        Some(rest) => {
            let record = |p| rest.record(p, |part: &Gather, p| part.gather(p, pext));
            Signatures::sort(patterns, sort, record, buffers)
        }
        None => Signatures::sort(patterns, sort, |p| p, buffers),
    }
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
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sign_all_avx512(
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

/// The other side in signature order, each pattern located by [`Sieve::order`].
type Ordered<'a> = (&'a [Pattern], &'a [usize]);

/// The counting loop's steps: packing a pattern's seen diagonals, adding up the clashes'
/// popcounts, and filling a pattern's own entries from its dense word (one
/// word), which returns how many it wrote at the front: those of every lookup, or
/// (`COMPACT`) only those of the lookups the pattern occupies.
#[inline(always)]
fn count_body<const COMPACT: bool, const BATCHED: bool>(
    sieve: &Sieve,
    others: Ordered,
    stop: &AtomicBool,
    loops: (
        impl Fn(&Gather, Pattern) -> (u64, u64) + Copy,
        impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
        impl Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
        impl Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
    ),
) -> Option<u64> {
    match (sieve.reads_records(), sieve.seen.rest.len() <= 64) {
        (true, _) => count_pairs::<true, true, COMPACT, BATCHED>(sieve, others, stop, loops),
        (false, true) => count_pairs::<false, true, COMPACT, BATCHED>(sieve, others, stop, loops),
        (false, false) => count_pairs::<false, false, COMPACT, BATCHED>(sieve, others, stop, loops),
    }
}

/// A pattern's entries for every one of its `own` lookups from `first` on.
#[inline(always)]
fn fill_every(dense: u64, first: usize, own: usize, entries: &mut [u32]) -> usize {
    fill_entries(dense, first, &mut entries[..own]);
    own
}

/// [`fill_every`] keeping only the entries of the lookups where the pattern occupies a
/// diagonal (about 40 % of them are empty: reading an empty subset's entry changes nothing),
/// packed at the front by `vpcompressd` in a register, stored whole: `entries` has room for
/// 16, and at most 16 lookups are asked for (`own`: one word holds 64 dense bits).
///
/// # Safety
///
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn fill_occupied_avx512(dense: u64, first: usize, own: usize, entries: &mut [u32]) -> usize {
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

/// Patterns of one signature whose lookups are worked out before their blocks are visited:
/// a block's tables then stay in the nearest cache while the whole run passes over them
/// (measured at N = 22, Zen 5: 256 took 0.91 times as long as 32, 0.985 times 128).
const RUN: usize = 256;

/// How many lookups each pattern of a run reads (`u8::MAX` past the run's end).
type RunReads = [u8; RUN];

/// A run's patterns in increasing reads (indices), with room for a last store of 64.
type RunOrder = [u8; RUN + 64];

/// Puts a run's `len` patterns (`reads[..len]`, each at most `most`) in `order` by
/// increasing reads, in the run's order where they read alike: a counting sort (the
/// definition, which the loops without compaction never need).
fn order_by_reads(reads: &RunReads, (len, _): (usize, usize), order: &mut RunOrder) {
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

/// [`order_by_reads`] 64 patterns at a time: for each number of reads, the indices of the
/// patterns reading that many packed by `vpcompressb` (the counting sort's stores were a
/// tenth of the counting loop at N = 16). `reads` past the run's are `u8::MAX`.
///
/// # Safety
///
/// The CPU has AVX-512 F, BW and VBMI2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn order_by_reads_avx512(
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

/// Patterns of the other side whose entries are worked out together, a batch: its runs pass
/// over the stored blocks a stretch at a time, so that a block's tables, loaded once, serve
/// every run of the batch that reaches it. A run alone holds too few patterns to pay for
/// loading them (40 on average at N = 24 with fifteen pivots), and each visit took the
/// longer the more blocks were stored: 1.7 ns with 2^18 stored patterns at N = 24, 3.7 ns
/// with 2^22 (Zen 4), 2.9 ns once batched. 2048 and 8192 patterns were alike or slower.
const BATCH: usize = 4096;

/// Most runs in a batch (short runs of many signatures, each with its own reach).
const BATCH_RUNS: usize = 128;

/// Stored blocks a batch visits at a time (about 3 MB of tables, of which the batch's runs
/// reach a few hundred kilobytes): 128 and 512 were alike, 64 slower (a run then reaches too
/// few blocks of a stretch to visit four at a time).
const STRETCH_BLOCKS: usize = 256;

/// The counting loop's buffers, kept from unit to unit: each pattern of a batch's entries,
/// and for each run of it, how many of its own lookups each pattern reads and its patterns
/// in increasing order of that.
#[derive(Clone, Debug, Default)]
struct BatchBuffers {
    entries: Vec<u32>,
    reads: Vec<RunReads>,
    order: Vec<RunOrder>,
}

/// How the counting loop batches runs (see [`count_pairs`]): blocks visited a stretch at a
/// time where there are more than `stretch`, batches of at most `patterns` patterns and
/// `runs` runs (at most [`BATCH`] and [`BATCH_RUNS`]: the tests take fewer).
#[derive(Clone, Copy, Debug)]
struct Batching {
    stretch: usize,
    patterns: usize,
    runs: usize,
}

impl Default for Batching {
    fn default() -> Batching {
        Batching {
            stretch: STRETCH_BLOCKS,
            patterns: BATCH,
            runs: BATCH_RUNS,
        }
    }
}

/// Most lookups of the pivots, which a run shares.
const SHARED_MOST: usize = PIVOTS.div_ceil(TABLE_BITS as usize);

/// A run of a batch: patterns `first..first + len` of the batch, of one signature, whose
/// compatible blocks still to visit are `reach[next..end]`.
#[derive(Clone, Copy, Default)]
struct BatchRun {
    first: usize,
    len: usize,
    next: usize,
    end: usize,
    /// The run's shared entries (its pivots' lookups).
    shared: [u32; SHARED_MOST],
}

/// One load's counting loop and its steps: packing a pattern's seen diagonals, adding up the
/// clashes' popcounts, filling a pattern's own entries from its dense word and ordering a
/// run by reads (see [`count_body`]). `RECORDS`: the other side comes as records of dense
/// words ([`Sieve::order`]), else as patterns whose seen diagonals `pack` gathers
/// ([`Gather::gather`]). `NARROW`: the seen diagonals other than the pivots fit one word,
/// whose shifts cost less than a pair's. `COMPACT`: a pattern reads only its occupied
/// lookups, and a run is visited in increasing number of reads.
struct Runs<
    'a,
    Pack,
    Add,
    Fill,
    Order,
    const RECORDS: bool,
    const NARROW: bool,
    const COMPACT: bool,
> {
    sieve: &'a Sieve,
    others: &'a [Pattern],
    /// Lookups of the pivots (shared by a run), and the others (each pattern's own).
    shared: usize,
    own: usize,
    pack: Pack,
    add: Add,
    fill_rest: Fill,
    order_run: Order,
}

impl<Pack, Add, Fill, Order, const RECORDS: bool, const NARROW: bool, const COMPACT: bool>
    Runs<'_, Pack, Add, Fill, Order, RECORDS, NARROW, COMPACT>
where
    Pack: Fn(&Gather, Pattern) -> (u64, u64) + Copy,
    Add: Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
    Fill: Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
    Order: Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
{
    /// A pattern's own entries, in `slot` (at least `own` long, 16 where `fill_rest` packs
    /// them): how many it reads.
    #[inline(always)]
    fn fill_own(&self, p: Pattern, slot: &mut [u32]) -> usize {
        let (seen, shared, own) = (&self.sieve.seen, self.shared, self.own);
        if RECORDS {
            return (self.fill_rest)(p.main, shared, own, slot);
        }
        let (main, anti) = (self.pack)(&seen.rest, p);
        if NARROW {
            // a dense word's anti-diagonals follow its main ones (fewer than 64)
            (self.fill_rest)(seen.rest.word((main, anti)), shared, own, slot)
        } else {
            fill_part::<false>((main, anti), &seen.rest, shared, &mut slot[..own]);
            own
        }
    }

    /// The run of signature `group` at `others[at..at + len]`: its own entries in `slots`,
    /// and (`COMPACT`) how many each pattern reads and the order they are visited in.
    /// Returns its shared entries.
    #[inline(always)]
    fn fill(
        &self,
        (group, at, len): (usize, usize, usize),
        slots: &mut [u32],
        (reads, order): (&mut RunReads, &mut RunOrder),
    ) -> [u32; SHARED_MOST] {
        let seen = &self.sieve.seen;
        let run = &self.others[at..at + len];
        let mut shared = [0u32; SHARED_MOST];
        // every pattern of the run occupies the same pivots
        if RECORDS {
            let pivots = seen.signature.gathered_of(group as Signature);
            fill_entries(pivots, 0, &mut shared[..self.shared]);
        } else {
            let pivots = (self.pack)(&seen.pivots, run[0]);
            fill_part::<NARROW>(pivots, &seen.pivots, 0, &mut shared[..self.shared]);
        }
        if COMPACT {
            let mut most = 0;
            for ((i, &p), read) in run.iter().enumerate().zip(reads.iter_mut()) {
                let count = self.fill_own(p, &mut slots[i * self.own..]);
                *read = count as u8;
                most = most.max(count);
            }
            // the run's patterns by how many lookups they read, fewest first: the loop
            // over a pattern's entries then ends after as many steps as the last one's
            // (in the patterns' order, `count 18 -t 1` took 1.12 times as long); the
            // reads past the run's are 0xFF, which no pattern reads
            reads[len..].fill(u8::MAX);
            (self.order_run)(reads, (len, most), order);
        } else {
            for (&p, slot) in run.iter().zip(slots.chunks_exact_mut(self.own)) {
                self.fill_own(p, slot);
            }
        }
        shared
    }

    /// Adds to `counts` the clashes of a run of `len` patterns with the blocks `reach`,
    /// from its entries as [`Runs::fill`] left them.
    #[inline(always)]
    fn visit(
        &self,
        reach: &[u32],
        (shared, own_entries, len): (&[u32], &[u32], usize),
        (reads, order): (&RunReads, &RunOrder),
        counts: &mut [u64; 4],
    ) {
        let (sieve, own, add) = (self.sieve, self.own, self.add);
        if COMPACT {
            let patterns = order[..len].iter().map(|&i| {
                let i = usize::from(i);
                &own_entries[i * own..][..usize::from(reads[i])]
            });
            visit_blocks(
                sieve,
                reach,
                (&shared[..self.shared], patterns),
                (counts, add),
            );
        } else {
            let patterns = own_entries[..len * own].chunks_exact(own);
            visit_blocks(
                sieve,
                reach,
                (&shared[..self.shared], patterns),
                (counts, add),
            );
        }
    }
}

/// The counting loop: the other side's runs (up to [`RUN`] patterns of one signature, in
/// signature order: see [`Sieve::order`]) visit the stored blocks their signature reaches,
/// sharing their pivot lookups, read once per block, each pattern reading the rest. Where
/// the stored blocks are many, the runs are taken a batch at a time: each run's entries are
/// worked out once, then the batch passes over the blocks a stretch at a time, so that a
/// block's tables, loaded once, serve every run of the batch that reaches it. The loops'
/// steps are [`Runs`]'.
#[inline(always)]
fn count_pairs<
    const RECORDS: bool,
    const NARROW: bool,
    const COMPACT: bool,
    const BATCHED: bool,
>(
    sieve: &Sieve,
    (others, start): Ordered,
    stop: &AtomicBool,
    (pack, add, fill_rest, order_run): (
        impl Fn(&Gather, Pattern) -> (u64, u64) + Copy,
        impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
        impl Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
        impl Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
    ),
) -> Option<u64> {
    let shared = sieve.seen.pivot_lookups;
    let own = sieve.lookups - shared;
    let runs = Runs::<_, _, _, _, RECORDS, NARROW, COMPACT> {
        sieve,
        others,
        shared,
        own,
        pack,
        add,
        fill_rest,
        order_run,
    };
    // per 64-bit word: a vector of sums, added up once at the end
    let mut counts = [0u64; 4];
    let mut covered = 0u64;
    // for each pattern of a batch, the entry each of its own lookups reads, as a byte
    // offset in a block, and room for a last store of 16 entries past the batch's
    let mut buffers = sieve.batch.borrow_mut();
    let BatchBuffers {
        entries,
        reads,
        order,
    } = &mut *buffers;
    let Batching {
        stretch: stretch_blocks,
        patterns: most_patterns,
        runs: most_runs,
    } = sieve.batching;
    let size = most_patterns.min(others.len()) * own + 16;
    if entries.len() < size {
        // tens of kilobytes, kept for the next unit
        entries.resize(size, 0);
    }
    if !BATCHED {
        // few blocks: each run visits them all as soon as its entries are worked out
        let (mut run_reads, mut run_order): (RunReads, RunOrder) = ([0; RUN], [0; RUN + 64]);
        let (mut done, mut next_look) = (0, STOP_CHECK);
        for (group, bounds) in start.windows(2).enumerate() {
            let reach = &sieve.reach[sieve.reach_at[group]..sieve.reach_at[group + 1]];
            for at in (bounds[0]..bounds[1]).step_by(RUN) {
                if done >= next_look {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    next_look += STOP_CHECK;
                }
                let len = RUN.min(bounds[1] - at);
                done += len;
                covered += sieve.covered[group] * len as u64;
                let run = (&mut run_reads, &mut run_order);
                let shared = runs.fill((group, at, len), entries, run);
                let run = (&run_reads, &run_order);
                runs.visit(reach, (&shared, &entries[..], len), run, &mut counts);
            }
        }
    } else {
        // for each run of the batch, how many of its own lookups each pattern reads, and
        // its patterns in increasing order of that
        if reads.len() < most_runs {
            reads.resize(most_runs, [0; RUN]);
            order.resize(most_runs, [0; RUN + 64]);
        }
        let mut batch = [BatchRun::default(); BATCH_RUNS];
        // where the next batch starts: a signature, and a pattern of it
        let (mut group, mut at) = (0, start[0]);
        let groups = start.len() - 1;
        let stride = sieve.lookups * TABLE_ENTRIES;
        let stretches = sieve.blocks.div_ceil(stretch_blocks);
        loop {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            // the batch: runs of the next signatures, their entries worked out
            let (mut held, mut filled) = (0, 0);
            while held < most_runs && filled < most_patterns && group < groups {
                if at == start[group + 1] {
                    group += 1;
                    at = start.get(group).copied().unwrap_or(at);
                    continue;
                }
                let len = RUN.min(start[group + 1] - at).min(most_patterns - filled);
                covered += sieve.covered[group] * len as u64;
                let run = (&mut reads[held], &mut order[held]);
                batch[held] = BatchRun {
                    first: filled,
                    len,
                    next: sieve.reach_at[group],
                    end: sieve.reach_at[group + 1],
                    shared: runs.fill((group, at, len), &mut entries[filled * own..], run),
                };
                held += 1;
                filled += len;
                at += len;
            }
            if held == 0 {
                break;
            }
            // the stored blocks a stretch at a time, each run visiting those it reaches
            for stretch_end in (1..=stretches).map(|s| s * stretch_blocks) {
                let limit = (stretch_end * stride) as u32;
                for (r, run) in batch[..held].iter_mut().enumerate() {
                    let reach = &sieve.reach[run.next..run.end];
                    let n = reach.partition_point(|&b| b < limit);
                    if n == 0 {
                        continue;
                    }
                    run.next += n;
                    let entries = (&run.shared[..], &entries[run.first * own..], run.len);
                    runs.visit(&reach[..n], entries, (&reads[r], &order[r]), &mut counts);
                }
            }
        }
    }
    let hits: u64 = counts.iter().sum();
    Some(covered - hits)
}

/// Adds to `counts` the clashes of a run's patterns (their entries: the run's shared ones,
/// then each pattern's own) with the blocks `reach`: [`LANES`] blocks at a time, then the
/// rest two and one at a time.
#[inline(always)]
fn visit_blocks<'a>(
    sieve: &Sieve,
    reach: &[u32],
    (shared, patterns): (&[u32], impl Iterator<Item = &'a [u32]> + Clone),
    (counts, add): (&mut [u64; 4], impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy),
) {
    let mut fours = reach.chunks_exact(LANES);
    for four in &mut fours {
        count_run::<LANES>(sieve, four, (shared, patterns.clone()), (counts, add));
    }
    let mut twos = fours.remainder().chunks_exact(2);
    for two in &mut twos {
        count_run::<2>(sieve, two, (shared, patterns.clone()), (counts, add));
    }
    for one in twos.remainder().chunks_exact(1) {
        count_run::<1>(sieve, one, (shared, patterns.clone()), (counts, add));
    }
}

/// The entries of lookups `first..` for a pattern whose bits on `part` are `(main, anti)`
/// ([`Gather::gather`]), in one word (`NARROW`: 64 bits) or two.
#[inline(always)]
fn fill_part<const NARROW: bool>(
    (main, anti): (u64, u64),
    part: &Gather,
    first: usize,
    entries: &mut [u32],
) {
    // a dense word's anti-diagonals follow its main ones (fewer than 64: at most 2n - 1)
    if NARROW {
        fill_entries(part.word((main, anti)), first, entries);
    } else {
        let dense = u128::from(main) | u128::from(anti) << part.main_count;
        fill_entries(dense, first, entries);
    }
}

/// The entries of lookups `first..` for a pattern whose dense word ([`Seen`]) from lookup
/// `first` on is `dense`, as byte offsets within a block.
#[inline(always)]
fn fill_entries<D: Dense>(dense: D, first: usize, entries: &mut [u32]) {
    // each entry from its own shift of the word: a chain of shifts, one per entry, made
    // `count 18 -t 1` 4 % slower
    for (i, entry) in entries.iter_mut().enumerate() {
        *entry = (((first + i) * TABLE_ENTRIES + dense.subset_at(i)) * SLICE_BYTES) as u32;
    }
}

/// A pattern's dense word ([`Seen`]), or part of it, read a lookup at a time: `u64` where
/// it fits (its shifts are cheaper), else `u128`.
trait Dense: Copy {
    /// The lowest lookup's subset (its `TABLE_BITS` low bits).
    fn subset(self) -> usize;
    /// Lookup `i`'s subset (bits `i * TABLE_BITS..`).
    fn subset_at(self, i: usize) -> usize;
}

/// The same two steps for both widths.
macro_rules! dense_word {
    ($($word:ty),*) => {$(
        impl Dense for $word {
            #[inline(always)]
            fn subset(self) -> usize {
                self as usize & (TABLE_ENTRIES - 1)
            }

            #[inline(always)]
            fn subset_at(self, i: usize) -> usize {
                (self >> (i as u32 * TABLE_BITS)).subset()
            }
        }
    )*};
}

dense_word!(u64, u128);

/// Blocks whose ORs are taken together: independent chains, and each entry offset read once
/// for all.
const LANES: usize = 4;

/// Bytes of one slice of a block.
const SLICE_BYTES: usize = std::mem::size_of::<Slice>();

/// For each of the blocks starting at `data[blocks[i]]`, `clash[i]` ORed with its entries at
/// the byte offsets `entries`: the stored patterns clashing with the pattern.
#[inline(always)]
fn or_entries<const L: usize>(
    sieve: &Sieve,
    blocks: [u32; L],
    entries: &[u32],
    mut clash: [[u64; 4]; L],
) -> [[u64; 4]; L] {
    let base = sieve.data.as_slice().as_ptr();
    let block = blocks.map(|b| base.wrapping_add(b as usize));
    for &e in entries {
        for (clash, &block) in clash.iter_mut().zip(&block) {
            // SAFETY: `b` is a block's start in `data` (`index_reach`) and `e` an entry's offset
            // within a block (below `lookups * TABLE_ENTRIES` slices): the read lies in `data`.
            let v = unsafe { block.byte_add(e as usize).read() }.0;
            for w in 0..4 {
                clash[w] |= v[w];
            }
        }
    }
    clash
}

/// Adds to `counts` the clashes of each pattern of a run with the `L` blocks starting at
/// `blocks`: the run's shared entries are read once, then each pattern's own.
#[inline(always)]
fn count_run<'a, const L: usize>(
    sieve: &Sieve,
    blocks: &[u32],
    (shared, patterns): (&[u32], impl Iterator<Item = &'a [u32]>),
    (counts, add): (&mut [u64; 4], impl Fn(&mut [u64; 4], &[[u64; 4]])),
) {
    let blocks: [u32; L] = blocks.try_into().expect("L blocks");
    let run = or_entries(sieve, blocks, shared, [[0; 4]; L]);
    for entries in patterns {
        add(counts, &or_entries(sieve, blocks, entries, run));
    }
}

/// Adds each word's popcount to `counts` (kept per word, so the compiler keeps a vector).
#[inline(always)]
fn add_popcounts(counts: &mut [u64; 4], clash: &[[u64; 4]]) {
    for c in clash {
        for w in 0..4 {
            counts[w] += u64::from(c[w].count_ones());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn transpose64_swaps_rows_and_columns() {
        let mut next = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
        let rows: [u64; 64] = std::array::from_fn(|_| next());
        let mut t = rows;
        transpose64(&mut t);
        for (r, row) in rows.iter().enumerate() {
            for (c, column) in t.iter().enumerate() {
                assert_eq!(row >> c & 1, column >> r & 1, "({r}, {c})");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn transpose_on_avx512(rows: &mut [u64; 64]) {
        // SAFETY: compiled for them.
        unsafe { transpose64_gfni(rows) }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn transpose64_gfni_transposes_like_the_rounds() {
        let f = crate::kernel::features();
        if !f.avx512_ice_lake {
            return;
        }
        let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20 {
            let rows: [u64; 64] = std::array::from_fn(|_| next());
            let (mut want, mut got) = (rows, rows);
            transpose64(&mut want);
            // SAFETY: the CPU has them (looked at above).
            unsafe { transpose_on_avx512(&mut got) };
            assert_eq!(got, want);
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,bmi2,popcnt,avx512f,avx512bw,avx512bitalg")]
    fn sign_all_on_avx512(
        s: &Signatures,
        patterns: &[Pattern],
        out: &mut Vec<Signature>,
    ) -> Pattern {
        // SAFETY: compiled for them.
        unsafe { sign_all_avx512(s, patterns, out) }
    }

    /// Four at a time by bit shuffles, or one at a time where the pivots take more than a
    /// byte of one direction: the signatures and union of one at a time.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn signatures_four_at_once_agree_with_one_at_a_time() {
        if !crate::kernel::features().avx512_ice_lake {
            return;
        }
        let mut next = random_patterns(0x2545_F491_4F6C_DD1D, |x| Pattern {
            main: x & x >> 7,
            anti: x & x >> 13,
        });
        let patterns: Vec<Pattern> = (0..1003).map(|_| next()).collect();
        // pivots over both words and several bytes; the last: nine main diagonals
        let spread = |count: usize| (0..count).map(|i| ((i * 23 + 5) % 64 + i % 2 * 64, i));
        let nine_main = (0..10).map(|i| if i < 9 { (i * 7, i) } else { (64 + 40, i) });
        let cases: Vec<Vec<(usize, usize)>> = (0..=PIVOTS)
            .map(|count| spread(count).collect())
            .chain([nine_main.collect()])
            .collect();
        for diagonals in &cases {
            let count = diagonals.len();
            let bits = diagonals.iter().map(|&(d, i)| (d, 1 << (count - 1 - i)));
            let signatures = Signatures::from_diagonals(bits);
            let fits = diagonals.iter().filter(|&&(d, _)| d < 64).count() <= 8
                && diagonals.iter().filter(|&&(d, _)| d >= 64).count() <= 8;
            assert_eq!(signatures.four_at_once().is_some(), fits, "{diagonals:?}");
            for len in [0, 3, 4, 1003] {
                let (mut want, mut got) = (Vec::new(), Vec::new());
                let one = |p| signatures.signature(p);
                let union = Signatures::sign_each(&patterns[..len], &mut want, one);
                // SAFETY: the CPU has them (looked at above).
                let four = unsafe { sign_all_on_avx512(&signatures, &patterns[..len], &mut got) };
                assert_eq!((got, four), (want, union), "{diagonals:?}, {len}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2")]
    fn order_on_avx512(reads: &RunReads, run: (usize, usize), order: &mut RunOrder) {
        // SAFETY: compiled for them.
        unsafe { order_by_reads_avx512(reads, run, order) }
    }

    /// A run's order by reads 64 at a time is the counting sort's, whatever its length.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn runs_ordered_by_reads_alike() {
        if !crate::kernel::features().avx512_ice_lake {
            return;
        }
        let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
        for (len, most) in [
            (0, 0),
            (1, 0),
            (5, 3),
            (63, 16),
            (64, 7),
            (65, 16),
            (200, 9),
            (RUN, 16),
        ] {
            let mut reads: RunReads = [u8::MAX; RUN];
            for r in &mut reads[..len] {
                *r = (next() % (most as u64 + 1)) as u8;
            }
            let (mut want, mut got): (RunOrder, RunOrder) = ([0; RUN + 64], [0; RUN + 64]);
            order_by_reads(&reads, (len, most), &mut want);
            // SAFETY: the CPU has them (looked at above).
            unsafe { order_on_avx512(&reads, (len, most), &mut got) };
            assert_eq!(got[..len], want[..len], "{len}, {most}");
            let sorted = want[..len].windows(2).all(|w| {
                let (a, b) = (reads[usize::from(w[0])], reads[usize::from(w[1])]);
                a < b || a == b && w[0] < w[1]
            });
            assert!(sorted, "{len}, {most}: by reads, then in the run's order");
        }
    }

    /// Random patterns: a generator of `u64`s seeded with `seed`, each turned into a pattern
    /// by `shape` (which makes them as sparse as a test needs).
    pub(crate) fn random_patterns(seed: u64, shape: fn(u64) -> Pattern) -> impl FnMut() -> Pattern {
        let mut random = crate::kernel::xorshift(seed);
        move || shape(random())
    }

    /// Patterns from a small generator, compared with the plain pair test.
    #[test]
    fn counts_like_the_pair_test() {
        let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
            main: x & x >> 9 & 0x3FFF_FFFF,
            anti: x >> 30 & x >> 41 & 0x3FFF_FFFF,
        });
        let cases = [
            (0, 5),
            (1, 1),
            (255, 3),
            (256, 7),
            (257, 40),
            (1000, 33),
            (800, 1100),
            // blocks and the other side enough, too few pairs
            (2000, 2000),
            (3000, 1500),
        ];
        for (a, b) in cases {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let sieve = loaded_like_the_pair_test(&left, &right);
            let grouped = a > 2 * BLOCK && b >= MIN_GROUPED_OTHERS && a * b >= MIN_GROUPED_PAIRS;
            assert_eq!(sieve.pivots.count > 0, grouped, "{a} x {b} grouped");
        }
    }

    /// The other side's order: each signature's patterns together, as the records the
    /// counting loop reads (one signature's longer than [`RUN`]); counted alike on every
    /// loop, and a set stop flag gives nothing.
    #[test]
    fn ordered_records_count_alike_and_a_stop_counts_nothing() {
        let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
            main: x & x >> 9 & 0x3FFF_FFFF,
            anti: x >> 30 & x >> 41 & 0x3FFF_FFFF,
        });
        let left: Vec<Pattern> = (0..3000).map(|_| next()).collect();
        let right: Vec<Pattern> = (0..4000).map(|_| next()).collect();
        let mut sieve = loaded_like_the_pair_test(&left, &right);
        assert!(sieve.reads_records(), "grouped, in records");
        let seen = &sieve.seen;
        let dense = |part: &Gather, p| {
            let (main, anti) = part.gather_by_lookups(p);
            main | anti << part.main_count
        };
        let mut want: Vec<(Signature, u64, u64)> = right
            .iter()
            .map(|&p| (seen.signature.signature(p), dense(&seen.rest, p), 0))
            .collect();
        // a signature's pivots are each of its patterns'
        for &p in &right {
            let s = seen.signature.signature(p);
            assert_eq!(seen.signature.gathered_of(s), dense(&seen.pivots, p));
        }
        want.sort_unstable();
        for kernel in PairKernel::available() {
            let (mut ordered, mut signatures, mut start) = (Vec::new(), Vec::new(), Vec::new());
            let buffers = (&mut ordered, &mut signatures, &mut start);
            sieve.order(kernel, &right, buffers).unwrap();
            assert_eq!(start.last(), Some(&right.len()), "{kernel:?}");
            let mut got: Vec<(Signature, u64, u64)> = start
                .windows(2)
                .enumerate()
                .flat_map(|(s, at)| ordered[at[0]..at[1]].iter().map(move |r| (s, r)))
                .map(|(s, r)| (s as Signature, r.main, r.anti))
                .collect();
            got.sort_unstable();
            assert_eq!(got, want, "{kernel:?}: each record under its signature");
            let longest = start.windows(2).map(|at| at[1] - at[0]).max();
            assert!(longest > Some(RUN), "a run longer than RUN: {longest:?}");
        }
        let (never, stopped) = (AtomicBool::new(false), AtomicBool::new(true));
        let counted = sieve.count_disjoint(&right);
        // runs alone, and in batches over stretches of blocks
        let batched = Batching {
            stretch: 1,
            patterns: 300,
            runs: 3,
        };
        for batching in [Batching::default(), batched] {
            sieve.batching = batching;
            for kernel in PairKernel::available() {
                let mut count = |stop| sieve.count_disjoint_on(kernel, &right, stop).unwrap();
                assert_eq!(count(&never), Some(counted), "{kernel:?} {batching:?}");
                assert_eq!(count(&stopped), None, "{kernel:?} {batching:?}");
            }
        }
    }

    /// Masks whose diagonals span more than 32 bits each take the load with one transpose
    /// per direction instead of one for both.
    #[test]
    fn counts_like_the_pair_test_on_wide_masks() {
        let mut random = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
        let mut next = || {
            let (x, y) = (random(), random());
            Pattern {
                main: x & x >> 9 & x >> 19,
                anti: y & y >> 9 & y >> 19,
            }
        };
        // the last grouped, its other side read as patterns: the rest spans two words
        for (a, b) in [(100, 100), (1000, 1100), (3000, 1500)] {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let span = |m: u64| 64 - m.leading_zeros() - m.trailing_zeros();
            let main = left.iter().fold(0, |m, p| m | p.main);
            assert!(span(main) > 32, "{a} x {b} spans {}", span(main));
            let sieve = loaded_like_the_pair_test(&left, &right);
            let grouped = sieve.pivots.count > 0;
            assert_eq!((grouped, sieve.reads_records()), (a == 3000, false));
        }
    }

    /// The other side moved east or west before the pair test: its diagonals are looked up
    /// where the stored ones are.
    #[test]
    fn counts_like_the_pair_test_with_the_other_side_moved() {
        let mut next = random_patterns(0x9E37_79B9_7F4A_7C15, |x| Pattern {
            main: (x & x >> 9 & 0x3FFF_FFFF) << 6,
            anti: (x >> 30 & x >> 41 & 0x3FFF_FFFF) << 6,
        });
        for shift in [
            Shift::west(5),
            Shift::east(6),
            Shift::west(11),
            Shift::east(1),
        ] {
            for (a, b) in [(300, 40), (3000, 1500)] {
                let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
                let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
                let mut sieve = loaded_like_the_pair_test_moved(&left, &right, shift);
                let got = sieve.count_disjoint(&right);
                assert!(got > 0 && got < (a * b) as u64, "{a} x {b} {shift:?}");
            }
        }
    }

    /// Loads `left`, checks both counting loops against the plain pair test, returns the sieve.
    fn loaded_like_the_pair_test(left: &[Pattern], right: &[Pattern]) -> Sieve {
        loaded_like_the_pair_test_moved(left, right, Shift::default())
    }

    /// [`loaded_like_the_pair_test`] with `right` moved by `shift`: laid out and counted by
    /// every pair loop, in every pairing (the layout is the same whichever lays it out).
    fn loaded_like_the_pair_test_moved(left: &[Pattern], right: &[Pattern], shift: Shift) -> Sieve {
        let want = left
            .iter()
            .flat_map(|p| right.iter().map(move |q| p.disjoint(shift.apply(*q))))
            .filter(|&ok| ok)
            .count() as u64;
        let (a, b) = (left.len(), right.len());
        let mut sieve = Sieve::default();
        // the blocks also in stretches of one and two, the runs in batches of a few
        let batchings = [
            Batching::default(),
            Batching {
                stretch: 1,
                patterns: 300,
                runs: 3,
            },
            Batching {
                stretch: 2,
                patterns: 1000,
                runs: 40,
            },
        ];
        for layout in PairKernel::available() {
            sieve.load(layout, left, (right, shift)).unwrap();
            for kernel in PairKernel::available() {
                for batching in batchings {
                    sieve.batching = batching;
                    let got = sieve.count_disjoint_on(kernel, right, &AtomicBool::new(false));
                    assert_eq!(
                        got.unwrap(),
                        Some(want),
                        "{layout:?}/{kernel:?}, {a} x {b} {shift:?} {batching:?}"
                    );
                }
            }
        }
        sieve.batching = Batching::default();
        sieve
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn sieve_example() {
        use crate::quadrant::pattern::{Pattern, Shift};
        use crate::quadrant::sieve::Sieve;
        let n = 4;
        let side = [Pattern::queen(n, 0, 1), Pattern::queen(n, 0, 2)];
        let mut sieve = Sieve::default();
        let pairs = crate::quadrant::PairKernel::best();
        sieve.load(pairs, &side, (&[], Shift::default())).unwrap();
        // a queen on (1, 3) shares a diagonal with (0, 2) only
        assert_eq!(sieve.count_disjoint(&[Pattern::queen(n, 1, 3)]), 1);
    }
}
