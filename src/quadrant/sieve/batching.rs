//! How the other side is taken: runs of one signature, and batches of runs where the stored
//! blocks are many.

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

/// The counting loop's buffers, kept from unit to unit: each pattern of a batch's entries,
/// and for each run of it, how many of its own lookups each pattern reads and its patterns
/// in increasing order of that.
#[derive(Clone, Debug, Default)]
pub(super) struct BatchBuffers {
    pub(super) entries: Vec<u32>,
    pub(super) reads: Vec<RunReads>,
    pub(super) order: Vec<RunOrder>,
}

/// How the counting loop batches runs (see [`count_pairs`](super::pairs::count_pairs)):
/// blocks visited a stretch at a time where there are more than `stretch`, batches of at most `patterns` patterns and
/// `runs` runs (at most [`BATCH`] and [`BATCH_RUNS`]: the tests take fewer).
#[derive(Clone, Copy, Debug)]
pub(super) struct Batching {
    pub(super) stretch: usize,
    pub(super) patterns: usize,
    pub(super) runs: usize,
}

impl Default for Batching {
    /// The sizes measured best.
    fn default() -> Batching {
        let (stretch, patterns, runs) = (STRETCH_BLOCKS, BATCH, BATCH_RUNS);
        Batching {
            stretch,
            patterns,
            runs,
        }
    }
}
