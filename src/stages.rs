//! The counting threads' CPU time by stage of the quadrant engine, for measuring what the
//! host does beside a GPU: kept only in a build with the `stage-times` feature (thread CPU
//! time, `CLOCK_THREAD_CPUTIME_ID`, added up over the threads; [`run`](crate::run()) prints
//! the table on the standard error when it ends), where `NQUEENS_OVER_A_BUS=1` also opens a
//! GPU that shares the host's memory (lavapipe) as one over a bus is opened, so that the
//! host's stages beside a bus GPU can be measured on it, and a GPU that writes timestamps
//! times each pass of the pair count on itself (the GPU's seconds by pass, after the
//! threads'). In other builds a stage is its closure and nothing more.

/// A stage of a quadrant count on a counting thread, timed where its work is done (the
/// joins in `half.rs`, the sieve's in `sieve/mod.rs`, the batches' in the GPU executor).
/// `Unit` holds every other but part of `Receive` (a thread also receives between units),
/// and the tables of a sieve a device declined, made on the CPU; `Send` holds what the
/// driver does on the sending thread (on lavapipe, some of its counting).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) enum Stage {
    /// A unit, from its id to its count or its tickets.
    Unit,
    /// Both halves joined from the quarter tables.
    Joins,
    /// The stored side loaded: pivots, grouping or dense words, sizes, reach (and tables
    /// where they are made here).
    StoredSide,
    /// The other side's signatures, words and order.
    OtherSide,
    /// The pairs counted on the CPU's loops.
    CpuPairs,
    /// A sieve's tables or words, and its patterns, written into a batch's upload.
    Upload,
    /// A sieve added to a batch: its word lists and spot checks.
    Batch,
    /// Of `Batch`, the spot checks worked out on the CPU.
    Checks,
    /// A batch's word lists written, its passes encoded and submitted.
    Send,
    /// A batch's sums read back and checked.
    Receive,
}

#[cfg(feature = "stage-times")]
const STAGES: [(Stage, &str); 10] = [
    (Stage::Unit, "units"),
    (Stage::Joins, "joins"),
    (Stage::StoredSide, "stored side"),
    (Stage::OtherSide, "other side"),
    (Stage::CpuPairs, "pairs on the CPU"),
    (Stage::Upload, "upload"),
    (Stage::Batch, "batch"),
    (Stage::Checks, "  spot checks"),
    (Stage::Send, "send"),
    (Stage::Receive, "receive"),
];

/// Whether this build keeps the stages' times.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) const KEPT: bool = cfg!(feature = "stage-times");

/// The passes of a batch of the pair count on a GPU, by name, whose GPU time is kept
/// ([`gpu_pass`]).
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) const GPU_PASSES: [&str; 7] = [
    "sign", "join", "places", "order", "group", "tables", "pairs",
];

/// Adds `nanos` of the GPU's time to pass `pass` (of [`GPU_PASSES`]), where this build
/// keeps the times.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) fn gpu_pass(pass: usize, nanos: u64) {
    #[cfg(feature = "stage-times")]
    kept::add_gpu(pass, nanos);
    #[cfg(not(feature = "stage-times"))]
    let _ = (pass, nanos);
}

/// What a GPU's passes count, added up where this build keeps the times: the pairs the
/// pair pass visits (a pattern of the other side times the stored patterns of the blocks
/// it reaches), the patterns of the other side and their signatures, and the candidates
/// the GPU joins.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) enum Tally {
    PairsVisited,
    Patterns,
    Signatures,
    Candidates,
}

/// Adds `n` to `tally`, where this build keeps the times.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
pub(crate) fn tally(tally: Tally, n: u64) {
    #[cfg(feature = "stage-times")]
    kept::TALLIES[tally as usize].fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "stage-times"))]
    let _ = (tally, n);
}

/// `f`'s result, its thread's CPU time added to `stage` where this build keeps the times.
#[inline(always)]
pub(crate) fn time<R>(stage: Stage, f: impl FnOnce() -> R) -> R {
    #[cfg(feature = "stage-times")]
    {
        let start = kept::now();
        let result = f();
        kept::add(stage, start);
        result
    }
    #[cfg(not(feature = "stage-times"))]
    {
        let _ = stage;
        f()
    }
}

/// Prints the stages' times so far on the standard error, where this build keeps them.
pub(crate) fn report() {
    #[cfg(feature = "stage-times")]
    eprint!("{}", kept::table());
}

/// Whether a GPU that shares the host's memory is to be opened as one over a bus.
#[cfg(feature = "gpu")]
pub(crate) fn over_a_bus() -> bool {
    let var = |name: &str| std::env::var(name).ok();
    KEPT && crate::environment::set(var, "NQUEENS_OVER_A_BUS").is_some_and(|v| v.trim() == "1")
}

#[cfg(feature = "stage-times")]
mod kept {
    use super::{Stage, GPU_PASSES, STAGES};
    use std::sync::atomic::{AtomicU64, Ordering};

    static NANOS: [AtomicU64; STAGES.len()] = [const { AtomicU64::new(0) }; STAGES.len()];
    static CALLS: [AtomicU64; STAGES.len()] = [const { AtomicU64::new(0) }; STAGES.len()];
    static GPU_NANOS: [AtomicU64; GPU_PASSES.len()] =
        [const { AtomicU64::new(0) }; GPU_PASSES.len()];
    static GPU_CALLS: [AtomicU64; GPU_PASSES.len()] =
        [const { AtomicU64::new(0) }; GPU_PASSES.len()];
    pub(super) static TALLIES: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];

    /// This thread's CPU time so far.
    pub(super) fn now() -> cpu_time::ThreadTime {
        cpu_time::ThreadTime::now()
    }

    pub(super) fn add(stage: Stage, start: cpu_time::ThreadTime) {
        let nanos = start.elapsed().as_nanos() as u64;
        NANOS[stage as usize].fetch_add(nanos, Ordering::Relaxed);
        CALLS[stage as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn add_gpu(pass: usize, nanos: u64) {
        GPU_NANOS[pass].fetch_add(nanos, Ordering::Relaxed);
        GPU_CALLS[pass].fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn table() -> String {
        let mut table = String::from("stage               thread CPU s        calls\n");
        for (stage, name) in STAGES {
            let seconds = NANOS[stage as usize].load(Ordering::Relaxed) as f64 * 1e-9;
            let calls = CALLS[stage as usize].load(Ordering::Relaxed);
            table += &format!("{name:<18} {seconds:>14.2} {calls:>12}\n");
        }
        if GPU_CALLS
            .iter()
            .any(|calls| calls.load(Ordering::Relaxed) > 0)
        {
            table += "GPU pass                    GPU s       passes\n";
            for (pass, name) in GPU_PASSES.iter().enumerate() {
                let seconds = GPU_NANOS[pass].load(Ordering::Relaxed) as f64 * 1e-9;
                let calls = GPU_CALLS[pass].load(Ordering::Relaxed);
                table += &format!("{name:<18} {seconds:>14.2} {calls:>12}\n");
            }
            let names = ["pairs visited", "patterns", "signatures", "candidates"];
            for (name, tally) in names.iter().zip(&TALLIES) {
                let n = tally.load(Ordering::Relaxed) as f64;
                table += &format!("{name:<18} {n:>14.4e}\n");
            }
        }
        table
    }
}
