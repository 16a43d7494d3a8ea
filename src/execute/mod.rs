//! The execution seam: where the subtasks of a plan are counted.
//!
//! An [`Executor`] takes a batch of subtask ids of a plan and reports `(id, result)` for each
//! subtask it finishes. Everything that is written once for every way of counting (shards,
//! checkpoints, progress, cancellation, sums) lives above it, in [`crate::run()`]; a new
//! backend is one more implementation of the trait ([`contract`]), chosen where the run
//! opens its executor (`run/open.rs`). The CPU's is [`cpu`]; the GPU backends' are in
//! `gpu/rows/` and `gpu/pairs/`.

pub(crate) mod contract;
pub(crate) mod cpu;

pub(crate) use contract::{Executed, Executor, Facts, Job};
