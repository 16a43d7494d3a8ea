//! Integration tests: one crate, one module per area.

mod answers;
mod checkpoint;
mod cli;
mod cluster;
mod counts;
mod differential;
mod engines;
mod estimate;
mod golden;
#[cfg(feature = "gpu")]
mod gpu;
mod layering;
mod listing;
mod memory;
mod merge;
mod naive;
mod oeis;
mod quadrant;
#[cfg(feature = "gpu")]
mod race;
mod scale;
mod signals;
mod surface;
mod util;
