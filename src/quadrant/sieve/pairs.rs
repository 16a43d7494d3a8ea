//! The counting loop, once for every instruction set: the other side's runs visit the stored
//! blocks their signature reaches, a run's shared lookups read once per block, each of its
//! patterns reading the rest; batched over stretches of blocks where they are many. Its
//! steps (packing, filling, ordering, adding up) are each instruction set's.

use super::batching::{BatchBuffers, Batching, RunOrder, RunReads, BATCH_RUNS, RUN};
use super::layout::{Gather, Sieve, Slice, TABLE_BITS, TABLE_ENTRIES};
use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::{Signature, PIVOTS};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

/// Patterns counted between two looks at the stop flag.
pub(super) const STOP_CHECK: usize = 256;

/// The other side in signature order, each pattern located by [`Sieve::order`].
pub(super) type Ordered<'a> = (&'a [Pattern], &'a [usize]);

/// What one thread counts of a load's pairs: the signatures `groups` of the other side
/// `others` (in signature order, signature `s`'s patterns at `others[start[s]..start[s + 1]]`),
/// with its own buffers.
pub(super) struct Share<'a> {
    pub others: &'a [Pattern],
    pub start: &'a [usize],
    pub groups: Range<usize>,
    pub buffers: &'a mut BatchBuffers,
}

/// The counting loop's steps: packing a pattern's seen diagonals, adding up the clashes'
/// popcounts, and filling a pattern's own entries from its dense word (one
/// word), which returns how many it wrote at the front: those of every lookup, or
/// (`COMPACT`) only those of the lookups the pattern occupies.
#[inline(always)]
pub(super) fn count_body<const COMPACT: bool, const BATCHED: bool>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
    loops: (
        impl Fn(&Gather, Pattern) -> (u64, u64) + Copy,
        impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
        impl Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
        impl Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
    ),
) -> Option<u64> {
    match (sieve.reads_records(), sieve.seen.narrow()) {
        (true, _) => count_pairs::<true, true, COMPACT, BATCHED>(sieve, share, stop, loops),
        (false, true) => count_pairs::<false, true, COMPACT, BATCHED>(sieve, share, stop, loops),
        (false, false) => count_pairs::<false, false, COMPACT, BATCHED>(sieve, share, stop, loops),
    }
}

/// Most lookups of the pivots, which a run shares.
pub(super) const SHARED_MOST: usize = PIVOTS.div_ceil(TABLE_BITS as usize);

/// A run of a batch: patterns `first..first + len` of the batch, of one signature, whose
/// compatible blocks still to visit are `reach[next..end]`.
#[derive(Clone, Copy, Default)]
pub(super) struct BatchRun {
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
pub(super) struct Runs<
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
    pub(super) fn fill_own(&self, p: Pattern, slot: &mut [u32]) -> usize {
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
    pub(super) fn fill(
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
    pub(super) fn visit(
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

    /// Where the stored blocks are few: each run of the signatures `groups` visits them all
    /// as soon as its entries are worked out (in `entries`), adding to `counts` its
    /// clashes. Returns the pairs the runs' blocks hold, `None` when `stop` was set first.
    #[inline(always)]
    fn count_alone(
        &self,
        (start, groups): (&[usize], Range<usize>),
        entries: &mut [u32],
        stop: &AtomicBool,
        counts: &mut [u64; 4],
    ) -> Option<u64> {
        let sieve = self.sieve;
        let (mut run_reads, mut run_order): (RunReads, RunOrder) = ([0; RUN], [0; RUN + 64]);
        let (mut done, mut next_look, mut covered) = (0, STOP_CHECK, 0);
        for group in groups {
            let reach = &sieve.reach[sieve.reach_at[group]..sieve.reach_at[group + 1]];
            for at in (start[group]..start[group + 1]).step_by(RUN) {
                if done >= next_look {
                    if stop.load(Ordering::Relaxed) {
                        return None;
                    }
                    next_look += STOP_CHECK;
                }
                let len = RUN.min(start[group + 1] - at);
                done += len;
                covered += sieve.covered[group] * len as u64;
                let run = (&mut run_reads, &mut run_order);
                let shared = self.fill((group, at, len), entries, run);
                let run = (&run_reads, &run_order);
                self.visit(reach, (&shared, &entries[..], len), run, counts);
            }
        }
        Some(covered)
    }

    /// Where the stored blocks are many: the runs of the signatures `groups` a batch at a
    /// time, their entries worked out first (in `entries`, their reads and orders beside),
    /// then the batch passed over the blocks a stretch at a time, each run visiting those it
    /// reaches, adding to `counts` its clashes. Returns the pairs the runs' blocks hold,
    /// `None` when `stop` was set first.
    #[inline(always)]
    fn count_batched(
        &self,
        (start, groups): (&[usize], Range<usize>),
        (entries, reads, order): (&mut [u32], &mut [RunReads], &mut [RunOrder]),
        stop: &AtomicBool,
        counts: &mut [u64; 4],
    ) -> Option<u64> {
        let (sieve, own) = (self.sieve, self.own);
        let Batching {
            stretch: stretch_blocks,
            patterns: most_patterns,
            runs: most_runs,
            ..
        } = sieve.batching;
        let mut batch = [BatchRun::default(); BATCH_RUNS];
        // where the next batch starts: a signature, and a pattern of it
        let (mut group, mut at, mut covered) = (groups.start, start[groups.start], 0);
        let groups = groups.end;
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
                    shared: self.fill((group, at, len), &mut entries[filled * own..], run),
                };
                held += 1;
                filled += len;
                at += len;
            }
            if held == 0 {
                return Some(covered);
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
                    self.visit(&reach[..n], entries, (&reads[r], &order[r]), counts);
                }
            }
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
pub(super) fn count_pairs<
    const RECORDS: bool,
    const NARROW: bool,
    const COMPACT: bool,
    const BATCHED: bool,
>(
    sieve: &Sieve,
    share: Share,
    stop: &AtomicBool,
    (pack, add, fill_rest, order_run): (
        impl Fn(&Gather, Pattern) -> (u64, u64) + Copy,
        impl Fn(&mut [u64; 4], &[[u64; 4]]) + Copy,
        impl Fn(u64, usize, usize, &mut [u32]) -> usize + Copy,
        impl Fn(&RunReads, (usize, usize), &mut RunOrder) + Copy,
    ),
) -> Option<u64> {
    let Share {
        others,
        start,
        groups,
        buffers,
    } = share;
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
    // for each pattern of a batch, the entry each of its own lookups reads, as a byte
    // offset in a block, and room for a last store of 16 entries past the batch's
    let BatchBuffers {
        entries,
        reads,
        order,
    } = buffers;
    let Batching {
        patterns: most_patterns,
        runs: most_runs,
        ..
    } = sieve.batching;
    let size = most_patterns.min(others.len()) * own + 16;
    if entries.len() < size {
        // tens of kilobytes, kept for the next unit
        entries.resize(size, 0);
    }
    let ordered = (start, groups);
    let covered = if !BATCHED {
        runs.count_alone(ordered, entries, stop, &mut counts)?
    } else {
        // for each run of the batch, how many of its own lookups each pattern reads, and
        // its patterns in increasing order of that
        if reads.len() < most_runs {
            reads.resize(most_runs, [0; RUN]);
            order.resize(most_runs, [0; RUN + 64]);
        }
        let buffers = (&mut entries[..], &mut reads[..], &mut order[..]);
        runs.count_batched(ordered, buffers, stop, &mut counts)?
    };
    let hits: u64 = counts.iter().sum();
    Some(covered - hits)
}

/// Adds to `counts` the clashes of a run's patterns (their entries: the run's shared ones,
/// then each pattern's own) with the blocks `reach`: [`LANES`] blocks at a time, then the
/// rest two and one at a time.
#[inline(always)]
pub(super) fn visit_blocks<'a>(
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
pub(super) fn fill_part<const NARROW: bool>(
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

/// The entries of lookups `first..` for a pattern whose dense word ([`Seen`](super::layout::Seen)) from lookup
/// `first` on is `dense`, as byte offsets within a block.
#[inline(always)]
pub(super) fn fill_entries<D: Dense>(dense: D, first: usize, entries: &mut [u32]) {
    // each entry from its own shift of the word: a chain of shifts, one per entry, made
    // `count 18 -t 1` 4 % slower
    for (i, entry) in entries.iter_mut().enumerate() {
        *entry = (((first + i) * TABLE_ENTRIES + dense.subset_at(i)) * SLICE_BYTES) as u32;
    }
}

/// A pattern's dense word ([`Seen`](super::layout::Seen)), or part of it, read a lookup at a time: `u64` where
/// it fits (its shifts are cheaper), else `u128`.
pub(super) trait Dense: Copy {
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
pub(super) const LANES: usize = 4;

/// Bytes of one slice of a block.
pub(super) const SLICE_BYTES: usize = std::mem::size_of::<Slice>();

/// For each of the blocks starting at `data[blocks[i]]`, `clash[i]` ORed with its entries at
/// the byte offsets `entries`: the stored patterns clashing with the pattern.
#[inline(always)]
pub(super) fn or_entries<const L: usize>(
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
pub(super) fn count_run<'a, const L: usize>(
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
