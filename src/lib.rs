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
//! bitmasks ([`board`]). The first rows are enumerated into independent subtasks with stable
//! ids ([`split`]), which a rayon pool counts with a sequential kernel ([`kernel`],
//! [`parallel`]). Every count runs one pipeline ([`run`]: plan, shard, resume, execute,
//! collect) whose execution seam is a CPU pool or a GPU with CPU threads beside it. Symmetry cuts the work: mirror halving of the first row, or the full 8-fold
//! symmetry of the square ([`symmetry`]). Totals are `u128`.
#![deny(missing_docs)]

pub mod board;
pub mod checkpoint;
pub mod count;
pub mod device;
pub mod error;
mod execute;
pub mod export;
pub mod found;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod kernel;
pub mod list;
pub mod merge;
pub mod parallel;
pub mod quadrant;
pub mod render;
pub mod run;
pub mod scale;
pub mod search;
pub mod shard;
pub mod solution;
pub mod split;
pub mod symmetry;

pub use count::{count, count_completions, count_subtasks, CountOptions, Counts};
pub use device::DeviceChoice;
pub use error::Error;
pub use found::Found;
pub use kernel::KernelChoice;
pub use solution::{solutions, Solution, Solutions};
pub use split::EngineChoice;
