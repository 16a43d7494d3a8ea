//! The quadrant engine's inner loop: how many pairs of half-board patterns share no diagonal.
//!
//! One side's patterns are stored bit-sliced: for every diagonal that some pattern occupies,
//! the set of patterns occupying it, 256 patterns to a block. A pattern of the other side is
//! compatible with exactly the patterns outside the union of its diagonals' sets, so a pair
//! test costs a fraction of an OR and a popcount instead of two ANDs and a compare.
//!
//! Most pairs clash, and on a few diagonals most of all. Where the lists are long, the
//! stored patterns are sorted by *signature* (which of up to eight such pivot diagonals they
//! occupy) before slicing; a pattern of the other side then visits only the blocks holding a
//! signature disjoint from its own. Each pivot removes about 30 % of the pairs (measured at
//! N = 16 and 18), so the pair work shrinks several times where it matters, at large N.

use super::PairKernel;
use std::collections::TryReserveError;

/// The diagonals a set of queens occupies, as full-board masks: main diagonal
/// `row - col + n - 1`, anti-diagonal `row + col` (bits `0..2n-1`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Pattern {
    /// Main diagonals (`row - col + n - 1`).
    pub main: u64,
    /// Anti-diagonals (`row + col`).
    pub anti: u64,
}

impl Pattern {
    /// The diagonals of one queen at `(row, col)` on an `n`×`n` board.
    pub fn queen(n: usize, row: usize, col: usize) -> Pattern {
        Pattern {
            main: 1 << (row + n - 1 - col),
            anti: 1 << (row + col),
        }
    }

    /// Both patterns together.
    pub fn with(self, other: Pattern) -> Pattern {
        Pattern {
            main: self.main | other.main,
            anti: self.anti | other.anti,
        }
    }

    /// Whether the two share no diagonal.
    pub fn disjoint(self, other: Pattern) -> bool {
        (self.main & other.main) | (self.anti & other.anti) == 0
    }
}

/// Moves patterns some columns east or west: a queen `c` columns further east has main
/// diagonal `row - col + n - 1` lower by `c` and anti-diagonal `row + col` higher by `c`. The
/// quadrant engine builds its east half in the west half's columns and moves one side's
/// patterns with this before they meet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shift {
    /// How far the main and anti-diagonal masks move up (down when negative).
    main: i8,
    anti: i8,
}

impl Shift {
    /// Moves patterns `columns` columns west. Anti-diagonals that would fall below 0 are
    /// dropped: a queen `columns` or more columns east of the west edge lies on none of them.
    pub fn west(columns: usize) -> Shift {
        Shift {
            main: columns as i8,
            anti: -(columns as i8),
        }
    }

    /// Moves patterns `columns` columns east (back where [`Shift::west`] took them).
    pub fn east(columns: usize) -> Shift {
        Shift {
            main: -(columns as i8),
            anti: columns as i8,
        }
    }

    /// `p` moved.
    #[inline(always)]
    pub fn apply(self, p: Pattern) -> Pattern {
        let by = |mask: u64, up: i8| {
            if up >= 0 {
                mask << up
            } else {
                mask >> -up
            }
        };
        Pattern {
            main: by(p.main, self.main),
            anti: by(p.anti, self.anti),
        }
    }
}

/// Transposes a 64×64 bit matrix in place: bit `c` of `rows[r]` becomes bit `r` of
/// `rows[c]` (six rounds of swapping off-diagonal blocks of 32, 16, ... 1 bits).
#[inline]
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

/// Patterns per block: one 256-bit vector per diagonal.
const BLOCK: usize = 256;

/// Most diagonals the stored patterns are grouped by. A pattern's *signature* says which
/// pivots it occupies; it can only pair with stored patterns whose signature shares no pivot
/// with its own, so stored blocks holding none of those are skipped.
const PIVOTS: usize = 8;

/// Signatures of [`PIVOTS`] bits.
const GROUPS: usize = 1 << PIVOTS;

/// Fewest stored blocks for which grouping pays: below it, sorting the stored patterns by
/// signature costs more than the blocks it skips.
const MIN_GROUPED_BLOCKS: usize = 3;

/// Fewest patterns on the other side for which grouping pays: the sort costs per stored
/// pattern, the skipping saves per pattern of the other side (measured: 512, 1024, 2048 and
/// 4096 tried at N = 16, 17, 18 on Zen 3; 1024 was best or within noise of it).
const MIN_GROUPED_OTHERS: usize = 1024;

/// Patterns sampled per side to choose the pivots.
const PIVOT_SAMPLE: usize = 128;

/// Signatures as 256-bit sets: `COMPATIBLE[s]` holds every `t` with `t & s == 0`.
static COMPATIBLE: [[u64; 4]; GROUPS] = compatible_table();

const fn compatible_table() -> [[u64; 4]; GROUPS] {
    let mut table = [[0u64; 4]; GROUPS];
    let mut s = 0;
    while s < GROUPS {
        let mut t = 0;
        while t < GROUPS {
            if t & s == 0 {
                table[s][t / 64] |= 1 << (t % 64);
            }
            t += 1;
        }
        s += 1;
    }
    table
}

/// The diagonals patterns are grouped by.
#[derive(Clone, Copy, Debug, Default)]
struct Pivots {
    count: usize,
    /// Pivot `i`'s diagonal as a pattern.
    mask: [Pattern; PIVOTS],
}

impl Pivots {
    /// Bit `count - 1 - i` set when `p` occupies pivot `i` (the definition;
    /// [`SignatureBytes`] computes it).
    #[cfg(test)]
    fn signature(&self, p: Pattern) -> usize {
        let mut s = 0;
        for m in &self.mask[..self.count] {
            s = s << 1 | usize::from(p.main & m.main | p.anti & m.anti != 0);
        }
        s
    }

    /// Pivot `i`'s diagonal, indexed like [`Sieve`]'s `slot`, and its bit in a signature.
    fn diagonals(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.mask[..self.count].iter().enumerate().map(|(i, m)| {
            let d = if m.main != 0 {
                m.main.trailing_zeros()
            } else {
                64 + m.anti.trailing_zeros()
            };
            (d as usize, 1 << (self.count - 1 - i))
        })
    }

    /// Each diagonal's bit in the signature (`Pivots::signature`), indexed like [`Sieve`]'s `slot`.
    fn signature_bits(&self) -> [u8; 128] {
        let mut bits = [0; 128];
        for (d, bit) in self.diagonals() {
            bits[d] = bit;
        }
        bits
    }

    /// The diagonals occupied most often on both sides, strongest first: a pair clashes on
    /// diagonal `d` about as often as the product of the two sides' rates.
    fn choose(count: usize, stored: &[Pattern], (others, shift): (&[Pattern], Shift)) -> Pivots {
        if count == 0 {
            return Pivots::default();
        }
        let occupancy = |side: &[Pattern], shift: Shift| {
            let mut rate = [0u32; 128];
            let step = side.len().div_ceil(PIVOT_SAMPLE).max(1);
            for &p in side.iter().step_by(step) {
                let p = shift.apply(p);
                for_each_bit(p.main, |d| rate[d] += 1);
                for_each_bit(p.anti, |d| rate[64 + d] += 1);
            }
            rate
        };
        let (a, b) = (
            occupancy(stored, Shift::default()),
            occupancy(others, shift),
        );
        let mut score: [u64; 128] = std::array::from_fn(|d| u64::from(a[d]) * u64::from(b[d]));
        let mut pivots = Pivots::default();
        while pivots.count < count {
            let (d, &best) = score
                .iter()
                .enumerate()
                .max_by_key(|&(d, s)| (*s, std::cmp::Reverse(d)))
                .expect("128 scores");
            if best == 0 {
                break;
            }
            pivots.mask[pivots.count] = one_diagonal(d);
            pivots.count += 1;
            score[d] = 0;
        }
        pivots
    }

    /// Copies `patterns` into `sorted` in increasing signature; group `g` ends up at
    /// `sorted[start[g]..start[g + 1]]` (a counting sort; `signatures` is a buffer).
    fn group(
        &self,
        patterns: &[Pattern],
        sorted: &mut Vec<Pattern>,
        signatures: &mut Vec<u8>,
        start: &mut [usize; GROUPS + 1],
    ) -> Result<(), TryReserveError> {
        let groups = 1 << self.count;
        let bytes = SignatureBytes::new(self);
        signatures.clear();
        signatures.try_reserve(patterns.len())?;
        signatures.extend(patterns.iter().map(|&p| bytes.signature(p)));
        start[..=groups].fill(0);
        for &s in signatures.iter() {
            start[usize::from(s) + 1] += 1;
        }
        for g in 0..groups {
            start[g + 1] += start[g];
        }
        sorted.clear();
        sorted.try_reserve(patterns.len())?;
        sorted.resize(patterns.len(), Pattern::default());
        let mut next = [0; GROUPS];
        next[..groups].copy_from_slice(&start[..groups]);
        for (&p, &s) in patterns.iter().zip(signatures.iter()) {
            let at = &mut next[usize::from(s)];
            sorted[*at] = p;
            *at += 1;
        }
        Ok(())
    }
}

/// Diagonal `d` alone, indexed like [`Sieve`]'s `slot` (main diagonals below 64).
fn one_diagonal(d: usize) -> Pattern {
    if d < 64 {
        Pattern {
            main: 1 << d,
            anti: 0,
        }
    } else {
        Pattern {
            main: 0,
            anti: 1 << (d - 64),
        }
    }
}

/// `Pivots::signature` by table lookups, a byte of the masks at a time: pivots crowd into
/// the middle diagonals, so a few bytes hold them all (testing the pivots one by one took
/// a sixth of the time at N = 18).
struct SignatureBytes {
    count: usize,
    /// Where lookup `l`'s byte starts: bit `at[l]` of `main`, or bit `at[l] - 64` of `anti`.
    at: [u8; PIVOTS],
    /// The signature bits that each value of lookup `l`'s byte gives.
    bits: [[u8; 256]; PIVOTS],
}

impl SignatureBytes {
    fn new(pivots: &Pivots) -> SignatureBytes {
        let mut table = SignatureBytes {
            count: 0,
            at: [0; PIVOTS],
            bits: [[0; 256]; PIVOTS],
        };
        for (d, bit) in pivots.diagonals() {
            let at = (d / 8 * 8) as u8;
            let l = match table.at[..table.count].iter().position(|&a| a == at) {
                Some(l) => l,
                None => {
                    table.at[table.count] = at;
                    table.count += 1;
                    table.count - 1
                }
            };
            for (value, bits) in table.bits[l].iter_mut().enumerate() {
                if value >> (d % 8) & 1 != 0 {
                    *bits |= bit;
                }
            }
        }
        table
    }

    #[inline(always)]
    fn signature(&self, p: Pattern) -> u8 {
        let mut s = 0;
        for (&at, bits) in self.at[..self.count].iter().zip(&self.bits) {
            let word = if at < 64 { p.main } else { p.anti };
            s |= bits[(word >> (at % 64)) as usize & 0xFF];
        }
        s
    }
}

/// What the counting loop looks up of the stored side, indexed by the other side's
/// diagonals.
#[derive(Clone, Debug)]
struct Seen {
    main: u64,
    anti: u64,
    slot: [u8; 128],
    signature_bit: [u8; 128],
}

impl Default for Seen {
    fn default() -> Seen {
        Seen {
            main: 0,
            anti: 0,
            slot: [0; 128],
            signature_bit: [0; 128],
        }
    }
}

/// One side's patterns, grouped by signature and bit-sliced by diagonal.
#[derive(Clone, Debug)]
pub struct Sieve {
    len: usize,
    blocks: usize,
    slices: usize,
    /// Slice index of main diagonal `d` at `d`, of anti-diagonal `d` at `64 + d`.
    slot: [u8; 128],
    main: u64,
    anti: u64,
    /// Moves a pattern of the other side where the stored patterns are.
    others_shift: Shift,
    /// `main`, `anti`, `slot` and `signature_bit` where the other side's patterns are: a
    /// pattern is looked up as it is, not moved first (moving each cost 8 % at N = 18).
    seen: Seen,
    /// Block-major: block `b`'s slice `s` at `b * slices + s`.
    data: Vec<[u64; 4]>,
    pivots: Pivots,
    /// A diagonal's bit in the signature (0 for diagonals that are not pivots), indexed
    /// like `slot`.
    signature_bit: [u8; 128],
    /// For signature `s`, the blocks holding a pattern it can pair with, at
    /// `reach[reach_at[s]..reach_at[s + 1]]`, and how many patterns those blocks hold.
    reach: Vec<u32>,
    reach_at: Vec<usize>,
    covered: Vec<u64>,
    /// Buffers: the stored patterns in signature order, and their signatures.
    sorted: Vec<Pattern>,
    signatures: Vec<u8>,
}

impl Default for Sieve {
    fn default() -> Sieve {
        Sieve {
            len: 0,
            blocks: 0,
            slices: 0,
            slot: [0; 128],
            main: 0,
            anti: 0,
            others_shift: Shift::default(),
            seen: Seen::default(),
            data: Vec::new(),
            pivots: Pivots::default(),
            signature_bit: [0; 128],
            reach: Vec::new(),
            reach_at: Vec::new(),
            covered: Vec::new(),
            sorted: Vec::new(),
            signatures: Vec::new(),
        }
    }
}

impl Sieve {
    /// Replaces the stored patterns with `patterns`, grouped for counting against patterns
    /// like `others`, which `others_shift` moves where `patterns` are (the buffers are
    /// reused); an error when the memory for them cannot be had.
    pub fn load(
        &mut self,
        patterns: &[Pattern],
        (others, others_shift): (&[Pattern], Shift),
    ) -> Result<(), TryReserveError> {
        self.others_shift = others_shift;
        let blocks = patterns.len().div_ceil(BLOCK);
        // enough pivots to tell the blocks apart, and two more to split them further
        let count = if blocks < MIN_GROUPED_BLOCKS || others.len() < MIN_GROUPED_OTHERS {
            0
        } else {
            (blocks.ilog2() as usize + 2).min(PIVOTS)
        };
        self.pivots = Pivots::choose(count, patterns, (others, others_shift));
        self.signature_bit = self.pivots.signature_bits();
        let mut start = [0; GROUPS + 1];
        if self.pivots.count == 0 {
            self.slice(patterns)?;
            start[1] = patterns.len();
        } else {
            let mut sorted = std::mem::take(&mut self.sorted);
            let mut signatures = std::mem::take(&mut self.signatures);
            let grouped = self
                .pivots
                .group(patterns, &mut sorted, &mut signatures, &mut start);
            self.signatures = signatures;
            grouped?;
            let sliced = self.slice(&sorted);
            self.sorted = sorted;
            sliced?;
        }
        self.index_reach(&start)?;
        self.see_from_others();
        Ok(())
    }

    /// Indexes the stored diagonals by the other side's: stored diagonal `d` is the other
    /// side's `d - shift`; those below 0 or past 63 there hold no pattern of the other side.
    fn see_from_others(&mut self) {
        let mut seen = Seen::default();
        for (mask, offset, up) in [
            (self.main, 0, self.others_shift.main),
            (self.anti, 64, self.others_shift.anti),
        ] {
            let mut kept = 0;
            for_each_bit(mask, |d| {
                let theirs = d as isize - isize::from(up);
                if !(0..64).contains(&theirs) {
                    return;
                }
                let theirs = theirs as usize;
                kept |= 1 << theirs;
                seen.slot[offset + theirs] = self.slot[offset + d];
                seen.signature_bit[offset + theirs] = self.signature_bit[offset + d];
            });
            if offset == 0 {
                seen.main = kept;
            } else {
                seen.anti = kept;
            }
        }
        self.seen = seen;
    }

    /// Bit-slices `patterns` into blocks.
    fn slice(&mut self, patterns: &[Pattern]) -> Result<(), TryReserveError> {
        let (main, anti) = patterns
            .iter()
            .fold((0, 0), |(m, a), p| (m | p.main, a | p.anti));
        self.len = patterns.len();
        self.main = main;
        self.anti = anti;
        let mut slices = 0;
        for bit in 0..64 {
            if main >> bit & 1 != 0 {
                self.slot[bit] = slices;
                slices += 1;
            }
            if anti >> bit & 1 != 0 {
                self.slot[64 + bit] = slices;
                slices += 1;
            }
        }
        self.slices = slices as usize;
        self.blocks = patterns.len().div_ceil(BLOCK);
        self.data.clear();
        self.data.try_reserve(self.slices * self.blocks)?;
        self.data.resize(self.slices * self.blocks, [0; 4]);
        // 64 patterns at a time: a bit-matrix transpose turns their masks into one word per
        // diagonal (setting bits one by one chains read-modify-writes through memory)
        let slot = &self.slot;
        // (an empty mask shifts by 63, not 64)
        let (main_low, anti_low) = (main.trailing_zeros().min(63), anti.trailing_zeros().min(63));
        // a half-board's diagonals of one direction span at most 32 (up to N = 22): both
        // directions then fit one 64-bit row and one transpose
        let packed = (main >> main_low) >> 32 == 0 && (anti >> anti_low) >> 32 == 0;
        for (w, chunk) in patterns.chunks(64).enumerate() {
            let block = &mut self.data[(w * 64 / BLOCK) * self.slices..][..self.slices];
            let word = w % (BLOCK / 64);
            let mut rows = [0u64; 64];
            if packed {
                for (row, p) in rows.iter_mut().zip(chunk) {
                    *row = p.main >> main_low | (p.anti >> anti_low) << 32;
                }
                transpose64(&mut rows);
                let low = main_low as usize;
                for_each_bit(main, |d| block[slot[d] as usize][word] = rows[d - low]);
                let low = anti_low as usize;
                for_each_bit(anti, |d| {
                    block[slot[64 + d] as usize][word] = rows[32 + d - low]
                });
                continue;
            }
            for (masks, offset) in [(main, 0), (anti, 64)] {
                // a last chunk of fewer than 64 leaves rows past it: they must not keep the
                // other direction's transpose
                rows.fill(0);
                for (row, p) in rows.iter_mut().zip(chunk) {
                    *row = if offset == 0 { p.main } else { p.anti };
                }
                transpose64(&mut rows);
                for_each_bit(masks, |d| block[slot[offset + d] as usize][word] = rows[d]);
            }
        }
        Ok(())
    }

    /// For every signature, the blocks worth visiting: those holding a compatible group
    /// (group `g` is `start[g]..start[g + 1]` of the stored patterns).
    fn index_reach(&mut self, start: &[usize; GROUPS + 1]) -> Result<(), TryReserveError> {
        let groups = 1usize << self.pivots.count;
        // which groups each block holds (groups are runs of the sorted patterns)
        let mut present = Vec::new();
        present.try_reserve_exact(self.blocks)?;
        present.resize(self.blocks, [0u64; 4]);
        for g in 0..groups {
            let (from, to) = (start[g], start[g + 1]);
            if from < to {
                for set in &mut present[from / BLOCK..=(to - 1) / BLOCK] {
                    set[g / 64] |= 1 << (g % 64);
                }
            }
        }
        self.reach.clear();
        self.reach_at.clear();
        self.covered.clear();
        self.reach_at.try_reserve(groups + 1)?;
        self.covered.try_reserve(groups)?;
        self.reach_at.push(0);
        for compatible in &COMPATIBLE[..groups] {
            let mut covered = 0;
            // room for every block, so the pushes below never allocate
            self.reach.try_reserve(present.len())?;
            for (b, set) in present.iter().enumerate() {
                if (0..4).any(|w| set[w] & compatible[w] != 0) {
                    self.reach.push(b as u32);
                    covered += (self.len - b * BLOCK).min(BLOCK) as u64;
                }
            }
            self.reach_at.push(self.reach.len());
            self.covered.push(covered);
        }
        Ok(())
    }

    /// How many pairs (stored pattern, pattern of `others`) share no diagonal, on the fastest
    /// loop this CPU runs.
    #[cfg(test)]
    pub fn count_disjoint(&self, others: &[Pattern]) -> u64 {
        self.count_disjoint_on(PairKernel::best(), others)
    }

    /// How many pairs (stored pattern, pattern of `others` moved as [`Sieve::load`] was told)
    /// share no diagonal, on the loop `pairs`.
    pub fn count_disjoint_on(&self, pairs: PairKernel, others: &[Pattern]) -> u64 {
        if self.len == 0 {
            return 0;
        }
        if self.slices == 0 {
            // no stored pattern occupies a diagonal: every pair is disjoint
            return self.len as u64 * others.len() as u64;
        }
        match pairs {
            PairKernel::Scalar => count_body(self, others),
            // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2 and popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 => unsafe { count_avx2(self, others) },
        }
    }
}

/// The same loop compiled for AVX2 (the 256-bit ORs become one instruction) and popcnt.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
fn count_avx2(sieve: &Sieve, others: &[Pattern]) -> u64 {
    count_body(sieve, others)
}

#[inline(always)]
fn count_body(sieve: &Sieve, others: &[Pattern]) -> u64 {
    if sieve.pivots.count == 0 {
        count_pairs::<false>(sieve, others)
    } else {
        count_pairs::<true>(sieve, others)
    }
}

/// The counting loop, visiting every block or (`GROUPED`) those of the pattern's signature.
#[inline(always)]
fn count_pairs<const GROUPED: bool>(sieve: &Sieve, others: &[Pattern]) -> u64 {
    let mut hits = 0u64;
    let mut covered = 0u64;
    let mut slots = [0u8; 128];
    // without pivots every pattern has signature 0, which reaches every block
    let every_block = &sieve.reach[..sieve.reach_at[1]];
    let seen = &sieve.seen;
    for p in others {
        // only diagonals some stored pattern occupies can clash (the pivots among them)
        let mut k = 0;
        let mut group = 0;
        for_each_bit(p.main & seen.main, |d| {
            slots[k] = seen.slot[d];
            if GROUPED {
                group |= seen.signature_bit[d];
            }
            k += 1;
        });
        for_each_bit(p.anti & seen.anti, |d| {
            slots[k] = seen.slot[64 + d];
            if GROUPED {
                group |= seen.signature_bit[64 + d];
            }
            k += 1;
        });
        let reach = if GROUPED {
            let group = usize::from(group);
            covered += sieve.covered[group];
            &sieve.reach[sieve.reach_at[group]..sieve.reach_at[group + 1]]
        } else {
            every_block
        };
        for &b in reach {
            let block = &sieve.data[b as usize * sieve.slices..][..sieve.slices];
            let mut clash = [0u64; 4];
            for &s in &slots[..k] {
                let v = block[s as usize];
                for w in 0..4 {
                    clash[w] |= v[w];
                }
            }
            hits += clash.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
        }
    }
    if GROUPED {
        covered - hits
    } else {
        sieve.len as u64 * others.len() as u64 - hits
    }
}

#[inline(always)]
fn for_each_bit(mut mask: u64, mut f: impl FnMut(usize)) {
    while mask != 0 {
        f(mask.trailing_zeros() as usize);
        mask &= mask - 1;
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

    #[test]
    fn signature_bytes_agree_with_the_pivot_test() {
        let mut next = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
        let patterns: Vec<Pattern> = (0..2000)
            .map(|_| Pattern {
                main: next() & next(),
                anti: next() & next(),
            })
            .collect();
        for count in 0..=PIVOTS {
            // spread pivots over both words and over several bytes of each
            let mut pivots = Pivots {
                count,
                ..Pivots::default()
            };
            for i in 0..count {
                pivots.mask[i] = one_diagonal((i * 23 + 5) % 64 + i % 2 * 64);
            }
            let bytes = SignatureBytes::new(&pivots);
            for &p in &patterns {
                assert_eq!(
                    usize::from(bytes.signature(p)),
                    pivots.signature(p),
                    "{count}"
                );
            }
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
            (3000, 1500),
        ];
        for (a, b) in cases {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let sieve = loaded_like_the_pair_test(&left, &right);
            let grouped = a > 2 * BLOCK && b >= MIN_GROUPED_OTHERS;
            assert_eq!(sieve.pivots.count > 0, grouped, "{a} x {b} grouped");
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
        for (a, b) in [(100, 100), (1000, 1100)] {
            let left: Vec<Pattern> = (0..a).map(|_| next()).collect();
            let right: Vec<Pattern> = (0..b).map(|_| next()).collect();
            let span = |m: u64| 64 - m.leading_zeros() - m.trailing_zeros();
            let main = left.iter().fold(0, |m, p| m | p.main);
            assert!(span(main) > 32, "{a} x {b} spans {}", span(main));
            loaded_like_the_pair_test(&left, &right);
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
                let sieve = loaded_like_the_pair_test_moved(&left, &right, shift);
                let got = sieve.count_disjoint(&right);
                assert!(got > 0 && got < (a * b) as u64, "{a} x {b} {shift:?}");
            }
        }
    }

    /// Loads `left`, checks both counting loops against the plain pair test, returns the sieve.
    fn loaded_like_the_pair_test(left: &[Pattern], right: &[Pattern]) -> Sieve {
        loaded_like_the_pair_test_moved(left, right, Shift::default())
    }

    /// [`loaded_like_the_pair_test`] with `right` moved by `shift`.
    fn loaded_like_the_pair_test_moved(left: &[Pattern], right: &[Pattern], shift: Shift) -> Sieve {
        let mut sieve = Sieve::default();
        sieve.load(left, (right, shift)).unwrap();
        let want = left
            .iter()
            .flat_map(|p| right.iter().map(move |q| p.disjoint(shift.apply(*q))))
            .filter(|&ok| ok)
            .count() as u64;
        let (a, b) = (left.len(), right.len());
        assert_eq!(sieve.count_disjoint(right), want, "{a} x {b} {shift:?}");
        assert_eq!(
            count_body(&sieve, right),
            want,
            "portable body, {a} x {b} {shift:?}"
        );
        sieve
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn pattern_example() {
        use crate::quadrant::sieve::Pattern;
        let corner = Pattern::queen(8, 0, 0);
        assert_eq!((corner.main, corner.anti), (1 << 7, 1));
        assert!(corner.disjoint(Pattern::queen(8, 1, 2)));
        assert!(!corner.disjoint(Pattern::queen(8, 7, 7)));
    }

    #[test]
    fn sieve_example() {
        use crate::quadrant::sieve::{Pattern, Shift, Sieve};
        let n = 4;
        let side = [Pattern::queen(n, 0, 1), Pattern::queen(n, 0, 2)];
        let mut sieve = Sieve::default();
        sieve.load(&side, (&[], Shift::default())).unwrap();
        // a queen on (1, 3) shares a diagonal with (0, 2) only
        assert_eq!(sieve.count_disjoint(&[Pattern::queen(n, 1, 3)]), 1);
    }
}
