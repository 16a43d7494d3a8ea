//! Sieves gathered for one dispatch of the tables' and the pair kernels (`tables.wgsl`,
//! `pairs.wgsl`): their tables or dense words one after another (so the tables, sent or
//! made, lie one sieve's after another's), each block of words with where its words and
//! tables start, their reaches moved past the earlier sieves' tables,
//! their signatures past the earlier sieves' signatures, and each pattern's words (its dense
//! word, then its signature in the batch; written straight into the upload). Many small sieves then cost one dispatch (N = 17
//! has 54,779 of a few thousand patterns each), and the kernel never needs to know where one
//! ends: it reads as many lookups as the batch's sieve with the most (a pattern's dense word
//! is 0 past its own sieve's, and an empty subset reads nothing), the same count in every
//! lane.

use super::wire::{CellRecord, ReachAt, SieveSums, SignRecord, WordBlock};
use crate::gpu::device::wire;
use crate::quadrant::{pattern_words, Joinable, PairWork, Signing};
use crate::quadrant::{ENTRY_BYTES, NARROW_WORDS, RAW_WORDS};
use crate::stages::{self, time, Stage, Tally};
use bytemuck::Zeroable;
use std::borrow::Cow;
use std::ops::Range;

/// Where each word list of a batch starts in its upload: a multiple of every device's
/// storage binding offset alignment (at most 256 bytes).
pub const PART_ALIGN: u64 = 256;

/// Fewest patterns between two spot checks: besides each sieve's first, a batch's patterns
/// at multiples of its stride ([`spot_every`]) are worked out again on the CPU from what
/// the GPU was sent (its reached blocks' tables, or their words).
pub const MIN_SPOT_EVERY: usize = 4096;

/// Spot checks a batch spreads over the patterns it is sized for, besides each sieve's
/// first. A check of a sieve of words is a pass over all its stored words on the CPU, so
/// checks at a fixed stride grew with a big GPU's batches; spread over the batch they
/// still find a part of it counted wrong. (The tests take 2, so that their strides are not
/// the fewest.)
const SPOTS_A_BATCH: usize = if cfg!(test) { 2 } else { 16 };

/// The stride of the spot checks of a batch sized for `patterns` patterns: a power of two,
/// at least [`MIN_SPOT_EVERY`].
///
/// Sixteen checks a batch of a million patterns, and every 4096th of a smaller batch's:
/// `spot_every(1 << 20) == 1 << 16`, `spot_every(16_384) == 4096`.
pub fn spot_every(patterns: usize) -> usize {
    (patterns / SPOTS_A_BATCH)
        .next_power_of_two()
        .max(MIN_SPOT_EVERY)
}

/// The slots of `slots` that are multiples of `every`: where a batch's hints and spot
/// checks fall, wherever a work's slots start.
fn multiples_of(every: usize, slots: Range<usize>) -> impl Iterator<Item = usize> {
    (slots.start.next_multiple_of(every)..slots.end).step_by(every)
}

/// Slots of a batch between two of `join.wgsl`'s hints ([`PairBatch::hints`]): within
/// them a candidate's sieve and cell lie a step or two on from the hint's, not two binary
/// searches away.
pub const HINT_EVERY: usize = 64;

/// A pattern whose clashes the GPU writes out besides its sieve's sum: a spot check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spot {
    /// The first pattern of the batch's sieve of this index.
    First(usize),
    /// The pattern at this multiple of [`PairBatch::spot_every`] in the batch.
    Every(usize),
}

/// One sieve of a batch: the pairs its patterns' reaches visit, the ticket it was given,
/// whether the GPU joins its other side, and what its pair count costs where the host
/// knows ([`PairBatch::workgroup_starts`]).
#[derive(Clone, Copy, Debug)]
pub struct Sieved {
    pub visited: Visited,
    pub ticket: u64,
    pub joins: bool,
    /// Its first pattern (or candidate) in the batch, and its cost.
    first: usize,
    cost: Option<u64>,
}

/// What a pattern of the other side costs the pair kernel besides its block visits, in
/// block visits: its lookups worked out, its words read and its clashes added up, about a
/// block's lookups read (`pairs.wgsl`).
const PATTERN_COST: u64 = 1;

/// Who adds up the pairs a sieve's reaches visit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visited {
    /// The host, from the other side it signed: these.
    Host(u64),
    /// The GPU, which signed the other side ([`Sums::visited`]); where this is the
    /// batch's first sieve, the CPU's answers to check it by: the pairs visited and the
    /// other side's patterns ([`Sums::patterns`]).
    Gpu(Option<(u64, u64)>),
}

/// Sieves gathered for one dispatch (their tables or words go straight to the GPU's upload:
/// [`PairQueue`](super::queue::PairQueue)).
#[derive(Debug, Default)]
pub struct PairBatch {
    /// Bytes of the sieves' lookup tables, one after another, as the GPU makes them.
    pub table_bytes: u64,
    /// Bytes of the sieves' tables or words (what the GPU takes), one after another.
    pub upload_bytes: u64,
    /// Each block of words the GPU groups and makes tables of.
    pub blocks: Vec<WordBlock>,
    /// Each sieve of words' cursors ([`PairWork::cursors`]), one after another.
    pub cursors: Vec<u32>,
    /// Where the GPU groups the other side (a sieve of words): for each signature of the
    /// batch, where its patterns begin once grouped ([`PairWork::places`], past the
    /// earlier sieves' patterns); empty where they come grouped.
    pub other_cursors: Vec<u32>,
    /// Every sieve's reached blocks, each as its first entry in the tables.
    pub reach: Vec<u32>,
    /// For each signature of the batch, where its reach starts and ends in `reach`, its
    /// head ([`PairWork::heads`]; 0 for wide words), its sieve's index in the batch and
    /// where that sieve's patterns start.
    pub reach_at: Vec<ReachAt>,
    /// 32-bit words of the patterns, `pattern_words` a pattern (its words as [`PairWork`]
    /// has them, its signature the batch's): every sieve of a batch has them narrow, or
    /// every one wide. They go straight into the upload as each sieve is added
    /// ([`PairQueue::write`](super::queue::PairQueue::write)), at [`PairBatch::signature_base`].
    pub pattern_data: usize,
    pub pattern_words: usize,
    /// Where the GPU signs the other side ([`RAW_WORDS`] a pattern): each sieve's record,
    /// the signature in the batch of each value of its pivots' gathered bits, and each
    /// signature's covered patterns.
    pub signing: Vec<SignRecord>,
    pub gathered: Vec<u32>,
    pub covered: Vec<u32>,
    /// Where the GPU joins the other side: each sieve's cells, their candidates numbered in
    /// the batch, the places of their placements in the quarter tables, and how many
    /// candidates those sieves have.
    pub cells: Vec<CellRecord>,
    pub cell_places: Vec<u32>,
    /// Where the GPU signs: for every [`HINT_EVERY`]th slot of the batch, the sieve it lies
    /// in and, where that sieve is joined, the cell, where `join.wgsl`'s searches start.
    /// Sent after `cell_places`.
    pub hints: Vec<u32>,
    pub joined_slots: usize,
    /// Patterns of the other side, those the GPU joins as reckoned from their samples:
    /// what the batch is sized by.
    pub reckoned: usize,
    /// Patterns (or candidates) of the other side.
    slots: usize,
    /// The most lookups of a sieve of the batch.
    pub lookups: u32,
    pub sieves: Vec<Sieved>,
    /// Spot checks: patterns of the batch and their clashes worked out on the CPU when
    /// their sieve was added.
    pub checks: Vec<(Spot, u32)>,
    /// Patterns between two spot checks besides each sieve's first ([`spot_every`]); kept
    /// when the batch is cleared.
    spot_every: usize,
}

/// What the GPU counted of a batch ([`PairBatch::sum_words`] words): each sieve's
/// [`SieveSums`], then the clashes of the patterns at multiples of the batch's
/// [`PairBatch::spot_every`].
#[derive(Debug)]
pub struct Sums<'a> {
    words: Cow<'a, [u32]>,
    sieves: usize,
}

impl<'a> Sums<'a> {
    /// The sums of a batch of `sieves` sieves read back as `words`.
    pub fn new(words: &'a [u32], sieves: usize) -> Sums<'a> {
        Sums {
            words: Cow::Borrowed(words),
            sieves,
        }
    }

    fn of(&self, sieve: usize) -> &SieveSums {
        let sieves = &self.words[..wire::words_of::<SieveSums>() * self.sieves];
        &bytemuck::cast_slice::<u32, SieveSums>(sieves)[sieve]
    }

    /// The clashes of the batch's sieve `sieve`'s patterns, added up.
    pub fn sum(&self, sieve: usize) -> u64 {
        let sums = self.of(sieve);
        u64::from(sums.clashes_low) | u64::from(sums.clashes_high) << 32
    }

    /// The pairs the batch's sieve `sieve`'s reaches visit, where the GPU signed its other
    /// side.
    pub fn visited(&self, sieve: usize) -> u64 {
        let sums = self.of(sieve);
        u64::from(sums.visited_low) | u64::from(sums.visited_high) << 32
    }

    /// The patterns of the batch's sieve `sieve`'s other side, where the GPU signed it.
    pub fn patterns(&self, sieve: usize) -> u64 {
        u64::from(self.of(sieve).patterns)
    }

    /// The clashes of the pattern `spot`.
    pub fn spot(&self, spot: Spot) -> u32 {
        match spot {
            Spot::First(sieve) => self.of(sieve).first_clashes,
            Spot::Every(k) => self.words[wire::words_of::<SieveSums>() * self.sieves + k],
        }
    }

    /// Makes the first sieve's first pattern's clashes one too many: a GPU that counts
    /// wrong, for the tests.
    #[cfg(test)]
    pub fn tell_wrong(&mut self) {
        if self.sieves > 0 {
            let first = std::mem::offset_of!(SieveSums, first_clashes) / 4;
            self.words.to_mut()[first] += 1;
        }
    }
}

/// Where a batch's word lists lie in one buffer (bytes), each at a multiple of
/// [`PART_ALIGN`] and at least one word long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordParts {
    pub patterns: Range<u64>,
    pub reach: Range<u64>,
    pub reach_at: Range<u64>,
    pub blocks: Range<u64>,
    pub signing: Range<u64>,
    pub gathered: Range<u64>,
    pub covered: Range<u64>,
    pub cells: Range<u64>,
    pub cell_places: Range<u64>,
}

impl WordParts {
    /// The parts of lists of these lengths (in words): patterns, reach, reach_at, blocks,
    /// signing, gathered, covered, cells, cell_places.
    fn of(lengths: [usize; 9]) -> WordParts {
        let mut end = 0;
        let [patterns, reach, reach_at, blocks, signing, gathered, covered, cells, cell_places] =
            lengths.map(|words| {
                let start = u64::next_multiple_of(end, PART_ALIGN);
                end = start + 4 * words.max(1) as u64;
                start..end
            });
        WordParts {
            patterns,
            reach,
            reach_at,
            blocks,
            signing,
            gathered,
            covered,
            cells,
            cell_places,
        }
    }

    /// Bytes of the buffer that holds them.
    pub fn len(&self) -> u64 {
        self.cell_places.end
    }
}

impl PairBatch {
    /// An empty batch whose patterns at multiples of `spot_every` are spot-checked.
    pub fn new(spot_every: usize) -> PairBatch {
        PairBatch {
            spot_every,
            ..PairBatch::default()
        }
    }

    /// Patterns between two spot checks besides each sieve's first (a batch made by
    /// `default`, sized by nothing, takes the fewest).
    pub fn spot_every(&self) -> usize {
        self.spot_every.max(MIN_SPOT_EVERY)
    }

    /// Adds `work`'s sieve, under `ticket`, its first pattern and those at multiples of
    /// [`PairBatch::spot_every`] in the batch spot-checked; its tables or words lie at
    /// [`PairBatch::upload_bytes`] as it was, its patterns at `pattern_data`
    /// ([`PairQueue::write`](super::queue::PairQueue::write), before).
    pub fn push(&mut self, work: &PairWork, ticket: u64) {
        let entry_base = self.add_stored(work);
        let reach_base = self.reach.len() as u32;
        self.reach
            .extend(work.reach.iter().map(|&block| block + entry_base));
        let (sieve, first) = (self.sieves.len(), self.len());
        let first_spot = first + work.first_spot();
        for (s, bounds) in work.reach_at.windows(2).enumerate() {
            let head = work.heads.get(s).copied().unwrap_or(0);
            let [start, end] = [bounds[0], bounds[1]].map(|at| reach_base + at);
            self.reach_at.push(ReachAt {
                start,
                end,
                head,
                sieve: sieve as u32,
                first: first_spot as u32,
            });
        }
        (self.other_cursors).extend(work.places.iter().map(|&place| (first + place) as u32));
        let cells = work.signing.as_ref().and_then(|s| s.cells());
        if let Some(signing) = &work.signing {
            let base = self.signature_base() - work.heads.len() as u32;
            let cells_at = self.cells.len() as u32;
            let sent_at = (self.pattern_data / RAW_WORDS) as u32;
            self.signing.push(SignRecord {
                first: first as u32,
                signature_base: base,
                gathered_at: self.gathered.len() as u32,
                cells_at,
                sent_at,
                ..sign_record(signing)
            });
            (self.gathered).extend(signing.gathered().map(|s| base + s));
            self.covered.extend_from_slice(&signing.covered);
            let hinted = multiples_of(HINT_EVERY, first..first + work.len());
            debug_assert_eq!(self.hints.len(), 2 * first.div_ceil(HINT_EVERY));
            self.hints.extend(hinted.flat_map(|slot| {
                let cell = cells.map_or(0, |c| cells_at + c.cell_at(slot - first) as u32);
                [sieve as u32, cell]
            }));
            if let Some(cells) = cells {
                self.add_cells(cells, first as u32);
                self.joined_slots += work.len();
            }
        }
        debug_assert!(self.is_empty() || self.takes_words_of(work));
        self.pattern_words = work.pattern_words;
        self.lookups = self.lookups.max(work.lookups);
        if cells.is_none() {
            self.pattern_data += work.len() * work.pattern_words;
        }
        self.slots += work.len();
        self.reckoned += cells.map_or(work.len(), |c| c.reckoned());
        let every = self.spot_every();
        let spaced = multiples_of(every, first..first + work.len());
        let spots = std::iter::once((Spot::First(sieve), work.first_spot())).chain(
            spaced
                .filter(|&at| at > first)
                .map(|at| (Spot::Every(at / every), at - first)),
        );
        stages::tally(
            Tally::Signatures,
            work.reach_at.len().saturating_sub(1) as u64,
        );
        let slots = match cells {
            Some(_) => Tally::Candidates,
            None => Tally::Patterns,
        };
        stages::tally(slots, work.len() as u64);
        let visited = time(Stage::Checks, || {
            (self.checks).extend(spots.map(|(spot, i)| (spot, work.clashes_of(i))));
            match work.visited {
                Some(visited) => Visited::Host(visited),
                // (a pass over the sieve's patterns: the first of a batch of hundreds)
                None if sieve == 0 => Visited::Gpu(Some(work.visited_as_signed())),
                None => Visited::Gpu(None),
            }
        });
        let patterns = work.len() as u64;
        let cost = (work.block_visits()).map(|visits| visits + PATTERN_COST * patterns);
        self.sieves.push(Sieved {
            visited,
            ticket,
            joins: cells.is_some(),
            first,
            cost,
        });
    }

    /// Adds what `work` sends of its stored blocks (tables or words), and where the GPU
    /// groups the words, their blocks and cursors; returns its tables' first entry.
    fn add_stored(&mut self, work: &PairWork) -> u32 {
        let entry_base = (self.table_bytes / ENTRY_BYTES) as u32;
        let (sieve_words_at, cursors_at) = ((self.upload_bytes / 4) as u32, self.cursors.len());
        self.blocks
            .extend(work.word_blocks().map(|block| WordBlock {
                words_at: sieve_words_at + block.words_from as u32,
                first_entry: entry_base + block.first_entry as u32,
                patterns: block.patterns as u32,
                per_pattern: block.per_pattern as u32,
                lookups: work.lookups,
                pivots: block.pivots as u32,
                sieve_words_at,
                cursors_at: cursors_at as u32,
            }));
        self.cursors.extend_from_slice(work.cursors());
        self.table_bytes += work.table_bytes();
        self.upload_bytes += work.upload_bytes();
        entry_base
    }

    /// Adds the cells of a half the GPU joins, its first candidate at `first` in the batch.
    fn add_cells(&mut self, cells: &Joinable, first: u32) {
        let [north, south] = cells.place_lists();
        let north_at = self.cell_places.len() as u32;
        let south_at = north_at + north.len() as u32;
        self.cells
            .extend(cells.cell_list().iter().map(|c| CellRecord {
                first: first + c.first as u32,
                north_at: north_at + c.upper.0,
                south_at: south_at + c.lower.0,
                south_len: c.lower.1,
            }));
        self.cell_places.extend_from_slice(north);
        self.cell_places.extend_from_slice(south);
    }

    /// Where each of `workgroups` workgroups of the pair kernel starts among the batch's
    /// patterns, and where the last ends: stretches of about equal cost where the host
    /// knows each sieve's (its block visits and patterns; within a sieve the cost is
    /// spread evenly over its patterns), else of equal patterns. A driver that hands each
    /// of its threads a run of consecutive workgroups (llvmpipe) then gives them equal
    /// work, as sieves cost unlike a pattern.
    pub fn workgroup_starts(&self, workgroups: usize) -> Vec<u32> {
        let known = self.sieves.iter().all(|sieve| sieve.cost.is_some());
        let sieves = self.sieves.iter().zip(self.sieve_slots());
        let costs: Vec<(u64, Range<usize>)> = sieves
            .map(|(sieve, slots)| {
                let by_patterns = slots.len() as u64;
                (sieve.cost.filter(|_| known).unwrap_or(by_patterns), slots)
            })
            .collect();
        let total: u64 = costs.iter().map(|(cost, _)| cost).sum();
        let mut starts = Vec::with_capacity(workgroups + 1);
        // (the first from 0: sieves of no cost before the first that has one are its)
        starts.push(0);
        let (mut sieve, mut before) = (0, 0u64);
        for w in 1..workgroups {
            // (in 128 bits: a batch's cost times 4,096 workgroups may pass 64)
            let target = (u128::from(total) * w as u128 / workgroups as u128) as u64;
            while sieve < costs.len() && before + costs[sieve].0 <= target {
                before += costs[sieve].0;
                sieve += 1;
            }
            let start = match costs.get(sieve) {
                Some((cost, slots)) => {
                    let into = u128::from(target - before) * slots.len() as u128;
                    slots.start + (into / u128::from(*cost)) as usize
                }
                None => self.len(),
            };
            starts.push(start as u32);
        }
        starts.push(self.len() as u32);
        starts
    }

    /// Each sieve's patterns (or candidates) among the batch's, in order.
    fn sieve_slots(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        let ends = (self.sieves.iter().skip(1).map(|sieve| sieve.first)).chain([self.len()]);
        (self.sieves.iter())
            .zip(ends)
            .map(|(sieve, end)| sieve.first..end)
    }

    /// Patterns in the batch (or candidates, where the GPU joins them).
    pub fn len(&self) -> usize {
        self.slots
    }

    /// Whether the GPU joins the other side of any sieve of the batch.
    pub fn joins(&self) -> bool {
        !self.cells.is_empty()
    }

    /// Whether the GPU signs the batch's other side.
    pub fn signs(&self) -> bool {
        self.pattern_words == RAW_WORDS
    }

    /// Words of a pattern of the other side once in signature order.
    pub fn ordered_words(&self) -> usize {
        match self.signs() {
            true => NARROW_WORDS,
            false => self.pattern_words,
        }
    }

    /// What the next sieve's signatures are moved by: the signatures before it.
    pub fn signature_base(&self) -> u32 {
        self.reach_at.len() as u32
    }

    /// Whether `work`'s words are the batch's kind (narrow, wide, or signed on the GPU:
    /// sent as they are or joined there, which one batch may mix), or the batch is empty.
    pub fn takes_words_of(&self, work: &PairWork) -> bool {
        self.is_empty() || self.pattern_words == work.pattern_words
    }

    pub fn is_empty(&self) -> bool {
        self.sieves.is_empty()
    }

    /// Where the word lists lie in the buffer that holds them.
    pub fn word_parts(&self) -> WordParts {
        let lists: [&[u32]; 7] = [
            &self.reach,
            wire::words(&self.reach_at),
            wire::words(&self.blocks),
            wire::words(&self.signing),
            &self.gathered,
            &self.covered,
            wire::words(&self.cells),
        ];
        let [reach, reach_at, blocks, signing, gathered, covered, cells] = lists.map(<[u32]>::len);
        WordParts::of([
            self.pattern_data,
            reach,
            reach_at,
            blocks,
            signing,
            gathered,
            covered,
            cells,
            self.cell_places.len() + self.hints.len(),
        ])
    }

    /// Bytes of the word lists with `work` added.
    pub fn word_bytes_with(&self, work: &PairWork) -> u64 {
        let signing = work.signing.as_ref();
        let cells = signing.and_then(|s| s.cells());
        let words = WordParts::of([
            self.pattern_data + cells.map_or(work.len() * work.pattern_words, |_| 0),
            self.reach.len() + work.reach.len(),
            wire::words_of::<ReachAt>() * (self.reach_at.len() + work.reach_at.len()),
            wire::words_of::<WordBlock>() * (self.blocks.len() + work.word_blocks().len()),
            wire::words_of::<SignRecord>() * (self.signing.len() + usize::from(signing.is_some())),
            self.gathered.len() + signing.map_or(0, |s| s.gathered().len()),
            self.covered.len() + signing.map_or(0, |s| s.covered.len()),
            wire::words_of::<CellRecord>()
                * (self.cells.len() + cells.map_or(0, |c| c.cell_list().len())),
            self.cell_places.len()
                + cells.map_or(0, |c| c.place_lists().map(<[u32]>::len).iter().sum())
                + self.hints.len()
                + signing.map_or(0, |_| 2 * (work.len() / HINT_EVERY + 1)),
        ]);
        words.len()
    }

    /// Words the GPU writes of what it counted ([`Sums`]).
    pub fn sum_words(&self) -> usize {
        wire::words_of::<SieveSums>() * self.sieves.len() + self.len().div_ceil(self.spot_every())
    }

    /// The largest buffer the batch would bind with `work` added, in bytes.
    pub fn largest_with(&self, work: &PairWork) -> u64 {
        let tables = self.table_bytes + work.table_bytes();
        let words = self.word_bytes_with(work);
        let cursors = 4 * (self.cursors.len() + work.cursors().len()) as u64;
        let other_cursors = 4 * (self.other_cursors.len() + work.places.len()) as u64;
        let uploads = self.upload_bytes + work.upload_bytes();
        [tables, words, cursors, other_cursors, uploads]
            .into_iter()
            .max()
            .unwrap_or(0)
    }

    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.table_bytes = 0;
        self.upload_bytes = 0;
        self.blocks.clear();
        self.cursors.clear();
        self.other_cursors.clear();
        self.reach.clear();
        self.reach_at.clear();
        self.pattern_data = 0;
        self.pattern_words = 0;
        self.signing.clear();
        self.gathered.clear();
        self.covered.clear();
        self.cells.clear();
        self.cell_places.clear();
        self.hints.clear();
        self.joined_slots = 0;
        self.reckoned = 0;
        self.slots = 0;
        self.sieves.clear();
        self.checks.clear();
        self.lookups = 0;
    }
}

/// `signing`'s record, where it lies in the batch left 0: what the GPU gathers its
/// patterns by, its signatures and its cells.
fn sign_record(signing: &Signing) -> SignRecord {
    let [(rest, rest_mains), (pivots, pivot_mains)] = signing.gathers();
    // a mask's main diagonals and its anti-diagonals, each low word first
    let halves = |mask| {
        let [m0, m1, a0, a1] = pattern_words(mask);
        [[m0, m1], [a0, a1]]
    };
    let ([rest_main, rest_anti], [pivots_main, pivots_anti]) = (halves(rest), halves(pivots));
    let cells = signing.cells();
    let (north_main_shift, north_anti_shift) = cells.map_or((0, 0), |c| c.unpack_shifts());
    SignRecord {
        signatures: signing.covered.len() as u32,
        rest_main,
        rest_anti,
        pivots_main,
        pivots_anti,
        rest_mains,
        pivot_mains,
        cells: cells.map_or(0, |c| c.cell_list().len() as u32),
        north_main_shift,
        north_anti_shift,
        ..SignRecord::zeroed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_lists_lie_apart_each_aligned_and_never_empty() {
        let parts = WordParts::of([5, 0, 3, 0, 0, 2, 0, 0, 1]);
        assert_eq!(parts.patterns, 0..20);
        assert_eq!(parts.reach, 256..260);
        assert_eq!(parts.reach_at, 512..524);
        assert_eq!(parts.blocks, 768..772);
        assert_eq!(parts.signing, 1024..1028);
        assert_eq!(parts.gathered, 1280..1288);
        assert_eq!(parts.covered, 1536..1540);
        assert_eq!(parts.cells, 1792..1796);
        assert_eq!(parts.cell_places, 2048..2052);
        assert_eq!(parts.len(), 2052);
        let parts = WordParts::of([64, 64, 64, 8, 16, 16, 16, 4, 3]);
        assert_eq!((parts.reach.start, parts.reach_at.start), (256, 512));
        assert_eq!(parts.blocks, 768..800);
        assert_eq!(parts.signing, 1024..1088);
        assert_eq!(parts.covered, 1536..1600);
        assert_eq!(parts.cells, 1792..1808);
        assert_eq!(parts.cell_places, 2048..2060);
    }

    /// A batch of sieves of these patterns and costs (`None`: unknown to the host).
    fn sieves_of(sieves: &[(usize, Option<u64>)]) -> PairBatch {
        let mut batch = PairBatch::default();
        for &(patterns, cost) in sieves {
            batch.sieves.push(Sieved {
                visited: Visited::Gpu(None),
                ticket: 0,
                joins: false,
                first: batch.slots,
                cost,
            });
            batch.slots += patterns;
        }
        batch
    }

    #[test]
    fn workgroups_start_where_the_cost_is_shared_out_evenly() {
        // the first sieve costs as much as the other two: two workgroups split after it
        let batch = sieves_of(&[(4, Some(16)), (4, Some(8)), (8, Some(8))]);
        assert_eq!(batch.workgroup_starts(2), [0, 4, 16]);
        // within a sieve the cost is spread over its patterns
        assert_eq!(batch.workgroup_starts(4), [0, 2, 4, 8, 16]);
        // a sieve whose cost the host does not know: every sieve by its patterns
        let batch = sieves_of(&[(4, Some(16)), (4, None), (8, Some(8))]);
        assert_eq!(batch.workgroup_starts(2), [0, 8, 16]);
        // sieves of no patterns, first, between and last, and more workgroups than
        // patterns: every pattern in one workgroup's stretch, in order
        let batch = sieves_of(&[(0, Some(0)), (3, Some(5)), (0, Some(0)), (2, Some(9))]);
        for workgroups in [1, 2, 3, 7, 64] {
            let starts = batch.workgroup_starts(workgroups);
            assert_eq!(starts.len(), workgroups + 1);
            assert_eq!((starts[0], starts[workgroups]), (0, 5), "{workgroups}");
            assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
        }
        // a first sieve of patterns but no cost is still the first workgroup's
        let batch = sieves_of(&[(3, Some(0)), (2, Some(4))]);
        assert_eq!(batch.workgroup_starts(2), [0, 4, 5]);
        assert_eq!(PairBatch::default().workgroup_starts(3), [0, 0, 0, 0]);
    }

    #[test]
    fn a_batchs_spot_checks_are_a_few_a_power_of_two_apart() {
        for patterns in [0, 1, 4096, 16_384, 100_000, 1 << 20, 3_000_000] {
            let every = spot_every(patterns);
            assert!(
                every.is_power_of_two() && every >= MIN_SPOT_EVERY,
                "{patterns}"
            );
            assert!(
                patterns / every <= SPOTS_A_BATCH,
                "{patterns}: every {every}"
            );
        }
        // a big GPU's batches are checked at a wider stride than the fewest
        assert!(spot_every(1 << 20) > MIN_SPOT_EVERY);
        assert_eq!(spot_every(1 << 20) * SPOTS_A_BATCH, 1 << 20);
        // a batch sized by nothing never steps by 0
        assert_eq!(PairBatch::default().spot_every(), MIN_SPOT_EVERY);
    }
}
