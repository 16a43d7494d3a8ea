//! # nqueens
//!
//! Counts and lists the solutions of the N-Queens problem (n queens on an n×n board, no two
//! sharing a row, column or diagonal) for n from 1 to 32, on every core.
//!
//! ```
//! let counts = nqueens::count(8, &nqueens::CountOptions::default()).unwrap();
//! assert_eq!(counts.total, 92);
//! ```
//!
//! Rows are placed top to bottom; occupied columns and both diagonal directions are `u64`
//! bitmasks. The first rows are enumerated into independent subtasks with stable ids (a
//! [`Plan`]), which worker threads count with a sequential kernel ([`Kernel`]). Every count
//! runs one pipeline ([`run()`]: plan, shard, resume, execute, collect) whose execution seam is
//! a CPU pool or a GPU with CPU threads beside it. Symmetry cuts the work: mirror halving of
//! the first row, or the full 8-fold symmetry of the square ([`Engine`]). Totals are `u128`.
//!
//! The API, by use:
//! - counting: [`count()`], [`count_completions()`], [`count_subtasks()`] with
//!   [`CountOptions`] (engine, kernel, device choices) giving [`Counts`];
//! - long and distributed runs: [`run()`] with [`RunRequest`] (a [`Shard`] of a [`Plan`], a
//!   checkpoint file) and [`Hooks`] (cancel, progress), giving a [`RunOutcome`]; [`merge()`],
//!   [`read_records`] and [`verify`] add shard results up and recount samples of them;
//! - listing: [`solutions()`], [`Solution`], and [`Lister`] for parallel, ordered output in a
//!   [`Format`];
//! - what the program prints: [`export`];
//! - errors: [`Error`] (usage errors, runtime failures and interruption apart).
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod adapter;
mod board;
mod checkpoint;
mod counts;
mod device;
mod engine;
mod environment;
mod error;
mod execute;
pub mod export;
mod found;
#[cfg(feature = "gpu")]
mod gpu;
mod kernel;
mod list;
mod memory;
mod merge;
mod options;
mod parallel;
mod plan;
mod quadrant;
mod race;
mod random;
mod resolved;
mod run;
mod shard;
mod solution;
mod stages;
mod subtask;
mod symmetry;

pub use adapter::Adapter;
pub use board::MAX_N;
pub use checkpoint::{Part, RunIdentity};
pub use counts::Counts;
pub use device::DeviceChoice;
pub use device::{gpu_adapters, probe_gpu};
pub use engine::{Engine, EngineChoice, D4_MIN_N};
pub use error::Error;
pub use export::list::Format;
pub use found::Found;
pub use kernel::{Kernel, KernelChoice};
pub use list::{ListOptions, Lister};
pub use merge::{merge, read_records, verify, MergeOptions};
pub use options::CountOptions;
pub use parallel::MAX_THREADS;
pub use plan::{Plan, Subtask};
pub use race::{DeviceRace, RaceOptions};
pub use run::{
    count, count_completions, count_subtasks, run, Estimate, Hooks, Progress, RunOutcome,
    RunRequest,
};
pub use shard::Shard;
pub use solution::{solutions, Solution, Solutions};
