//! Integration tests: one crate, one module per area.

mod cli;
mod cluster;
mod counts;
mod differential;
mod engines;
mod faults;
mod golden;
#[cfg(feature = "gpu")]
mod gpu;
#[cfg(unix)]
mod hostile_inputs;
#[cfg(unix)]
mod hostile_inputs_2;
mod layering;
mod listing;
mod naive;
mod oeis;
mod quadrant;
mod scaling;
mod surface;
