//! How the stored side is laid out: the diagonals the other side sees and how a pattern's
//! bits on them are packed (its dense word), the lookup tables' entries, and the sieve
//! itself, its patterns sliced into blocks and each signature's reach.

use super::batching::{Batching, Scratch};
use crate::quadrant::pattern::{for_each_bit, Pattern, Shift};
use crate::quadrant::pivots::{
    compatible, pivot_bits, signature_of_bits, Pivots, Signature, Signatures,
};
use std::collections::TryReserveError;

/// Patterns per block: one 256-bit vector per diagonal.
pub(super) const BLOCK: usize = 256;

/// The stored side as the other side's patterns see it: its diagonals that the other side can
/// occupy, in the other side's coordinates, and the lookups that turn a pattern of the other
/// side into table offsets without moving it (moving each cost 8 % at N = 18).
///
/// A pattern's seen diagonals are numbered (its *dense* word) pivots first, in lookups of
/// their own (padded with diagonals no pattern occupies), then the rest: every pattern of a
/// run of one signature has the same pivot bits, so a block's pivot lookups are read once
/// for the whole run.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    /// The seen pivots, and the other seen diagonals.
    pub(super) pivots: Gather,
    pub(super) rest: Gather,
    /// Lookups of the pivots alone: `TABLE_BITS` dense bits each, before the rest's.
    pub(super) pivot_lookups: usize,
    /// The other side's signature (its pivots moved into its coordinates).
    pub(super) signature: Signatures,
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
    pub(super) fn pivot_bits(&self) -> usize {
        self.pivot_lookups * TABLE_BITS as usize
    }

    /// Whether a pattern's bits past the pivots fit 64 (its words are narrow).
    pub(super) fn narrow(&self) -> bool {
        self.rest.len() <= 64
    }

    /// Bits of the dense word, padding included.
    pub(super) fn bits(&self) -> usize {
        self.pivot_bits() + self.rest.len()
    }

    /// Each dense bit's diagonal moved by `shift` (main diagonal `d` at `d`, anti-diagonal
    /// `d` at `64 + d`; [`NO_DIAGONAL`] for the padding). A move keeps the order of each
    /// direction's diagonals, so the bits keep their places.
    pub(super) fn diagonals(&self, shift: Shift) -> [u8; MOST_DENSE_BITS] {
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
pub(super) struct Gather {
    pub(super) mask: Pattern,
    /// How many main diagonals `mask` holds: the anti-diagonals' bits follow them.
    pub(super) main_count: u32,
    /// Each diagonal's rank among those of its direction (main diagonal `d` at `d`,
    /// anti-diagonal `d` at `64 + d`).
    pub(super) rank: [u8; 128],
}

impl Gather {
    pub(super) fn new(mask: Pattern) -> Gather {
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

    pub(super) fn len(&self) -> usize {
        (self.mask.main.count_ones() + self.mask.anti.count_ones()) as usize
    }

    /// `p`'s bits on the main and on the anti-diagonals, each packed low. `extract` takes
    /// the bits of a word at a mask's bits, packed low (`pext`).
    #[inline(always)]
    pub(super) fn gather(&self, p: Pattern, extract: impl Fn(u64, u64) -> u64) -> (u64, u64) {
        (
            extract(p.main, self.mask.main),
            extract(p.anti, self.mask.anti),
        )
    }

    /// A pattern's gathered bits ([`Gather::gather`]) as one dense word: its anti-diagonals'
    /// after its main ones (where they fit 64 bits).
    #[inline(always)]
    pub(super) fn word(&self, (main, anti): (u64, u64)) -> u64 {
        main | anti << self.main_count
    }

    /// `p` as the counting loop reads it where the other side is grouped and narrow
    /// ([`Sieve::reads_records`]), `self` being the seen diagonals other than the pivots:
    /// its dense word in `main` (gathered by `gather`: [`Gather::gather`] or
    /// [`Gather::gather_by_lookups`]), 0 in `anti` (its pivots are its signature's).
    #[inline(always)]
    pub(super) fn record(
        &self,
        p: Pattern,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> Pattern {
        Gather::record_of_word(self.word(gather(self, p)))
    }

    /// The record ([`Gather::record`]) whose dense word is `word`.
    #[inline(always)]
    pub(super) fn record_of_word(word: u64) -> Pattern {
        Pattern {
            main: word,
            anti: 0,
        }
    }

    /// [`Gather::gather`] without `pext`: a lookup per diagonal `p` occupies.
    #[inline(always)]
    pub(super) fn gather_by_lookups(&self, p: Pattern) -> (u64, u64) {
        let (mut main, mut anti) = (0u64, 0u64);
        for_each_bit(p.main & self.mask.main, |d| main |= 1 << self.rank[d]);
        for_each_bit(p.anti & self.mask.anti, |d| anti |= 1 << self.rank[64 + d]);
        (main, anti)
    }
}

/// Most bits of a dense word: every diagonal seen, and the pivots' padding.
pub(super) const MOST_DENSE_BITS: usize = 128 + TABLE_BITS as usize - 1;

/// A dense bit of the pivots' padding, which no pattern occupies.
pub(super) const NO_DIAGONAL: u8 = u8::MAX;

/// Seen diagonals looked up together: a pattern's `TABLE_BITS` consecutive bits of its
/// dense word ([`Seen`]) pick one precomputed OR of their slices (a four-Russians table), so a
/// block costs one read per `TABLE_BITS` seen diagonals, whichever the pattern occupies.
pub(super) const TABLE_BITS: u32 = 5;

/// Most lookups a block has (one per `TABLE_BITS` dense bits).
pub(super) const MOST_LOOKUPS: usize = MOST_DENSE_BITS.div_ceil(TABLE_BITS as usize);

/// Entries of one lookup: every subset of `TABLE_BITS` diagonals.
pub(super) const TABLE_ENTRIES: usize = 1 << TABLE_BITS;

/// What a loaded sieve holds for the pair loop: its blocks' lookup tables, or what a device
/// makes them from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Made {
    /// Its lookup tables ([`Sieve::slice`]), which the CPU's loops read (and a device that
    /// shares the host's memory).
    #[default]
    Tables,
    /// Its patterns' dense words in the order they came ([`DenseWords`]), which a device
    /// groups by their pivots' bits, transposes into slices and fills into tables: over a
    /// bus, about the slices' bytes, and neither the host's sort nor its transposes.
    Words,
}

/// The stored patterns' dense words ([`Seen`], in their own coordinates, the pivots' bits
/// lowest), where a device makes the tables ([`Made::Words`]): two 32-bit words a pattern
/// where the dense word fits 64 bits, else four.
#[derive(Clone, Debug, Default)]
pub(super) struct DenseWords {
    pub(super) narrow: Vec<[u32; 2]>,
    pub(super) wide: Vec<[u32; 4]>,
    /// 32-bit words a pattern: 2 (`narrow` holds them) or 4 (`wide`).
    pub(super) per_pattern: usize,
}

/// One entry of a lookup table: a block's patterns on a subset of diagonals, 256 bits.
#[derive(Clone, Copy, Debug, Default)]
#[cfg_attr(feature = "gpu", derive(bytemuck::Pod, bytemuck::Zeroable))]
#[repr(C, align(32))]
pub(super) struct Slice(pub(super) [u64; 4]);

/// The lookup tables' entries, each on a 32-byte boundary so that no read of one spans two
/// cache lines: at 8-byte alignment half the reads did wherever the allocator put them, and
/// `count 17 -t 1` took 7 % longer. They lie in a buffer of plain words, from its first
/// 32-byte boundary on: a buffer allocated over-aligned cannot be grown in place, and
/// copying it raised the peak of `count 20 -t 2` by 5 %.
#[derive(Clone, Debug, Default)]
pub(super) struct Entries {
    words: Vec<u64>,
    /// The first word on a 32-byte boundary.
    start: usize,
}

/// Words of an entry.
pub(super) const ENTRY_WORDS: usize = std::mem::size_of::<Slice>() / 8;

impl Entries {
    /// Room for at least `len` entries; what they held is not kept.
    pub(super) fn make_room(&mut self, len: usize) -> Result<(), TryReserveError> {
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

    pub(super) fn len(&self) -> usize {
        (self.words.len() - self.start) / ENTRY_WORDS
    }

    pub(super) fn as_slice(&self) -> &[Slice] {
        // SAFETY: `words[start..]` begins on a 32-byte boundary (`make_room`) and holds `len`
        // whole entries; a `Slice` is four `u64`, any bits of which are one.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr().add(self.start).cast(), self.len())
        }
    }

    pub(super) fn as_mut_slice(&mut self) -> &mut [Slice] {
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
    pub(super) len: usize,
    pub(super) blocks: usize,
    /// Lookups per block: `TABLE_BITS` seen diagonals each.
    pub(super) lookups: usize,
    /// What the pair loop is given: `data`'s tables, or `dense`'s words.
    pub(super) made: Made,
    /// The stored diagonals, in their own coordinates.
    pub(super) main: u64,
    pub(super) anti: u64,
    /// Moves a pattern of the other side where the stored patterns are.
    pub(super) others_shift: Shift,
    pub(super) seen: Seen,
    /// Block-major, then lookup, then subset: for block `b`, lookup `l` and a subset `v`
    /// of its diagonals, the stored patterns occupying one of them at
    /// `(b * lookups + l) * TABLE_ENTRIES + v` (entry 0 is empty); longer than that when an
    /// earlier unit needed more (it is only grown).
    pub(super) data: Entries,
    pub(super) pivots: Pivots,
    /// For signature `s`, the blocks holding a pattern it can pair with (where they start in
    /// `data`), at `reach[reach_at[s]..reach_at[s + 1]]`, and how many patterns those blocks
    /// hold.
    pub(super) reach: Vec<u32>,
    pub(super) reach_at: Vec<usize>,
    pub(super) covered: Vec<u64>,
    /// A buffer of the reach: for a set of pivots, the blocks holding a group within it.
    pub(super) within: Vec<u64>,
    /// Buffers: the stored patterns in signature order, their signatures, and where each
    /// signature's patterns start.
    pub(super) sorted: Vec<Pattern>,
    /// The stored patterns' dense words as they came, where a device makes the tables
    /// ([`Sieve::load_for_device`]), and for each value of their pivots' bits where its
    /// first goes once grouped (the CPU groups and slices them where the device declines,
    /// into `grouped`).
    pub(super) dense: DenseWords,
    pub(super) cursors: Vec<u32>,
    pub(super) grouped: DenseWords,
    pub(super) signatures: Vec<Signature>,
    pub(super) start: Vec<usize>,
    /// The other side in signature order as a device reads it, where the sort writes that
    /// (`offload::DeviceWords`).
    pub(super) device_words: Vec<[u32; NARROW_WORDS]>,
    /// How the counting loop takes runs in batches where the blocks are many, and its
    /// buffers.
    pub(super) batching: Batching,
    pub(super) batch: Scratch,
}

impl Sieve {
    /// Sizes the sieve for `len` stored patterns on the seen diagonals: its blocks and
    /// lookups (what the reach and the tables are laid out by).
    pub(super) fn size(&mut self, len: usize) {
        self.len = len;
        self.lookups = self.seen.bits().div_ceil(TABLE_BITS as usize);
        self.blocks = len.div_ceil(BLOCK);
    }

    /// Bit-slices `patterns` (those it was sized for) into blocks, on the diagonals the
    /// other side sees (64 patterns at a time by `transpose`, a
    /// [`transpose64`](super::portable::transpose64)), and fills each lookup's subsets.
    #[inline(always)]
    pub(super) fn slice(
        &mut self,
        patterns: &[Pattern],
        transpose: impl Fn(&mut [u64; 64]) + Copy,
    ) -> Result<(), TryReserveError> {
        let (main, anti) = (self.main, self.anti);
        debug_assert_eq!(self.len, patterns.len(), "sized for these patterns");
        // each dense bit's stored diagonal, in the stored patterns' own coordinates (main
        // diagonal `d` at `d`, anti-diagonal `d` at `64 + d`; none for the padding): the
        // seen diagonals moved back (none falls off: each came from a stored diagonal)
        let seen = self.seen.bits();
        let source = self.seen.diagonals(self.others_shift);
        self.make_room()?;
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
            self.fill_block(b, slices);
        }
        Ok(())
    }

    /// [`Sieve::slice`] of the stored patterns from their dense words (`dense`, where
    /// [`Made::Words`] left them for a device): a dense bit's slice is its row of the
    /// transposed words.
    #[inline(always)]
    pub(super) fn slice_words(
        &mut self,
        dense: &DenseWords,
        transpose: impl Fn(&mut [u64; 64]) + Copy,
    ) -> Result<(), TryReserveError> {
        let per = dense.per_pattern;
        let words = dense.words();
        debug_assert_eq!(self.len * per, words.len(), "sized for these patterns");
        self.make_room()?;
        let mut slices = [[0u64; 4]; MOST_DENSE_BITS];
        let slices = &mut slices[..self.seen.bits()];
        let mut rows = [0u64; 64];
        for (b, block) in words.chunks(BLOCK * per).enumerate() {
            if block.len() < BLOCK * per {
                // a last, short block's words past its patterns are empty
                slices.fill([0; 4]);
            }
            for (word, chunk) in block.chunks(64 * per).enumerate() {
                // 64 dense bits a transpose: the low two 32-bit words, then the high two
                for half in 0..per / 2 {
                    if chunk.len() < 64 * per {
                        // rows past a short chunk's are empty
                        rows.fill(0);
                    }
                    for (row, p) in rows.iter_mut().zip(chunk.chunks_exact(per)) {
                        *row = u64::from(p[2 * half]) | u64::from(p[2 * half + 1]) << 32;
                    }
                    transpose(&mut rows);
                    let first = 64 * half;
                    for (d, slice) in slices.iter_mut().enumerate().skip(first).take(64) {
                        slice[word] = rows[d - first];
                    }
                }
            }
            self.fill_block(b, slices);
        }
        Ok(())
    }

    /// Room for the blocks' tables; every entry is written by the slicing, so the buffer is
    /// only grown, never cleared.
    fn make_room(&mut self) -> Result<(), TryReserveError> {
        self.made = Made::Tables;
        self.data
            .make_room(self.blocks * self.lookups * TABLE_ENTRIES)
    }

    /// Fills block `b`'s lookups from its slices (a dense bit's each; the padding's past
    /// them empty).
    #[inline(always)]
    fn fill_block(&mut self, b: usize, slices: &[[u64; 4]]) {
        let stride = self.lookups * TABLE_ENTRIES;
        let table = &mut self.data.as_mut_slice()[b * stride..][..stride];
        // each lookup's subsets, doubled a diagonal at a time: those holding diagonal
        // `bit` are those below `1 << bit` with its slice added (bounds known when
        // compiled, no branch: the loop by lowest bit took twice as long)
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

    /// For every signature, the blocks worth visiting: those holding a compatible group
    /// (group `g` is `start[g]..start[g + 1]` of the stored patterns), in increasing order.
    pub(super) fn index_reach(&mut self, start: &[usize]) -> Result<(), TryReserveError> {
        let groups = 1usize << self.pivots.count;
        self.reach.clear();
        self.reach_at.clear();
        self.covered.clear();
        self.reach_at.try_reserve(groups + 1)?;
        self.covered.try_reserve(groups)?;
        self.reach_at.push(0);
        if self.blocks <= 64 {
            self.reach_by_subsets(start)
        } else {
            self.reach_by_walks(start)
        }
    }

    /// [`Sieve::index_reach`] for at most 64 blocks, a block a bit: for every set of pivots,
    /// the blocks holding a group within it (each group's blocks ORed into its supersets, a
    /// pivot at a time: `count × 2^count` ORs); a signature reaches those of the pivots it
    /// leaves free. Walking each signature's compatible groups takes `3^count` steps.
    fn reach_by_subsets(&mut self, start: &[usize]) -> Result<(), TryReserveError> {
        let groups = 1usize << self.pivots.count;
        let within = &mut self.within;
        within.clear();
        within.try_reserve(groups)?;
        // (by pivot bits: a set of them holds its subsets)
        within.extend((0..groups).map(|bits| {
            let group = signature_of_bits(bits);
            match (start[group], start[group + 1]) {
                (from, to) if from < to => {
                    let (first, last) = (from / BLOCK, (to - 1) / BLOCK);
                    (u64::MAX >> (63 - last)) & (u64::MAX << first)
                }
                _ => 0,
            }
        }));
        for pivot in 0..self.pivots.count {
            for set in 0..groups {
                if set >> pivot & 1 != 0 {
                    within[set] |= within[set ^ 1 << pivot];
                }
            }
        }
        for s in 0..groups {
            let blocks = self.within[!pivot_bits(s) & (groups - 1)];
            self.reach.try_reserve(blocks.count_ones() as usize)?;
            let mut covered = 0;
            for_each_bit(blocks, |b| covered += self.reach_block(b));
            self.reach_at.push(self.reach.len());
            self.covered.push(covered);
        }
        Ok(())
    }

    /// [`Sieve::index_reach`] by walking each signature's compatible groups, which come in
    /// increasing order, so their blocks do too.
    pub(super) fn reach_by_walks(&mut self, start: &[usize]) -> Result<(), TryReserveError> {
        let groups = 1usize << self.pivots.count;
        for s in 0..groups {
            let mut covered = 0;
            // room for every block, so the pushes below never allocate
            self.reach.try_reserve(self.blocks)?;
            let mut next = 0;
            for t in compatible(s, groups) {
                let (from, to) = (start[t], start[t + 1]);
                if from < to {
                    for b in (from / BLOCK).max(next)..=(to - 1) / BLOCK {
                        covered += self.reach_block(b);
                    }
                    next = next.max((to - 1) / BLOCK + 1);
                }
            }
            self.reach_at.push(self.reach.len());
            self.covered.push(covered);
        }
        Ok(())
    }

    /// Adds block `b` (where its tables start in `data`) to the reach being listed; how many
    /// stored patterns it holds.
    fn reach_block(&mut self, b: usize) -> u64 {
        self.reach.push((b * self.lookups * TABLE_ENTRIES) as u32);
        (self.len - b * BLOCK).min(BLOCK) as u64
    }

    /// Whether the counting loop reads the other side as records of dense words (see
    /// [`Sieve::order`]) rather than as patterns: where it is grouped and the seen
    /// diagonals other than the pivots fit one word.
    pub(super) fn reads_records(&self) -> bool {
        self.pivots.count > 0 && self.seen.narrow()
    }
}

/// Words of one pattern of the other side on a device where the seen diagonals other than
/// the pivots are at most 64: its bits on them, then its signature (its pivots' bits are
/// its signature's: `offload::PairWork::heads`); 12 bytes where a wide one takes 20.
pub const NARROW_WORDS: usize = 3;

/// How a sort by signature writes each pattern ([`Signatures::sort`]). Each instruction
/// set's sort makes the closure that calls it in its own function: a closure made
/// elsewhere is compiled for none of them, and ran out of line (`count 18 -t 1` 1.04 times
/// as long).
pub(super) trait Writes: Copy {
    type Out: Copy + Default;

    /// Whether the sort puts each pattern in its signature's place (else where it came,
    /// for a device that groups them itself).
    const GROUPED: bool = true;

    /// Pattern `p`, of signature `s`, its seen diagonals gathered by `gather` where it
    /// needs them ([`Gather::gather`] or [`Gather::gather_by_lookups`]).
    fn write(
        self,
        p: Pattern,
        s: Signature,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> Self::Out;
}

/// Each pattern as it is.
#[derive(Clone, Copy)]
pub(super) struct AsItIs;

impl Writes for AsItIs {
    type Out = Pattern;

    #[inline(always)]
    fn write(
        self,
        p: Pattern,
        _: Signature,
        _: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> Pattern {
        p
    }
}

/// Each pattern as the CPU's counting loop reads it where it reads records
/// ([`Gather::record`] of these seen diagonals other than the pivots).
#[derive(Clone, Copy)]
pub(super) struct Records<'a>(pub &'a Gather);

impl Writes for Records<'_> {
    type Out = Pattern;

    #[inline(always)]
    fn write(
        self,
        p: Pattern,
        _: Signature,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> Pattern {
        self.0.record(p, gather)
    }
}

/// The sorted patterns' union, or the error of a sort that could not have its memory.
pub(super) type Sorted = Result<Pattern, TryReserveError>;
