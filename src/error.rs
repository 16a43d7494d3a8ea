//! The library's error type.

use crate::engine::Engine;
use thiserror::Error as ThisError;

/// What can go wrong when asking the library for a count or a list.
///
/// Most variants are problems with the request (usage errors in CLI terms, exit 2);
/// [`Error::is_usage`] tells them from failures while running (exit 1) and
/// [`Error::Interrupted`] (a run stopped on request).
///
/// ```
/// use nqueens::{count, CountOptions, Error};
/// let e = count(33, &CountOptions::default()).unwrap_err();
/// assert_eq!(e, Error::BadN(33));
/// assert!(e.is_usage());
/// assert_eq!(e.to_string(), "N must be an integer from 1 to 32, got 33");
/// ```
#[derive(Debug, ThisError, Clone, PartialEq, Eq)]
pub enum Error {
    /// The board side is outside 1..=32.
    #[error("N must be an integer from 1 to 32, got {0}")]
    BadN(usize),
    /// A prefix that is off the board or attacks itself.
    #[error("invalid prefix: {0}")]
    BadPrefix(String),
    /// A thread count of zero.
    #[error("threads must be at least 1")]
    ZeroThreads,
    /// A thread count far beyond any machine.
    #[error("{threads} threads is more than the {max} allowed")]
    TooManyThreads {
        /// What was asked.
        threads: usize,
        /// The most allowed ([`crate::parallel::MAX_THREADS`]).
        max: usize,
    },
    /// A split depth that the board cannot take.
    #[error("split depth must be from 1 to {max}, got {depth}")]
    BadSplitDepth {
        /// What was asked.
        depth: usize,
        /// The largest depth allowed for this board.
        max: usize,
    },
    /// A split depth that gives too many subtasks.
    #[error("split depth {depth} gives more than {max} subtasks: this board takes split depths from 1 to {deepest}")]
    TooManySubtasks {
        /// What was asked (or the default's depth).
        depth: usize,
        /// The most subtasks a plan may hold.
        max: usize,
        /// The deepest split that gives no more than `max` subtasks.
        deepest: usize,
    },
    /// An engine asked for by name together with a prefix, which is counted without symmetry.
    #[error("a prefix is counted without symmetry: engine {} cannot take one (use engine auto)", .0.name())]
    EngineWithPrefix(Engine),
    /// An engine asked for by name on a board too small for it.
    #[error("engine {} needs N of at least {min}, got {n} (use engine auto or mirror)", .engine.name())]
    EngineTooSmall {
        /// The engine asked for.
        engine: Engine,
        /// The board side.
        n: usize,
        /// The smallest board it takes.
        min: usize,
    },
    /// An engine asked for by name on a board too large for it.
    #[error("engine {} takes N up to {max}, got {n}: a count past it would cost ten million core-hours or more (engine d4 takes it, slower still)", .engine.name())]
    EngineTooLarge {
        /// The engine asked for.
        engine: Engine,
        /// The board side.
        n: usize,
        /// The largest board it takes.
        max: usize,
    },
    /// Fundamental solutions asked of an engine that counts totals only.
    #[error("engine {} counts totals only, not fundamental solutions (use engine auto, d4 or mirror)", .0.name())]
    TotalsOnly(Engine),
    /// A subtask id past the end of its plan.
    #[error("subtask {id} does not exist: the plan has {subtasks}")]
    NoSuchSubtask {
        /// The id asked for.
        id: usize,
        /// How many subtasks the plan has.
        subtasks: usize,
    },
    /// Boards asked of an engine that does not search boards row by row.
    #[error("engine {} pairs half-boards: it has no boards to show", .0.name())]
    NoBoards(Engine),
    /// A GPU adapter index that the machine does not have.
    #[error(
        "GPU adapter {index} does not exist: this machine has {found} (nqueens devices lists them)"
    )]
    NoSuchGpu {
        /// The index asked for.
        index: usize,
        /// How many adapters there are.
        found: usize,
    },
    /// GPU adapters named for a count on the CPU only.
    #[error(
        "GPU adapters were named for a count on the CPU only (use device auto, gpu or gpu-only)"
    )]
    GpusOnCpu,
    /// A split depth given to an engine that is not split by rows.
    #[error("engine {} is not split by rows: it takes no split depth", .0.name())]
    NoSplitDepth(Engine),
    /// A failure while running (threads that cannot start, a file that cannot be written).
    #[error("{0}")]
    Failed(String),
    /// What a GPU's driver would map does not fit the process's address-space limit
    /// (`ulimit -v`): refused before the driver runs into it.
    #[error("{0}")]
    NoRoom(String),
    /// A kernel that this CPU cannot run.
    #[error("kernel {kernel}: {why} (use kernel {usable})")]
    KernelUnavailable {
        /// The kernel asked for.
        kernel: &'static str,
        /// Why it cannot run.
        why: &'static str,
        /// The kernels this engine runs on this CPU, as a person lists them (`auto, avx2 or
        /// scalar`).
        usable: &'static str,
    },
    /// A shard that does not exist.
    #[error("invalid shard: {0}")]
    BadShard(String),
    /// A shard that a batch scheduler's environment variables select badly (one missing,
    /// two that disagree, a value that is no shard).
    #[error("the shard from the environment: {0}")]
    BadShardEnv(String),
    /// An environment variable with a value it does not take (`NQUEENS_THREADS`, the
    /// variables of `--device auto`'s race).
    #[error("{0}")]
    BadEnv(String),
    /// A checkpoint that cannot be used (corrupt, truncated, foreign) or cannot be written.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// Shard results that do not add up to one run.
    #[error("merge: {0}")]
    Merge(String),
    /// Runs that should agree counted different numbers.
    #[error("count mismatch: {0}")]
    Mismatch(String),
    /// The run was cancelled before all subtasks finished.
    #[error("interrupted")]
    Interrupted,
    /// The run was cancelled and the save that should have kept its finished subtasks
    /// failed: the checkpoint holds what an earlier save wrote.
    #[error("interrupted, and the last save failed: checkpoint {path}: {reason}")]
    InterruptedUnsaved {
        /// The checkpoint.
        path: String,
        /// Why the save failed, and what the file still holds.
        reason: String,
    },
}

impl Error {
    /// Whether the error is a problem with the request (exit code 2) rather than a failure
    /// while running (exit code 1) or an interruption (130).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Error::Checkpoint { .. }
                | Error::Merge(_)
                | Error::Mismatch(_)
                | Error::Interrupted
                | Error::InterruptedUnsaved { .. }
                | Error::Failed(_)
                | Error::NoRoom(_)
        )
    }
}
