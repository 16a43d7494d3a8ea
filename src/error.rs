//! The library's error type.

use thiserror::Error as ThisError;

/// What can go wrong when asking the library for a count or a list.
///
/// Every variant is a problem with the request (a usage error in CLI terms) except
/// [`Error::Interrupted`], which reports a run stopped on request.
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
    /// A split depth that the board cannot take.
    #[error("split depth must be from 1 to {max}, got {depth}")]
    BadSplitDepth {
        /// What was asked.
        depth: usize,
        /// The largest depth allowed for this board.
        max: usize,
    },
    /// Options that cannot be combined.
    #[error("{0}")]
    Conflict(String),
    /// A kernel that this CPU cannot run.
    #[error("{0}")]
    KernelUnavailable(String),
    /// A shard that does not exist.
    #[error("invalid shard: {0}")]
    BadShard(String),
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
}

impl Error {
    /// Whether the error is a problem with the request (exit code 2) rather than a failure
    /// while running (exit code 1) or an interruption (130).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Error::Checkpoint { .. } | Error::Merge(_) | Error::Mismatch(_) | Error::Interrupted
        )
    }
}
