//! A loaded sieve's pair count handed to another device (a GPU): the stored blocks' lookup
//! tables, or the stored patterns' dense words for the device to transpose into slices (for
//! each seen diagonal, its 256-bit set of a block's patterns) and fill into tables (about a
//! sixth of the tables' bytes, where they cross a bus, and none of the host's transposes),
//! each signature's reach, and each pattern of the other side as its whole dense word
//! ([`Seen`](super::layout::Seen)) and its signature (its bits past the pivots where they
//! fit 64, the pivots' being its signature's). The device does what
//! [`count_pairs`](super::pairs::count_pairs) does: for each pattern and each block its
//! signature reaches, the OR of the entries its dense word picks, and their popcount.

use super::layout::{
    Gather, Made, Sieve, Slice, Writes, BLOCK, ENTRY_WORDS, NARROW_WORDS, TABLE_BITS, TABLE_ENTRIES,
};
use super::pairs::Ordered;
use crate::error::Error;
use crate::parallel::NO_SPARE;
use crate::quadrant::cells::{pattern_words, Joinable};
use crate::quadrant::pair_kernel::PairKernel;
use crate::quadrant::pattern::Pattern;
use crate::quadrant::pivots::{Signature, Signatures};
use std::borrow::Cow;

/// Bits of a lookup's subset in a dense word (what the device's shader takes apart).
pub const SUBSET_BITS: u32 = TABLE_BITS;

/// 32-bit words of a pattern's dense word on a device: 128 bits hold every board the engine
/// takes (a half of N = 28 spans at most 41 diagonals of each direction, and the pivots'
/// lookups add at most 15 bits); a sieve whose word is longer is counted on the CPU.
pub const DENSE_WORDS: usize = 4;

/// Words of one pattern of the other side on a device where the seen diagonals other than
/// the pivots are more than 64: its dense word, then its signature.
pub const WIDE_WORDS: usize = DENSE_WORDS + 1;

/// Words of one pattern of the other side sent as it is, for a device that gathers its
/// words and signature itself ([`Signing`]): its main diagonals, then its anti-diagonals,
/// each low half first.
pub const RAW_WORDS: usize = 4;

/// Where a signature's head ([`PairWork::heads`]) puts the bit the rest's start at.
const REST_AT: u32 = 16;

/// Bytes of one slice, and of one entry of the lookup tables (256 bits, a bit a pattern of
/// a block).
pub const ENTRY_BYTES: u64 = (ENTRY_WORDS * 8) as u64;

/// What a device is sent of the stored blocks.
#[derive(Clone, Copy)]
enum StoredSide<'a> {
    /// Each block's lookup tables.
    Tables(&'a [Slice]),
    /// The stored patterns' dense words in the order they came, `per_pattern` 32-bit words
    /// each, which the device groups (each value of their `pivots` lowest bits from its
    /// place in `cursors` on), transposes a block at a time and fills into tables.
    Words {
        words: &'a [u32],
        per_pattern: usize,
        cursors: &'a [u32],
        pivots: usize,
    },
}

/// A block of stored words a device groups (by the value of their lowest `pivots` bits)
/// and makes tables of: where its words start in the sieve's, its first entry in the
/// sieve's tables, its patterns and the words a pattern.
pub struct WordsBlock {
    pub words_from: usize,
    pub first_entry: usize,
    pub patterns: usize,
    pub per_pattern: usize,
    pub pivots: usize,
}

/// What a device is sent of a sieve's stored blocks: its tables' entries, or its words.
#[cfg(feature = "gpu")]
pub enum Upload<'a> {
    Entries(&'a [u64]),
    Words(&'a [u32]),
}

/// What a device counts: the clashes of every pattern of the other side with the stored
/// blocks its signature reaches. The disjoint pairs are `visited` less the clashes.
pub struct PairWork<'a> {
    /// Lookups per block, each of [`TABLE_ENTRIES`] entries of [`ENTRY_BYTES`] once filled
    /// (at most 26).
    pub lookups: u32,
    /// How a spot check counts the narrow stored words that share no bit with a dense
    /// word, on the sieve's loops ([`portable::disjoint_narrow`](super::portable::disjoint_narrow)).
    pub(super) disjoint_narrow: fn(&[[u32; 2]], u64) -> usize,
    /// The stored patterns, and the blocks of [`BLOCK`] they make.
    stored_len: usize,
    blocks: usize,
    stored: StoredSide<'a>,
    /// For signature `s`, the blocks it reaches at `reach[reach_at[s]..reach_at[s + 1]]`,
    /// each as the index of its first entry in the tables (block-major, then lookup, then
    /// subset).
    pub reach: &'a [u32],
    pub reach_at: Vec<u32>,
    /// [`NARROW_WORDS`] or [`WIDE_WORDS`] (`pattern_words`) for each pattern of the other
    /// side: written here, or by the other side's sort ([`DeviceWords`]); in signature
    /// order, or where the device groups them (it takes words), as they may have come.
    pub patterns: Cow<'a, [u32]>,
    pub pattern_words: usize,
    /// Where the device groups the other side: for each signature, where its patterns
    /// begin once grouped (empty where they come grouped).
    pub places: &'a [usize],
    /// For each signature of narrow words: its pivots' dense bits, and at bit [`REST_AT`]
    /// where the rest's start in a dense word (0 for wide words).
    pub heads: Vec<u32>,
    /// The pairs the reaches visit (the stored patterns of the reached blocks, summed over
    /// the other side's patterns); `None` where the device signs the other side and adds
    /// them up itself ([`Signing`]).
    pub visited: Option<u64>,
    /// Where the device signs the other side: what it gathers each pattern by.
    pub signing: Option<Signing<'a>>,
    /// [`PairWork::first_spot`].
    first_spot: usize,
}

/// What a device over a bus is sent to sign the other side itself, whose patterns go as
/// they are ([`RAW_WORDS`] each) where its words are narrow (with pivots or none): each
/// pattern's bits past the pivots and its signature, gathered as the host's sort gathers
/// them, then counted by signature for their places and the pairs visited. The host then
/// makes nothing of the other side but its copy into the upload, and sends 16 bytes a
/// pattern for 12.
pub struct Signing<'a> {
    /// The patterns, in the order they came, or the cells that join them.
    raw: OtherSide<'a>,
    rest: &'a Gather,
    signatures: &'a Signatures,
    /// For each signature, the stored patterns of the blocks it reaches.
    pub covered: Vec<u32>,
}

/// The other side as a sieve is handed it, and a device that signs it is sent it: its
/// patterns as they came, or where a device may join them, the cells that do (the device
/// holds the quarter tables and joins each candidate; a candidate that is no pattern is
/// counted under no signature, and the order and the pairs pass over it).
#[derive(Clone, Copy)]
pub enum OtherSide<'a> {
    Joined(&'a [Pattern]),
    Cells(&'a Joinable<'a>),
}

impl<'a> Signing<'a> {
    /// The cells the device joins the other side from, where it does.
    pub fn cells(&self) -> Option<&'a Joinable<'a>> {
        match self.raw {
            OtherSide::Joined(_) => None,
            OtherSide::Cells(cells) => Some(cells),
        }
    }

    /// What it gathers a pattern by: the seen diagonals past the pivots, then the pivots',
    /// each a mask and how many main diagonals it holds (its anti-diagonals' bits follow
    /// them).
    pub fn gathers(&self) -> [(Pattern, u32); 2] {
        let (pivots, pivot_mains, _) = self.signatures.gathering();
        [
            (self.rest.mask, self.rest.main_count),
            (pivots, pivot_mains),
        ]
    }

    /// The patterns as they are sent, in the order they came ([`RAW_WORDS`] each; none
    /// where the device joins them).
    pub fn raw_words(&self) -> impl Iterator<Item = [u32; RAW_WORDS]> + '_ {
        let raw = match self.raw {
            OtherSide::Joined(raw) => raw,
            OtherSide::Cells(_) => &[],
        };
        raw.iter().map(|&p| pattern_words(p))
    }

    /// The signature of each value of the pivots' gathered bits.
    pub fn gathered(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.signatures.gathering().2.iter().map(|&s| u32::from(s))
    }

    /// Pattern `i`'s bits past the pivots and its signature, gathered as the device does
    /// (none for a candidate that is no pattern).
    fn sign(&self, i: usize) -> Option<(u64, usize)> {
        let p = match self.raw {
            OtherSide::Joined(raw) => raw[i],
            OtherSide::Cells(cells) => cells.pattern(i)?,
        };
        let rest = self.rest.word(self.rest.gather_by_lookups(p));
        Some((rest, usize::from(self.signatures.signature(p))))
    }

    /// The pairs visited, as the device adds them up, and the patterns: each pattern's
    /// signature's covered patterns, summed. Cells are joined here as the host joins a
    /// half, not a candidate at a time (which made the batches' checks cost the threads
    /// more than the rest of their work).
    fn visited(&self) -> (u64, u64) {
        let add_up = |patterns: &mut dyn Iterator<Item = Pattern>| {
            let covered = |p| u64::from(self.covered[usize::from(self.signatures.signature(p))]);
            patterns.fold((0, 0), |(visited, n), p| (visited + covered(p), n + 1))
        };
        match self.raw {
            OtherSide::Joined(raw) => add_up(&mut raw.iter().copied()),
            OtherSide::Cells(cells) => {
                let mut joined = Vec::new();
                match cells.join(PairKernel::best(), &mut joined) {
                    Ok(()) => add_up(&mut joined.into_iter()),
                    // (short of memory: a candidate at a time)
                    Err(_) => add_up(&mut cells.candidates().flatten()),
                }
            }
        }
    }
}

impl PairWork<'_> {
    /// Bytes of the lookup tables (on the device).
    pub fn table_bytes(&self) -> u64 {
        (self.blocks * self.lookups as usize * TABLE_ENTRIES) as u64 * ENTRY_BYTES
    }

    /// Bytes of what the device is sent of the stored blocks: the tables or the words.
    pub fn upload_bytes(&self) -> u64 {
        match self.stored {
            StoredSide::Tables(data) => data.len() as u64 * ENTRY_BYTES,
            StoredSide::Words { words, .. } => 4 * words.len() as u64,
        }
    }

    /// What the device is sent of the stored blocks ([`PairWork::upload_bytes`]).
    #[cfg(feature = "gpu")]
    pub fn upload(&self) -> Upload<'_> {
        match self.stored {
            StoredSide::Tables(data) => Upload::Entries(bytemuck::cast_slice(data)),
            StoredSide::Words { words, .. } => Upload::Words(words),
        }
    }

    /// Where the device is sent words, each block as it groups and transposes it (nothing
    /// where it is sent tables).
    pub fn word_blocks(&self) -> impl ExactSizeIterator<Item = WordsBlock> + '_ {
        let (per_pattern, pivots) = match self.stored {
            StoredSide::Tables(_) => (0, 0),
            StoredSide::Words {
                per_pattern,
                pivots,
                ..
            } => (per_pattern, pivots),
        };
        let blocks = if per_pattern == 0 { 0 } else { self.blocks };
        let lookups = self.lookups as usize;
        (0..blocks).map(move |b| WordsBlock {
            words_from: b * BLOCK * per_pattern,
            first_entry: b * lookups * TABLE_ENTRIES,
            patterns: (self.stored_len - b * BLOCK).min(BLOCK),
            per_pattern,
            pivots,
        })
    }

    /// The cursors the device groups the words by ([`StoredSide::Words`]): one for each
    /// value of their pivots' bits.
    pub fn cursors(&self) -> &[u32] {
        match self.stored {
            StoredSide::Tables(_) => &[],
            StoredSide::Words { cursors, .. } => cursors,
        }
    }

    /// Pattern `i`'s clashes as the device counts them, worked out on the CPU from what it
    /// was sent: a spot check's answer (from the words, it checks the device's transposes
    /// and filling too).
    pub fn clashes_of(&self, i: usize) -> u32 {
        let Some((dense, signature)) = self.dense_of(i) else {
            // a candidate that is no pattern reaches nothing
            return 0;
        };
        let reach = self.reach_at[signature] as usize..self.reach_at[signature + 1] as usize;
        let lookups = self.lookups as usize;
        let clashes_with = |first_entry: u32| {
            let block = first_entry as usize / (lookups * TABLE_ENTRIES);
            match self.stored {
                StoredSide::Tables(data) => {
                    let data = &data[block * lookups * TABLE_ENTRIES..][..lookups * TABLE_ENTRIES];
                    let mut clash = [0u64; ENTRY_WORDS];
                    for l in 0..lookups {
                        let subset =
                            (dense >> (l as u32 * SUBSET_BITS)) as usize & (TABLE_ENTRIES - 1);
                        let entry = &data[l * TABLE_ENTRIES + subset];
                        clash.iter_mut().zip(entry.0).for_each(|(c, w)| *c |= w);
                    }
                    clash.iter().map(|w| w.count_ones()).sum::<u32>()
                }
                // (the words' blocks are not the grouped ones: below)
                StoredSide::Words { .. } => (self.stored_len - block * BLOCK).min(BLOCK) as u32,
            }
        };
        let clashes = self.reach[reach].iter().map(|&b| clashes_with(b)).sum();
        let StoredSide::Words {
            words, per_pattern, ..
        } = self.stored
        else {
            return clashes;
        };
        // the reached blocks' patterns, less those the pattern shares no diagonal with: all
        // of them lie there (their group is compatible, so each of its blocks is reached),
        // wherever the device's grouping put each within its group
        let disjoint = match per_pattern {
            // (a check a sieve at least, over all its words: the narrow ones' on the CPU's
            // vectors, three times the time of the slices' checks at N = 20 without)
            2 => (self.disjoint_narrow)(words.as_chunks::<2>().0, dense as u64),
            _ => (words.chunks_exact(per_pattern))
                .filter(|&w| wide_word(w) & dense == 0)
                .count(),
        };
        clashes - disjoint as u32
    }

    /// Pattern `i`'s dense word and signature, read from its words as the device reads them
    /// (none for a candidate the device joins that is no pattern).
    fn dense_of(&self, i: usize) -> Option<(u128, usize)> {
        if let Some(signing) = &self.signing {
            let (rest, signature) = signing.sign(i)?;
            return Some((narrow_dense(self.heads[signature], rest.into()), signature));
        }
        let words = &self.patterns[i * self.pattern_words..][..self.pattern_words];
        let (bits, signature) = words.split_at(self.pattern_words - 1);
        let bits = wide_word(bits);
        let signature = signature[0] as usize;
        let dense = match self.pattern_words {
            NARROW_WORDS => narrow_dense(self.heads[signature], bits),
            _ => bits,
        };
        Some((dense, signature))
    }

    /// The stored blocks the other side's patterns visit, added up over them (where the
    /// host knows the pairs visited): about what the pair count costs beside its patterns.
    pub fn block_visits(&self) -> Option<u64> {
        self.visited.map(|pairs| pairs / BLOCK as u64)
    }

    /// The patterns of the other side (its candidates, where the device joins it).
    pub fn len(&self) -> usize {
        match self.signing.as_ref().map(|s| s.raw) {
            Some(OtherSide::Joined(raw)) => raw.len(),
            Some(OtherSide::Cells(cells)) => cells.len(),
            None => self.patterns.len() / self.pattern_words,
        }
    }

    /// The pattern a spot check takes as the sieve's first: its first, or where the device
    /// joins them, its first candidate that is a pattern.
    pub fn first_spot(&self) -> usize {
        self.first_spot
    }

    /// The pairs visited where the device signs the other side, as it adds them up, and
    /// its patterns: a spot check's answers.
    pub fn visited_as_signed(&self) -> (u64, u64) {
        let signing = self.signing.as_ref().expect("a signing device's work");
        signing.visited()
    }

    /// Rewrites narrow words as wide ones (the same dense words).
    #[cfg(test)]
    fn widen(&mut self) {
        let patterns = (0..self.len()).flat_map(|i| {
            let (dense, signature) = self.dense_of(i).expect("patterns, not cells");
            (0..DENSE_WORDS)
                .map(move |w| (dense >> (32 * w)) as u32)
                .chain([signature as u32])
        });
        self.patterns = Cow::Owned(patterns.collect());
        self.pattern_words = WIDE_WORDS;
        self.heads.clear();
    }
}

/// Each pattern of the other side as a device that shares the host's memory reads it
/// where its words are narrow and the CPU's loop would read records
/// ([`Sieve::reads_records`]): the record's dense word, its low half first, then its
/// signature ([`NARROW_WORDS`]), in signature order, written by the sort itself, not by a
/// pass over the records after it.
#[derive(Clone, Copy)]
pub(super) struct DeviceWords<'a>(pub &'a Gather);

impl Writes for DeviceWords<'_> {
    type Out = [u32; NARROW_WORDS];

    const GROUPED: bool = true;

    #[inline(always)]
    fn write(
        self,
        p: Pattern,
        s: Signature,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> [u32; NARROW_WORDS] {
        narrow_words(self.0.word(gather(self.0, p)), s)
    }
}

/// A pattern's narrow words: the dense word of its seen diagonals other than the pivots,
/// low half first, then its signature `s`.
#[inline(always)]
fn narrow_words(rest: u64, s: Signature) -> [u32; NARROW_WORDS] {
    [rest as u32, (rest >> 32) as u32, u32::from(s)]
}

/// The dense word of a narrow pattern of head `head` ([`Sieve::head`]) whose bits past the
/// pivots are `rest`.
fn narrow_dense(head: u32, rest: u128) -> u128 {
    u128::from(head & ((1 << REST_AT) - 1)) | rest << (head >> REST_AT)
}

/// The dense word of 32-bit `words`, the lowest first.
fn wide_word(words: &[u32]) -> u128 {
    (words.iter().rev()).fold(0, |d, &w| d << 32 | u128::from(w))
}

/// The record the CPU's loop reads of a pattern written as `words` ([`DeviceWords`]).
fn record_of_words(words: &[u32; NARROW_WORDS]) -> Pattern {
    Gather::record_of_word(u64::from(words[0]) | u64::from(words[1]) << 32)
}

/// Counts a loaded sieve's pairs on a device, or declines (a part it cannot hold, a device
/// dropped, one busy while the CPU may count): the CPU's loops count them then.
pub trait PairDevice {
    /// What the device takes of a sieve: its tables, or its slices.
    fn takes(&self) -> Made;

    /// Whether the device is sent narrow words where they fit: tests send some only wide
    /// words, to run a device's wide path on the small boards they count, whose words are
    /// narrow.
    #[cfg(test)]
    fn takes_narrow_words(&self) -> bool {
        true
    }

    /// A ticket for the disjoint pairs of `work`, to be counted with others (a GPU's
    /// batch), or `None` where the CPU counts them.
    fn take(&self, work: &PairWork) -> Result<Option<u64>, Error>;
}

/// What a device made of a sieve's pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counted {
    /// The disjoint pairs, counted.
    Now(u64),
    /// To be counted with others (a GPU's batch): the device's ticket for them.
    Later(u64),
    /// Not counted: the other side came as cells, which neither the device nor the CPU
    /// joins here (join them, and count again).
    Unjoined,
    /// The run was stopped first.
    Stopped,
}

impl Sieve {
    /// [`Sieve::count_disjoint_on`] of a sieve loaded by [`Sieve::load_for_device`], with the
    /// pairs counted by `device`, the other side ordered and written as [`PairWork`] for it;
    /// where it declines, the tables are made here and the CPU's loops `pairs` count.
    pub fn count_disjoint_by(
        &mut self,
        pairs: PairKernel,
        others: OtherSide,
        stop: &std::sync::atomic::AtomicBool,
        device: &dyn PairDevice,
    ) -> Result<Counted, Error> {
        let short = |_| crate::memory::memory_short("a unit's half-board patterns");
        let words_past_a_device = self.seen.bits() > DENSE_WORDS * 32;
        // (a device that takes words is sent tables by no batch: a sieve grouped here
        // instead, `Sieve::group_words`, is the CPU's)
        let not_its_kind = self.made != device.takes();
        let cpu = self.len == 0 || self.lookups == 0 || words_past_a_device || not_its_kind;
        // where the device signs the other side, it is sent as it is, or as its cells
        #[cfg(test)]
        let signs = device.takes_narrow_words();
        #[cfg(not(test))]
        let signs = true;
        // (with or without pivots: a batch holds one kind of words, and a sieve of
        // another kind ends it)
        let signs = !cpu && signs && self.seen.narrow() && self.made == Made::Words;
        let others = match others {
            OtherSide::Joined(others) => others,
            OtherSide::Cells(cells) => {
                let first = cells.first_pattern();
                let Some(first) = first.filter(|_| signs) else {
                    return Ok(Counted::Unjoined);
                };
                let work = self.signing_work(pairs, (OtherSide::Cells(cells), first));
                return Ok(device
                    .take(&work)?
                    .map_or(Counted::Unjoined, Counted::Later));
            }
        };
        if cpu {
            // nothing a device needs to do (or a word it cannot hold): the CPU's loops
            self.slice_stored(pairs).map_err(short)?;
            let counted = self
                .count_disjoint_on(pairs, others, (stop, &NO_SPARE))
                .map_err(short)?;
            return Ok(counted.map_or(Counted::Stopped, Counted::Now));
        }
        if signs {
            if let Some(ticket) =
                device.take(&self.signing_work(pairs, (OtherSide::Joined(others), 0)))?
            {
                return Ok(Counted::Later(ticket));
            }
            self.slice_stored(pairs).map_err(short)?;
            let counted = self
                .count_disjoint_on(pairs, others, (stop, &NO_SPARE))
                .map_err(short)?;
            return Ok(counted.map_or(Counted::Stopped, Counted::Now));
        }
        let (mut ordered, mut signatures, mut start, mut words) = (
            std::mem::take(&mut self.sorted),
            std::mem::take(&mut self.signatures),
            std::mem::take(&mut self.start),
            std::mem::take(&mut self.device_words),
        );
        // where the CPU's loop would read records, the sort writes the device's words in
        // signature order (a device over a bus signed them itself, above, but in the
        // tests' wide words)
        let in_words = self.reads_records();
        let made = if in_words {
            ordered.clear();
            let buffers = (&mut words, &mut signatures, &mut start);
            self.order_as(pairs, DeviceWords(&self.seen.rest), others, buffers)
        } else {
            self.order(pairs, others, (&mut ordered, &mut signatures, &mut start))
        };
        let grouped = self.pivots.count > 0;
        let counted = made.map_err(short).and_then(|()| {
            let ordered_others = if grouped { &ordered[..] } else { others };
            let written = in_words.then_some(&words[..]);
            #[cfg_attr(not(test), allow(unused_mut))]
            let mut work = self.work(pairs, (ordered_others, &start), written);
            #[cfg(test)]
            if !device.takes_narrow_words() {
                work.widen();
            }
            if let Some(ticket) = device.take(&work)? {
                return Ok(Counted::Later(ticket));
            }
            self.slice_stored(pairs).map_err(short)?;
            if in_words {
                ordered.try_reserve(words.len()).map_err(short)?;
                ordered.extend(words.iter().map(record_of_words));
            }
            let ordered_others = if grouped { &ordered[..] } else { others };
            let counted = self.count_ordered(pairs, (ordered_others, &start), (stop, &NO_SPARE));
            Ok(counted.map_or(Counted::Stopped, Counted::Now))
        });
        (self.sorted, self.signatures, self.start, self.device_words) =
            (ordered, signatures, start, words);
        counted
    }

    /// Makes the lookup tables, where [`Sieve::load_for_device`] left the dense words for a
    /// device, on the CPU's loops `pairs`.
    fn slice_stored(&mut self, pairs: PairKernel) -> Result<(), std::collections::TryReserveError> {
        match self.made {
            Made::Tables => Ok(()),
            Made::Words => self.slice_words_on(pairs),
        }
    }

    /// [`Sieve::work`] with the seen diagonals of a pattern gathered by `gather`.
    #[inline(always)]
    pub(super) fn work_with<'a>(
        &'a self,
        (others, start): Ordered<'a>,
        written: Option<&'a [[u32; NARROW_WORDS]]>,
        gather: impl Fn(&Gather, Pattern) -> (u64, u64),
    ) -> PairWork<'a> {
        let seen = &self.seen;
        let pivot_bits = seen.pivot_bits() as u32;
        let narrow = seen.narrow();
        let pattern_words = if narrow { NARROW_WORDS } else { WIDE_WORDS };
        let mut patterns = Vec::with_capacity(match written {
            Some(_) => 0,
            None => others.len() * pattern_words,
        });
        let mut heads = Vec::with_capacity(if narrow { start.len() } else { 0 });
        let mut visited = 0u64;
        for (group, bounds) in start.windows(2).enumerate() {
            visited += self.covered[group] * (bounds[1] - bounds[0]) as u64;
            if narrow {
                heads.push(self.head(group));
            }
            if written.is_some() {
                continue;
            }
            let run = &others[bounds[0]..bounds[1]];
            if narrow {
                // (no pivots: the patterns as they came, gathered here)
                for &p in run {
                    let rest = seen.rest.word(gather(&seen.rest, p));
                    patterns.extend(narrow_words(rest, group as Signature));
                }
                continue;
            }
            // (wide: never records)
            for &p in run {
                let dense = {
                    let (main, anti) = gather(&seen.rest, p);
                    let rest = u128::from(main) | u128::from(anti) << seen.rest.main_count;
                    let (main, anti) = gather(&seen.pivots, p);
                    u128::from(seen.pivots.word((main, anti))) | rest << pivot_bits
                };
                patterns.extend((0..DENSE_WORDS).map(|w| (dense >> (32 * w)) as u32));
                patterns.push(group as u32);
            }
        }
        let stored = self.stored_side();
        PairWork {
            disjoint_narrow: super::portable::disjoint_narrow,
            lookups: self.lookups as u32,
            stored_len: self.len,
            blocks: self.blocks,
            stored,
            reach: &self.reach,
            reach_at: self.reach_at.iter().map(|&at| at as u32).collect(),
            patterns: match written {
                Some(words) => Cow::Borrowed(words.as_flattened()),
                None => Cow::Owned(patterns),
            },
            pattern_words,
            places: match self.made {
                Made::Tables => &[],
                Made::Words => &start[..start.len() - 1],
            },
            heads,
            visited: Some(visited),
            signing: None,
            first_spot: 0,
        }
    }

    /// The work of a device that signs the other side itself ([`Signing`]): `others` as
    /// they came, or the cells it joins them from (from the first candidate that is a
    /// pattern, `first`), with what it gathers them by; its spot checks on the loops `pairs`.
    fn signing_work<'a>(
        &'a self,
        pairs: PairKernel,
        (raw, first): (OtherSide<'a>, usize),
    ) -> PairWork<'a> {
        let seen = &self.seen;
        let heads: Vec<u32> = (0..self.reach_at.len() - 1).map(|s| self.head(s)).collect();
        let reach_at: Vec<u32> = self.reach_at.iter().map(|&at| at as u32).collect();
        // (a block's covered patterns are the stored ones, fewer than 2^32)
        let covered: Vec<u32> = self.covered.iter().map(|&c| c as u32).collect();
        PairWork {
            disjoint_narrow: Sieve::disjoint_narrow_on(pairs),
            lookups: self.lookups as u32,
            stored_len: self.len,
            blocks: self.blocks,
            stored: self.stored_side(),
            reach: &self.reach,
            reach_at,
            patterns: Cow::Borrowed(&[]),
            pattern_words: RAW_WORDS,
            places: &[],
            heads,
            visited: None,
            signing: Some(Signing {
                raw,
                rest: &seen.rest,
                signatures: &seen.signature,
                covered,
            }),
            first_spot: first,
        }
    }

    /// Signature `s`'s head ([`PairWork::heads`]) where the words are narrow: its pivots'
    /// dense bits, and where the rest starts (a pivot lookup's bits, at most 15, and the
    /// rest's start fit one).
    fn head(&self, s: usize) -> u32 {
        let gathered = self.seen.signature.gathered_of(s as Signature);
        gathered as u32 | (self.seen.pivot_bits() as u32) << REST_AT
    }

    /// What a device is sent of the stored blocks.
    fn stored_side(&self) -> StoredSide<'_> {
        match self.made {
            Made::Tables => {
                let tables = self.blocks * self.lookups * TABLE_ENTRIES;
                StoredSide::Tables(&self.data.as_slice()[..tables])
            }
            Made::Words => StoredSide::Words {
                words: self.dense.words(),
                per_pattern: self.dense.per_pattern,
                cursors: &self.cursors,
                pivots: self.pivots.count,
            },
        }
    }
}
