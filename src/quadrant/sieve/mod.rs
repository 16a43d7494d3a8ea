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
//!
//! The algorithm is written once, in portable terms; each instruction set only supplies its
//! steps. Here: loading (pivots, grouping), the other side's order, and the choice of loops.
//! `layout`: the stored side (seen diagonals, dense words, lookup tables, slicing, reach).
//! `pairs`: the counting loop, generic over its steps; `batching`: its runs and batches.
//! `words`: the stored side as a device that groups and slices it itself takes it.
//! `portable`: the steps in plain Rust, what ARM runs; `x86_64/avx2`, `x86_64/avx512`: the
//! same loops compiled for those instruction sets, with their own steps.

mod batching;
mod layout;
// what only the GPU executor calls (and the tests)
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
mod offload;
mod pairs;
mod portable;
#[cfg(test)]
pub(crate) mod tests;
mod words;
#[cfg(target_arch = "x86_64")]
mod x86_64;

pub use layout::NARROW_WORDS;
pub use layout::{Made, Sieve};
pub use offload::{Counted, OtherSide, PairDevice};
// (the tests' model devices take it without the GPU too)
#[cfg(any(feature = "gpu", test))]
pub use offload::PairWork;
#[cfg(feature = "gpu")]
pub use offload::{Signing, Upload, DENSE_WORDS, ENTRY_BYTES, RAW_WORDS, SUBSET_BITS};

use super::pair_kernel::PairKernel;
use super::pattern::{for_each_bit, Pattern, Shift};
use super::pivots::{Pivots, Signature, Signatures, SortBuffers, PIVOTS};
use crate::parallel::{Lent, Spare};
use crate::stages::{time, Stage};
use batching::{BatchBuffers, PIECES_PER_THREAD};
use layout::{AsItIs, Gather, Records, Seen, Writes, BLOCK, TABLE_BITS};
use pairs::{Ordered, Share};
use std::collections::TryReserveError;
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::{AtomicUsize, Ordering};
use words::StoredDense;

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

/// Fewest patterns on the other side for which grouping a sieve that a device counts pays,
/// with two stored blocks or more: a device's visits cost more beside the host's sorts
/// than the CPU's (`count 17 --engine quadrant --device gpu-only` on lavapipe, with two
/// blocks: the CPU's thresholds of the other side divided by 4 and of the pairs by 16, 0.91
/// times as long; by 8 and 64, 0.95 of that; by 32 and 1024, 1.00 of that).
const MIN_DEVICE_GROUPED_OTHERS: usize = MIN_GROUPED_OTHERS / 8;

/// Whose pair loop a sieve is loaded for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Counter {
    /// The CPU's: a run of the other side's patterns reads a block's tables once.
    Cpu,
    /// A device's: an invocation a pattern, each reading the tables on its own; sent what
    /// it takes (the tables where it shares the host's memory, over a bus the slices).
    Device(Made),
}

/// The other side's patterns, or a sample of them, as the pivots are chosen by: with how
/// many it holds in all, and what moves it where the stored patterns are.
pub type Others<'a> = (&'a [Pattern], usize, Shift);

/// How many pivots a load of `stored` patterns takes against `others` on the pair loop of
/// `counter`: none where grouping does not pay (the thresholds above). On the CPU, enough
/// to tell the blocks apart and one more to split them further (two were 3 % slower at
/// N = 18 once a pattern read only its occupied lookups), but no more signatures than the
/// other side has runs of 32 patterns: a run reads its blocks' tables once (measured at
/// N = 18, 20, 22: 1 to 3 % faster than without). On a device that shares the host's
/// memory, whose visits cost more beside the host's work a pattern, three more and no cap
/// by runs (`count 18 --engine quadrant --device gpu-only` on lavapipe: two more 0.93 times
/// as long as one, three 0.98 of two, four 1.02 of three; three capped by runs 1.08 of
/// three). Over a bus the host is the bound and the GPU two-thirds idle, so the pivots the
/// blocks need and none more (`count 21 --engine quadrant --device gpu-only`, an H200
/// beside 16 Xeon threads: 42.0 s against 48.4 and 49.1 with three more, the threads'
/// grouping and slicing 247 s against 422; at N = 20 one more took 1.03 times as long, two
/// 1.14, the CPU's rule 1.01).
fn pivots_for(stored: usize, others: usize, counter: Counter) -> usize {
    let blocks = stored.div_ceil(BLOCK);
    let grouped = match counter {
        Counter::Cpu => {
            blocks >= MIN_GROUPED_BLOCKS
                && others >= MIN_GROUPED_OTHERS
                && stored.saturating_mul(others) >= MIN_GROUPED_PAIRS
        }
        Counter::Device(_) => blocks >= 2 && others >= MIN_DEVICE_GROUPED_OTHERS,
    };
    if !grouped {
        return 0;
    }
    let apart = blocks.ilog2() as usize;
    match counter {
        Counter::Cpu => (apart + 1).min((others / 32).ilog2() as usize),
        Counter::Device(Made::Tables) => apart + 3,
        Counter::Device(Made::Words) => apart,
    }
    .min(PIVOTS)
}

impl Sieve {
    /// Replaces the stored patterns with `patterns`, grouped for counting against patterns
    /// like `others`, which `others_shift` moves where `patterns` are (the buffers are
    /// reused), laid out by the loops `pairs`; an error when the memory for them cannot be had.
    pub fn load(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        others: (&[Pattern], Shift),
    ) -> Result<(), TryReserveError> {
        let others = (others.0, others.0.len(), others.1);
        time(Stage::StoredSide, || {
            self.load_tables(pairs, patterns, others, Counter::Cpu)
        })
    }

    /// [`Sieve::load`], grouped for the pair loop of `counter`.
    fn load_tables(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        others: Others,
        counter: Counter,
    ) -> Result<(), TryReserveError> {
        self.group(pairs, patterns, others, counter)?;
        self.slice_grouped(pairs, patterns)
    }

    /// Slices the stored patterns grouped by [`Sieve::group`] (`patterns` as they came,
    /// where there are no pivots) into tables.
    fn slice_grouped(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
    ) -> Result<(), TryReserveError> {
        let sorted = std::mem::take(&mut self.sorted);
        let grouped = if self.pivots.count == 0 {
            patterns
        } else {
            &sorted
        };
        let sliced = self.slice_on(pairs, grouped);
        self.sorted = sorted;
        sliced
    }

    /// [`Sieve::load`] for a device, making what it takes (`made`): the tables, or the
    /// stored patterns' dense words as they came, which it groups and makes them from (and
    /// the CPU, where it declines: [`Sieve::count_disjoint_by`]).
    pub fn load_for_device(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        (others, made): (Others, Made),
    ) -> Result<(), TryReserveError> {
        time(Stage::StoredSide, || {
            self.group(pairs, patterns, others, Counter::Device(made))?;
            match self.made {
                Made::Words => Ok(()),
                Made::Tables => self.slice_grouped(pairs, patterns),
            }
        })
    }

    /// [`Sieve::load`] up to the slicing, for the pair loop of `counter`: the pivots, the
    /// stored patterns grouped by them (in `sorted`, where there are pivots; for a device
    /// that takes the words, their dense words as they came and where each group starts,
    /// [`Sieve::group_words`], and `made` says so), the seen diagonals, the sizes and the
    /// reach.
    fn group(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        (others, others_len, others_shift): Others,
        counter: Counter,
    ) -> Result<(), TryReserveError> {
        self.others_shift = others_shift;
        self.made = Made::Tables;
        let count = pivots_for(patterns.len(), others_len, counter);
        self.pivots = Pivots::choose(count, patterns, (others, others_len, others_shift));
        let mut start = std::mem::take(&mut self.start);
        let grouped = if counter == Counter::Device(Made::Words) {
            self.group_words(pairs, patterns, &mut start)
        } else {
            self.group_patterns(pairs, patterns, &mut start)
        };
        let reach = grouped.and_then(|()| self.index_reach(&start));
        self.start = start;
        reach
    }

    /// [`Sieve::group`] of the patterns themselves (into `sorted`, where there are pivots),
    /// then the seen diagonals and the sizes.
    fn group_patterns(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        start: &mut Vec<usize>,
    ) -> Result<(), TryReserveError> {
        let union = if self.pivots.count == 0 {
            start.clear();
            start.extend([0, patterns.len()]);
            patterns.iter().fold(Pattern::default(), |u, &p| u.with(p))
        } else {
            let mut signatures = std::mem::take(&mut self.signatures);
            let grouped = sort_on(
                pairs,
                (&Signatures::new(&self.pivots), AsItIs),
                patterns,
                (&mut self.sorted, &mut signatures, start),
            );
            self.signatures = signatures;
            grouped?
        };
        (self.main, self.anti) = (union.main, union.anti);
        self.see_from_others();
        self.size(patterns.len());
        Ok(())
    }

    /// [`Sieve::group`] for a device that groups the stored patterns itself
    /// ([`Made::Words`]): the seen diagonals first (a pass for the union), then each
    /// pattern's dense word in the order they came, counted by its pivots' bits (the
    /// lowest of its dense word) for the groups' starts and each value's first place
    /// (`cursors`), where the device puts them; the patterns grouped here where the dense
    /// words are longer than a device takes (or a pivot is not seen, which no chosen pivot
    /// is).
    fn group_words(
        &mut self,
        pairs: PairKernel,
        patterns: &[Pattern],
        start: &mut Vec<usize>,
    ) -> Result<(), TryReserveError> {
        let union = patterns.iter().fold(Pattern::default(), |u, &p| u.with(p));
        (self.main, self.anti) = (union.main, union.anti);
        self.see_from_others();
        if self.seen.bits() > offload::DENSE_WORDS * 32
            || self.seen.pivots.len() != self.pivots.count
        {
            return self.group_patterns(pairs, patterns, start);
        }
        self.size(patterns.len());
        let shift = self.others_shift;
        let pivots = Gather::new(shift.apply(self.seen.pivots.mask));
        let rest = Gather::new(shift.apply(self.seen.rest.mask));
        let pivot_bits = self.seen.pivot_bits() as u32;
        let mut sizes = std::mem::take(&mut self.cursors);
        sizes.clear();
        sizes.try_reserve(1 << self.pivots.count)?;
        sizes.resize(1 << self.pivots.count, 0);
        let mut dense = std::mem::take(&mut self.dense);
        let gathers = (&pivots, &rest, pivot_bits);
        let written = if self.seen.bits() <= 64 {
            dense.per_pattern = 2;
            dense_on(pairs, gathers, patterns, (&mut dense.narrow, &mut sizes))
        } else {
            dense.per_pattern = 4;
            dense_on(pairs, gathers, patterns, (&mut dense.wide, &mut sizes))
        };
        self.dense = dense;
        // the groups in signature order; each value of the pivots' bits starts where its
        // signature's group does
        let signature = &self.seen.signature;
        start.clear();
        start.try_reserve(sizes.len() + 1)?;
        let mut at = 0;
        for s in 0..sizes.len() {
            start.push(at);
            at += sizes[signature.gathered_of(s as Signature) as usize] as usize;
        }
        start.push(at);
        for (gathered, cursor) in sizes.iter_mut().enumerate() {
            *cursor = start[usize::from(signature.of_gathered(gathered as u64))] as u32;
        }
        self.cursors = sizes;
        self.made = Made::Words;
        written
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
            PairKernel::Scalar => portable::slice(self, patterns),
            // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and
            // popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 => unsafe { x86_64::avx2::slice(self, patterns) },
            // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those
            // and AVX-512 F, BW and VBMI, and GFNI.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2WithAvx512 => unsafe { x86_64::avx512::slice(self, patterns) },
        }
    }

    /// The tables made here from the dense words a device was to be sent, grouped here
    /// ([`Sieve::slice_words`]), compiled for the loops `pairs`.
    fn slice_words_on(&mut self, pairs: PairKernel) -> Result<(), TryReserveError> {
        let mut grouped = std::mem::take(&mut self.grouped);
        let sliced = self
            .dense
            .group_into(&self.cursors, &mut grouped)
            .and_then(|()| {
                match pairs {
                    PairKernel::Scalar => portable::slice_words(self, &grouped),
                    // SAFETY: as in `slice_on`.
                    #[cfg(target_arch = "x86_64")]
                    PairKernel::Avx2 => unsafe { x86_64::avx2::slice_words(self, &grouped) },
                    // SAFETY: as in `slice_on`.
                    #[cfg(target_arch = "x86_64")]
                    PairKernel::Avx2WithAvx512 => unsafe {
                        x86_64::avx512::slice_words(self, &grouped)
                    },
                }
            });
        self.grouped = grouped;
        sliced
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
        let buffers = (ordered, signatures, start);
        match self.reads_records() {
            true => self.order_as(pairs, Records(&self.seen.rest), patterns, buffers),
            false => self.order_as(pairs, AsItIs, patterns, buffers),
        }
    }

    /// [`Sieve::order`] with each pattern written as `write` writes it (where there are
    /// pivots: the other side's order).
    fn order_as<W: Writes>(
        &self,
        pairs: PairKernel,
        write: W,
        patterns: &[Pattern],
        buffers: SortBuffers<W::Out>,
    ) -> Result<(), TryReserveError> {
        let sorted = || sort_on(pairs, (&self.seen.signature, write), patterns, buffers);
        time(Stage::OtherSide, sorted).map(drop)
    }

    /// How many pairs (stored pattern, pattern of `others`) share no diagonal, on the fastest
    /// loop this CPU runs.
    #[cfg(test)]
    pub fn count_disjoint(&mut self, others: &[Pattern]) -> u64 {
        let never = AtomicBool::new(false);
        self.count_disjoint_on(
            PairKernel::best(),
            others,
            (&never, &crate::parallel::NO_SPARE),
        )
        .expect("memory for the order")
        .expect("never stopped")
    }

    /// How many pairs (stored pattern, pattern of `others` moved as [`Sieve::load`] was told)
    /// share no diagonal, on the loop `pairs` and the threads `spare` lends, the other side
    /// first put in signature order ([`Sieve::order`]); `None` when `stop` was set first (it
    /// is looked at every few patterns), an error when the memory for the order cannot be
    /// had.
    pub fn count_disjoint_on(
        &mut self,
        pairs: PairKernel,
        others: &[Pattern],
        (stop, spare): (&AtomicBool, &Spare),
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
            self.count_ordered(pairs, (others, &start), (stop, spare))
        });
        (self.sorted, self.signatures, self.start) = (ordered, signatures, start);
        counted
    }

    /// [`Sieve::count_disjoint_on`] of the other side once ordered: signature `s`'s
    /// patterns (or records) at `others[start[s]..start[s + 1]]`; a large load is cut into
    /// pieces that the threads `spare` lends count beside this one ([`Sieve::count_split`]).
    fn count_ordered(
        &self,
        pairs: PairKernel,
        (others, start): Ordered,
        (stop, spare): (&AtomicBool, &Spare),
    ) -> Option<u64> {
        time(Stage::CpuPairs, || {
            // split only where a thread is idle now: a split load's pieces cut its batches
            // short, which cost a shard of N = 24 on two busy threads 6 % more
            let load_pairs = self.len as u64 * others.len() as u64;
            if load_pairs >= self.batching.split {
                if let Some(lent) = spare.borrow() {
                    return self.count_split(pairs, (others, start), (stop, spare), lent);
                }
            }
            let share = Share {
                others,
                start,
                groups: 0..start.len() - 1,
                buffers: &mut self.batch.lock(),
            };
            self.count_share(pairs, share, stop)
        })
    }

    /// [`Sieve::count_ordered`] of a load cut into pieces of its signatures, taken in turn by
    /// this thread, the thread `first` lent, and each thread `spare` lends while it counts
    /// (a thread started for the load, given back at its end).
    fn count_split(
        &self,
        pairs: PairKernel,
        (others, start): Ordered,
        (stop, spare): (&AtomicBool, &Spare),
        first: Lent,
    ) -> Option<u64> {
        let most_helpers = num_cpus::get().saturating_sub(1);
        let count = (most_helpers + 1) * PIECES_PER_THREAD;
        let pieces = pieces(start, (count, self.batching.piece));
        let next = AtomicUsize::new(0);
        // the next piece not yet taken, counted with `buffers`; `None` once none is left
        let count_next = |buffers: &mut BatchBuffers| {
            let groups = pieces.get(next.fetch_add(1, Ordering::Relaxed))?.clone();
            let share = Share {
                others,
                start,
                groups,
                buffers,
            };
            Some(self.count_share(pairs, share, stop))
        };
        let count_pieces = |buffers: &mut BatchBuffers| {
            let mut disjoint = 0;
            while let Some(counted) = count_next(&mut *buffers) {
                disjoint += counted?;
            }
            Some(disjoint)
        };
        std::thread::scope(|scope| {
            let mut helpers = Vec::new();
            let mut mine = Some(0);
            let buffers = &mut *self.batch.lock();
            let mut first = Some(first);
            while next.load(Ordering::Relaxed) < pieces.len() {
                // a thread lent since the last piece joins in
                while helpers.len() < most_helpers {
                    let Some(lent) = first.take().or_else(|| spare.borrow()) else {
                        break;
                    };
                    let started = std::thread::Builder::new()
                        .name("nqueens-lent".into())
                        .spawn_scoped(scope, || count_pieces(&mut BatchBuffers::default()));
                    // one that cannot start is given back: this thread counts on
                    let Ok(helper) = started else { break };
                    helpers.push((lent, helper));
                }
                let Some(counted) = count_next(&mut *buffers) else {
                    break;
                };
                mine = mine.zip(counted).map(|(a, b)| a + b);
                if mine.is_none() {
                    break;
                }
            }
            helpers.into_iter().fold(mine, |sum, (lent, helper)| {
                let counted = helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p));
                drop(lent);
                sum.zip(counted).map(|(a, b)| a + b)
            })
        })
    }

    /// The pairs of one thread's share of a load, on the loops `pairs`.
    fn count_share(&self, pairs: PairKernel, share: Share, stop: &AtomicBool) -> Option<u64> {
        // the loops with batches and those without are compiled apart: together, the code
        // of one made the other slower (`count 18 -t 1`, none batched, 1.04 times as long)
        match self.blocks > self.batching.stretch {
            true => self.count_ordered_on::<true>(pairs, share, stop),
            false => self.count_ordered_on::<false>(pairs, share, stop),
        }
    }

    /// The other side, ordered, as a device takes it: the words its sort `written`, or its
    /// dense words gathered here by the loops `pairs` (`pext` where the CPU has it: a lookup
    /// per diagonal took more of the CPU than the pair loop the device saves, at N = 17).
    fn work<'a>(
        &'a self,
        pairs: PairKernel,
        others: Ordered<'a>,
        written: Option<&'a [[u32; NARROW_WORDS]]>,
    ) -> offload::PairWork<'a> {
        let mut work = match pairs {
            PairKernel::Scalar => self.work_with(others, written, Gather::gather_by_lookups),
            // SAFETY: these are made only where the CPU has AVX2, BMI2 and popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 | PairKernel::Avx2WithAvx512 => unsafe {
                x86_64::avx2::work(self, others, written)
            },
        };
        work.disjoint_narrow = Sieve::disjoint_narrow_on(pairs);
        work
    }

    /// The spot checks' count over narrow words on the loops `pairs`: every device's work
    /// takes it from here (the portable loop, built for the baseline CPU, has no 64-bit
    /// compare to vectorise with).
    pub(super) fn disjoint_narrow_on(pairs: PairKernel) -> fn(&[[u32; 2]], u64) -> usize {
        match pairs {
            PairKernel::Scalar => portable::disjoint_narrow,
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 | PairKernel::Avx2WithAvx512 => disjoint_narrow_avx2,
        }
    }

    /// [`Sieve::count_share`] on the loops `pairs`, the runs taken in batches or not.
    fn count_ordered_on<const BATCHED: bool>(
        &self,
        pairs: PairKernel,
        share: Share,
        stop: &AtomicBool,
    ) -> Option<u64> {
        match pairs {
            PairKernel::Scalar => portable::count::<BATCHED>(self, share, stop),
            // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and popcnt.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2 => unsafe { x86_64::avx2::count::<BATCHED>(self, share, stop) },
            // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those
            // and AVX-512 F, VL, BW, VBMI2 and VPOPCNTDQ.
            #[cfg(target_arch = "x86_64")]
            PairKernel::Avx2WithAvx512 => unsafe {
                x86_64::avx512::count::<BATCHED>(self, share, stop)
            },
        }
    }
}

/// The signatures of an ordered other side (signature `s`'s patterns at
/// `start[s]..start[s + 1]`) cut into about `count` pieces of alike numbers of patterns, and
/// `least` at least (a signature is never cut), in order.
fn pieces(start: &[usize], (count, least): (usize, usize)) -> Vec<Range<usize>> {
    let (groups, patterns) = (start.len() - 1, start[start.len() - 1]);
    let least = patterns.div_ceil(count.max(1)).max(least).max(1);
    let mut pieces = Vec::with_capacity(count + 1);
    let mut from = 0;
    for group in 0..groups {
        if start[group + 1] - start[from] >= least {
            pieces.push(from..group + 1);
            from = group + 1;
        }
    }
    if from < groups {
        pieces.push(from..groups);
    }
    pieces
}

/// Appends each stored pattern's dense word (its pivots' bits lowest, then the rest's,
/// gathered by `pivots` and `rest`: [`StoredDense`]) to `out` in the order they came, as
/// `W` 32-bit words, and counts them by their pivots' bits in `sizes` (as many as those
/// bits take), gathered by the loops `pairs` (`pext` where the CPU has it).
fn dense_on<const W: usize>(
    pairs: PairKernel,
    (pivots, rest, pivot_bits): (&Gather, &Gather, u32),
    patterns: &[Pattern],
    buffers: (&mut Vec<[u32; W]>, &mut [u32]),
) -> Result<(), TryReserveError> {
    let write = StoredDense::<W> {
        pivots,
        rest,
        pivot_bits,
    };
    match pairs {
        PairKernel::Scalar => write.all(patterns, Gather::gather_by_lookups, buffers),
        // SAFETY: these are made only where the CPU has AVX2, BMI2 and popcnt.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2 | PairKernel::Avx2WithAvx512 => unsafe {
            x86_64::avx2::dense(write, patterns, buffers)
        },
    }
}

/// [`portable::disjoint_narrow`] on AVX2, for the spot checks of a sieve loaded by loops
/// that have it.
#[cfg(target_arch = "x86_64")]
fn disjoint_narrow_avx2(words: &[[u32; 2]], dense: u64) -> usize {
    // SAFETY: `Sieve::work` picks this only for a `PairKernel::Avx2` or `Avx2WithAvx512`,
    // made only where the CPU has AVX2, BMI2 and popcnt.
    unsafe { x86_64::avx2::disjoint_narrow(words, dense) }
}

/// [`Signatures::sort`] with the signatures computed by the loops `pairs` (`pext` on AVX2,
/// four at a time on AVX-512), each pattern written as `write` writes it.
fn sort_on<W: Writes>(
    pairs: PairKernel,
    by: (&Signatures, W),
    patterns: &[Pattern],
    buffers: SortBuffers<W::Out>,
) -> Result<Pattern, TryReserveError> {
    match pairs {
        PairKernel::Scalar => portable::sort(by, patterns, buffers),
        // SAFETY: a `PairKernel::Avx2` is made only where the CPU has AVX2, BMI2 and popcnt.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2 => unsafe { x86_64::avx2::sort(by, patterns, buffers) },
        // SAFETY: a `PairKernel::Avx2WithAvx512` is made only where the CPU has those and
        // AVX-512 F, BW and BITALG.
        #[cfg(target_arch = "x86_64")]
        PairKernel::Avx2WithAvx512 => unsafe { x86_64::avx512::sort(by, patterns, buffers) },
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
