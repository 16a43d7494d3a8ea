//! How the other side is taken: runs of one signature, and batches of runs where the stored
//! blocks are many.

use std::sync::{Mutex, MutexGuard};

/// Patterns of one signature whose lookups are worked out before their blocks are visited:
/// a block's tables then stay in the nearest cache while the whole run passes over them
/// (measured at N = 22, Zen 5: 256 took 0.91 times as long as 32, 0.985 times 128).
pub(super) const RUN: usize = 256;

/// How many lookups each pattern of a run reads (`u8::MAX` past the run's end).
pub(super) type RunReads = [u8; RUN];

/// A run's patterns in increasing reads (indices), with room for a last store of 64.
pub(super) type RunOrder = [u8; RUN + 64];

/// Patterns of the other side whose entries are worked out together, a batch: its runs pass
/// over the stored blocks a stretch at a time, so that a block's tables, loaded once, serve
/// every run of the batch that reaches it. A run alone holds too few patterns to pay for
/// loading them (40 on average at N = 24 with fifteen pivots), and each visit took the
/// longer the more blocks were stored: 1.7 ns with 2^18 stored patterns at N = 24, 3.7 ns
/// with 2^22 (Zen 4), 2.9 ns once batched. 2048 and 8192 patterns were alike or slower.
pub(super) const BATCH: usize = 4096;

/// Most runs in a batch (short runs of many signatures, each with its own reach).
pub(super) const BATCH_RUNS: usize = 128;

/// Stored blocks a batch visits at a time (about 3 MB of tables, of which the batch's runs
/// reach a few hundred kilobytes): 128 and 512 were alike, 64 slower (a run then reaches too
/// few blocks of a stretch to visit four at a time).
pub(super) const STRETCH_BLOCKS: usize = 256;

/// Fewest pairs of a load (stored patterns times the other side's) split over threads lent
/// to the unit ([`Spare`](crate::parallel::Spare)): about a millisecond of counting, where
/// a thread's start and buffers cost a few dozen microseconds.
pub(super) const SPLIT_PAIRS: u64 = 1 << 36;

/// Pieces a split load's other side is cut into for each thread that may count it, taken
/// in turn by whichever thread is free: the signatures' costs differ, so many small pieces
/// keep the threads together to the end.
pub(super) const PIECES_PER_THREAD: usize = 32;

/// The fewest patterns of a piece (where a signature is not longer): a piece ends its last
/// batch short, so it holds a few batches at least.
pub(super) const LEAST_PIECE: usize = 4 * BATCH;

/// The counting loop's buffers, kept from unit to unit: each pattern of a batch's entries,
/// and for each run of it, how many of its own lookups each pattern reads and its patterns
/// in increasing order of that.
#[derive(Clone, Debug, Default)]
pub(super) struct BatchBuffers {
    pub(super) entries: Vec<u32>,
    pub(super) reads: Vec<RunReads>,
    pub(super) order: Vec<RunOrder>,
}

/// The loading thread's [`BatchBuffers`], which a load's count borrows (a lent thread
/// counts with its own); a copy of the sieve starts with empty ones.
#[derive(Debug, Default)]
pub(super) struct Scratch(Mutex<BatchBuffers>);

impl Clone for Scratch {
    fn clone(&self) -> Scratch {
        Scratch::default()
    }
}

impl Scratch {
    /// The buffers, held until the guard is dropped.
    pub(super) fn lock(&self) -> MutexGuard<'_, BatchBuffers> {
        crate::parallel::lock(&self.0)
    }
}

/// How the counting loop batches runs (see [`count_pairs`](super::pairs::count_pairs)):
/// blocks visited a stretch at a time where there are more than `stretch`, batches of at
/// most `patterns` patterns and `runs` runs (at most [`BATCH`] and [`BATCH_RUNS`]: the tests
/// take fewer); a load of `split` pairs or more split over lent threads ([`SPLIT_PAIRS`]),
/// in pieces of `piece` patterns at least ([`LEAST_PIECE`]).
#[derive(Clone, Copy, Debug)]
pub(super) struct Batching {
    pub(super) stretch: usize,
    pub(super) patterns: usize,
    pub(super) runs: usize,
    pub(super) split: u64,
    pub(super) piece: usize,
}

impl Default for Batching {
    /// The sizes measured best.
    fn default() -> Batching {
        let (stretch, patterns, runs) = (STRETCH_BLOCKS, BATCH, BATCH_RUNS);
        Batching {
            stretch,
            patterns,
            runs,
            split: SPLIT_PAIRS,
            piece: LEAST_PIECE,
        }
    }
}
