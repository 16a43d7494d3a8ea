//! A loaded sieve's pair count handed to another device (a GPU): the stored blocks' lookup
//! tables as they lie, each signature's reach, and each pattern of the other side as its
//! whole dense word ([`Seen`](super::layout::Seen)) and its signature. The device does what
//! [`count_pairs`](super::pairs::count_pairs) does: for each pattern and each block its
//! signature reaches, the OR of the entries its dense word picks, and their popcount.

use super::layout::{Gather, Sieve, ENTRY_WORDS, TABLE_BITS, TABLE_ENTRIES};
use super::pairs::Ordered;
use crate::error::Error;
use crate::quadrant::pair_kernel::PairKernel;
use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::Signature;

/// Bits of a lookup's subset in a dense word (what the device's shader takes apart).
pub const SUBSET_BITS: u32 = TABLE_BITS;

/// 32-bit words of a pattern's dense word on a device: 128 bits hold every board the engine
/// takes (a half of N = 27 spans at most 40 diagonals of each direction, and the pivots'
/// lookups add at most 15 bits); a sieve whose word is longer is counted on the CPU.
pub const DENSE_WORDS: usize = 4;

/// Words of one pattern of the other side on a device: its dense word, then its signature.
pub const PATTERN_WORDS: usize = DENSE_WORDS + 1;

/// What a device counts: the clashes of every pattern of the other side with the stored
/// blocks its signature reaches. The disjoint pairs are `visited` less the clashes.
pub struct PairWork<'a> {
    sieve: &'a Sieve,
    /// Lookups per block, each of [`TABLE_ENTRIES`] entries of 32 bytes (at most 26).
    pub lookups: u32,
    /// For signature `s`, the blocks it reaches at `reach[reach_at[s]..reach_at[s + 1]]`,
    /// each as the index of its first entry.
    pub reach: &'a [u32],
    pub reach_at: Vec<u32>,
    /// [`PATTERN_WORDS`] words for each pattern of the other side.
    pub patterns: Vec<u32>,
    /// The pairs the reaches visit (the stored patterns of the reached blocks, summed over
    /// the other side's patterns).
    pub visited: u64,
}

impl PairWork<'_> {
    /// Bytes of the lookup tables.
    pub fn table_bytes(&self) -> u64 {
        (self.table_entries() * ENTRY_WORDS * 8) as u64
    }

    /// The lookup tables' words ([`PairWork::table_bytes`] in all), each entry's 256 bits
    /// as four 64-bit words, in order.
    pub fn table_words(&self) -> impl Iterator<Item = u64> + '_ {
        let entries = &self.sieve.data.as_slice()[..self.table_entries()];
        entries.iter().flat_map(|slice| slice.0)
    }

    /// Pattern `i`'s clashes as the device counts them, worked out on the CPU from the same
    /// tables: a spot check's answer.
    pub fn clashes_of(&self, i: usize) -> u32 {
        let words = &self.patterns[i * PATTERN_WORDS..][..PATTERN_WORDS];
        let dense =
            (words[..DENSE_WORDS].iter().rev()).fold(0u128, |d, &w| d << 32 | u128::from(w));
        let signature = words[DENSE_WORDS] as usize;
        let reach = self.reach_at[signature] as usize..self.reach_at[signature + 1] as usize;
        let entries = self.sieve.data.as_slice();
        let clashes_with = |block: u32| {
            let mut clash = [0u64; ENTRY_WORDS];
            for l in 0..self.lookups as usize {
                let subset = (dense >> (l as u32 * SUBSET_BITS)) as usize & (TABLE_ENTRIES - 1);
                if subset != 0 {
                    let entry = &entries[block as usize + l * TABLE_ENTRIES + subset];
                    clash.iter_mut().zip(entry.0).for_each(|(c, w)| *c |= w);
                }
            }
            clash.iter().map(|w| w.count_ones()).sum::<u32>()
        };
        self.reach[reach]
            .iter()
            .map(|&block| clashes_with(block))
            .sum()
    }

    /// Entries (of 32 bytes) of the lookup tables.
    fn table_entries(&self) -> usize {
        self.sieve.blocks * self.sieve.lookups * TABLE_ENTRIES
    }

    /// The patterns of the other side.
    pub fn len(&self) -> usize {
        self.patterns.len() / PATTERN_WORDS
    }
}

/// What a device made of a sieve's pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// The disjoint pairs, counted.
    Now(u64),
    /// To be counted with others (a GPU's batch): the device's ticket for them.
    Later(u64),
    /// The run was stopped first.
    Stopped,
}

/// Counts a loaded sieve's pairs: on a device, or (where the device chooses: a part it
/// cannot hold, a device dropped) on the CPU's loops.
pub trait PairDevice {
    /// The disjoint pairs of `work`, or a ticket for them; `on_cpu` counts them on the CPU's
    /// loops (`None` when the run was stopped first).
    fn disjoint(
        &self,
        work: &PairWork,
        on_cpu: &mut dyn FnMut() -> Option<u64>,
    ) -> Result<Counted, Error>;
}

impl Sieve {
    /// [`Sieve::count_disjoint_on`] with the pairs counted by `device`, the other side
    /// ordered and written as [`PairWork`] for it (the CPU's loops `pairs` where it says).
    pub fn count_disjoint_by(
        &mut self,
        pairs: PairKernel,
        others: &[Pattern],
        stop: &std::sync::atomic::AtomicBool,
        device: &dyn PairDevice,
    ) -> Result<Counted, Error> {
        let short = |_| crate::memory::memory_short("a unit's half-board patterns");
        if self.len == 0 || self.lookups == 0 || self.seen.bits() > DENSE_WORDS * 32 {
            // nothing a device needs to do (or a word it cannot hold): the CPU's loops
            let counted = self.count_disjoint_on(pairs, others, stop).map_err(short)?;
            return Ok(counted.map_or(Counted::Stopped, Counted::Now));
        }
        let (mut ordered, mut signatures, mut start) = (
            std::mem::take(&mut self.sorted),
            std::mem::take(&mut self.signatures),
            std::mem::take(&mut self.start),
        );
        let made = self.order(pairs, others, (&mut ordered, &mut signatures, &mut start));
        let counted = made.map_err(short).and_then(|()| {
            let others = if self.pivots.count == 0 {
                others
            } else {
                &ordered
            };
            let work = self.work(pairs, (others, &start));
            let mut on_cpu = || self.count_ordered(pairs, (others, &start), stop);
            device.disjoint(&work, &mut on_cpu)
        });
        (self.sorted, self.signatures, self.start) = (ordered, signatures, start);
        counted
    }

    /// [`Sieve::work`] with the seen diagonals of a pattern gathered by `gather`.
    #[inline(always)]
    pub(super) fn work_with(
        &self,
        (others, start): Ordered,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> PairWork<'_> {
        let seen = &self.seen;
        let pivot_bits = seen.pivot_bits() as u32;
        let records = self.reads_records();
        let mut patterns = Vec::with_capacity(others.len() * PATTERN_WORDS);
        let mut visited = 0u64;
        for (group, bounds) in start.windows(2).enumerate() {
            let run = &others[bounds[0]..bounds[1]];
            visited += self.covered[group] * run.len() as u64;
            let pivots = u128::from(seen.signature.gathered_of(group as Signature));
            for &p in run {
                let dense = if records {
                    pivots | u128::from(p.main) << pivot_bits
                } else {
                    let (main, anti) = gather(&seen.rest, p);
                    let rest = u128::from(main) | u128::from(anti) << seen.rest.main_count;
                    let (main, anti) = gather(&seen.pivots, p);
                    u128::from(seen.pivots.word((main, anti))) | rest << pivot_bits
                };
                patterns.extend((0..DENSE_WORDS).map(|w| (dense >> (32 * w)) as u32));
                patterns.push(group as u32);
            }
        }
        PairWork {
            sieve: self,
            lookups: self.lookups as u32,
            reach: &self.reach,
            reach_at: self.reach_at.iter().map(|&at| at as u32).collect(),
            patterns,
            visited,
        }
    }
}
