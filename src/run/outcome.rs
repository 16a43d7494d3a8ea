//! What a finished run hands back.

use crate::checkpoint::{Part, RunIdentity};
use crate::counts::Counts;
use crate::error::Error;
use crate::shard::Shard;

/// What a finished run found.
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunRequest, Shard};
/// let request = RunRequest { shard: Shard::new(0, 2).unwrap(), ..RunRequest::new(8, CountOptions::default(), None) };
/// let outcome = run(&request, &Hooks::default()).unwrap();
/// let parts: u64 = outcome.parts.iter().map(|p| p.total).sum();
/// assert_eq!(u128::from(parts), outcome.counts.total);
/// assert_eq!((outcome.resumed_subtasks, outcome.save_error), (0, None));
/// ```
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Totals over the whole shard, resumed subtasks included (`searched_nodes`: this run's).
    pub counts: Counts,
    /// Subtasks taken from the checkpoint instead of searched.
    pub resumed_subtasks: usize,
    /// The shard counted.
    pub shard: Shard,
    /// The run's identity (what shard results and checkpoints carry).
    pub identity: RunIdentity,
    /// What each subtask of the shard found, in shard order (id `shard.global(k)` at `k`).
    pub parts: Vec<Part>,
    /// The last save failed after every subtask was counted: the counts are whole, the file
    /// is older than them.
    pub save_error: Option<Error>,
}
