//! Sieves gathered for one dispatch of the pair kernel (`pairs.wgsl`): their lookup tables
//! one after another, their reaches moved past the earlier sieves' tables, their signatures
//! past the earlier sieves' signatures, and each pattern's words (its dense word, then its
//! signature in the batch). Many small sieves then cost one dispatch (N = 17 has 54,779 of
//! a few thousand patterns each), and the kernel never needs to know where one ends: it reads
//! as many lookups as the batch's sieve with the most (a pattern's dense word is 0 past its
//! own sieve's, and an empty subset reads nothing), the same count in every lane.

use crate::quadrant::{PairWork, DENSE_WORDS, LOOKUP_ENTRIES, PATTERN_WORDS, SUBSET_BITS};

/// Bytes of one entry of the lookup tables (256 bits).
const ENTRY_BYTES: usize = 32;

/// One sieve of a batch: its patterns, the pairs their reaches visit, and the ticket it was
/// given.
#[derive(Clone, Copy, Debug)]
pub struct Sieved {
    pub first: usize,
    pub len: usize,
    pub visited: u64,
    pub ticket: u64,
}

/// Sieves gathered for one dispatch.
#[derive(Debug, Default)]
pub struct PairBatch {
    /// The lookup tables, each entry's 256 bits as four little-endian 64-bit words.
    pub tables: Vec<u8>,
    /// Every sieve's reached blocks, each as its first entry in `tables`.
    pub reach: Vec<u32>,
    /// For each signature of the batch, where its reach starts and ends in `reach`.
    pub reach_at: Vec<u32>,
    /// [`PATTERN_WORDS`] words for each pattern (its dense word, then its signature in the
    /// batch).
    pub patterns: Vec<u32>,
    /// The most lookups of a sieve of the batch.
    pub lookups: u32,
    pub sieves: Vec<Sieved>,
}

impl PairBatch {
    /// Adds `work`'s sieve, under `ticket`.
    pub fn push(&mut self, work: &PairWork, ticket: u64) {
        let entry_base = (self.tables.len() / ENTRY_BYTES) as u32;
        work.write_tables(|bytes| self.tables.extend_from_slice(bytes));
        let reach_base = self.reach.len() as u32;
        self.reach
            .extend(work.reach.iter().map(|&block| block + entry_base));
        let signature_base = (self.reach_at.len() / 2) as u32;
        for bounds in work.reach_at.windows(2) {
            self.reach_at
                .extend([reach_base + bounds[0], reach_base + bounds[1]]);
        }
        let first = self.len();
        self.lookups = self.lookups.max(work.lookups);
        for words in work.patterns.chunks_exact(PATTERN_WORDS) {
            let signature = signature_base + words[DENSE_WORDS];
            self.patterns.extend_from_slice(&words[..DENSE_WORDS]);
            self.patterns.push(signature);
        }
        self.sieves.push(Sieved {
            first,
            len: work.len(),
            visited: work.visited,
            ticket,
        });
    }

    /// Patterns in the batch.
    pub fn len(&self) -> usize {
        self.patterns.len() / PATTERN_WORDS
    }

    pub fn is_empty(&self) -> bool {
        self.sieves.is_empty()
    }

    /// The largest buffer the batch would bind with `work` added, in bytes.
    pub fn largest_with(&self, work: &PairWork) -> u64 {
        let tables = self.tables.len() as u64 + work.table_bytes();
        let words = |len: usize| (len * 4) as u64;
        let patterns = words(self.patterns.len() + work.patterns.len());
        let reach = words(self.reach.len() + work.reach.len());
        tables.max(patterns).max(reach)
    }

    pub fn clear(&mut self) {
        self.tables.clear();
        self.reach.clear();
        self.reach_at.clear();
        self.patterns.clear();
        self.sieves.clear();
        self.lookups = 0;
    }

    /// Pattern `i`'s clashes as the kernel counts them, worked out on the CPU: a spot
    /// check's answer.
    pub fn clashes_of(&self, i: usize) -> u32 {
        let words = &self.patterns[i * PATTERN_WORDS..][..PATTERN_WORDS];
        let dense =
            (words[..DENSE_WORDS].iter().rev()).fold(0u128, |d, &w| d << 32 | u128::from(w));
        let signature = words[DENSE_WORDS] as usize;
        let lookups = self.lookups as usize;
        let reach =
            self.reach_at[2 * signature] as usize..self.reach_at[2 * signature + 1] as usize;
        let word = |entry: usize, w: usize| {
            let at = entry * ENTRY_BYTES + 8 * w;
            u64::from_le_bytes(self.tables[at..at + 8].try_into().expect("8 bytes"))
        };
        let mut clashes = 0;
        for &block in &self.reach[reach] {
            let mut clash = [0u64; 4];
            for l in 0..lookups {
                let subset = (dense >> (l as u32 * SUBSET_BITS)) as usize & (LOOKUP_ENTRIES - 1);
                if subset == 0 {
                    continue;
                }
                let entry = block as usize + l * LOOKUP_ENTRIES + subset;
                for (w, c) in clash.iter_mut().enumerate() {
                    *c |= word(entry, w);
                }
            }
            clashes += clash.iter().map(|w| w.count_ones()).sum::<u32>();
        }
        clashes
    }
}
