//! What a count found and how it ran: the result of every count.

use crate::engine::Engine;
use crate::kernel::Kernel;
use std::time::Duration;

/// The result of a count.
///
/// ```
/// let c = nqueens::count(10, &nqueens::CountOptions::default()).unwrap();
/// assert_eq!((c.n, c.total, c.unique), (10, 724, None));
/// assert!(c.nodes >= c.searched_nodes && c.subtasks > 0 && c.threads > 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Counts {
    /// Board side.
    pub n: usize,
    /// Number of solutions.
    pub total: u128,
    /// Number of fundamental solutions, when asked for.
    pub unique: Option<u128>,
    /// Queens placed by the search (resumed subtasks included).
    pub nodes: u128,
    /// Queens placed by this run (without resumed subtasks): what `nodes_per_s` measures.
    pub searched_nodes: u128,
    /// Subtasks the search was cut into.
    pub subtasks: usize,
    /// The largest subtask's share of the nodes (how finely the work is cut).
    pub largest_subtask_share: f64,
    /// Rows enumerated into subtasks.
    pub split_depth: usize,
    /// Engine that ran.
    pub engine: Engine,
    /// Kernel that ran.
    pub kernel: Kernel,
    /// Worker threads.
    pub threads: usize,
    /// `cpu`, or the GPU adapter and its backend.
    pub device: String,
    /// Subtasks the GPUs counted (the CPU counted the rest).
    pub gpu_subtasks: usize,
    /// Items the GPUs counted: the pieces they cut their subtasks into.
    pub gpu_items: u64,
    /// Dispatches to the GPUs.
    pub gpu_dispatches: u64,
    /// Pieces the GPUs were given and the CPU counted instead: items a GPU's kernel gave up
    /// (`d4`, `mirror`), sieves larger than a GPU binds (`quadrant`).
    pub gpu_given_up: u64,
    /// [`crate::Plan::digest`] of the plan counted: which subtasks the ids stand for.
    pub plan_digest: String,
    /// Bytes of the quadrant engine's tables (0 when they did not fit the memory limit and
    /// halves were searched); `None` for the other engines.
    pub tables_bytes: Option<u64>,
    /// Wall-clock time of the search.
    pub elapsed: Duration,
    /// The process's peak resident memory in bytes, where the system tells it (Linux).
    pub peak_memory: Option<u64>,
    /// What the run decided that a user may want to know (a fallback for memory), a line
    /// each.
    pub notes: Vec<String>,
    /// What `--device auto`'s race measured and chose, when the run raced (or resumed a run
    /// that did).
    pub device_choice: Option<crate::race::DeviceRace>,
}
