//! What a count finds: the result type every layer shares (kernels, executors, checkpoints,
//! shards), at the bottom of the dependencies.

use std::ops::AddAssign;

/// What one subtask (or a sum of them) found.
///
/// Per subtask the numbers fit in `u64` (a subtask with 2^64 solutions would take centuries);
/// sums over subtasks are `u128`.
///
/// ```
/// use nqueens::{EngineChoice, Found, Kernel, Plan};
/// let plan = Plan::new(8, EngineChoice::D4, None, Some(2)).unwrap();
/// let sum: Found = (0..plan.len())
///     .map(|id| plan.count_subtask(id, true, Kernel::Scalar).unwrap())
///     .sum();
/// assert_eq!((sum.total, sum.unique), (92, 12));
/// assert!(sum.max_subtask_nodes <= sum.nodes);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Solutions, weighted by symmetry.
    pub total: u128,
    /// Fundamental solutions (classes under the 8 symmetries); only meaningful when asked for.
    pub unique: u128,
    /// Queens placed by the search.
    pub nodes: u128,
    /// The most nodes any one subtask took (a maximum, not a sum).
    pub max_subtask_nodes: u128,
}

impl AddAssign for Found {
    fn add_assign(&mut self, other: Found) {
        self.total += other.total;
        self.unique += other.unique;
        self.nodes += other.nodes;
        self.max_subtask_nodes = self.max_subtask_nodes.max(other.max_subtask_nodes);
    }
}

impl std::iter::Sum for Found {
    fn sum<I: Iterator<Item = Found>>(iter: I) -> Found {
        let mut acc = Found::default();
        for f in iter {
            acc += f;
        }
        acc
    }
}
