//! The quadrant engine's GPU backend: its pair counts' sieves gathered in batches
//! ([`batch`]), each thread's batches sent through a queue of buffers ([`queue`]) to the
//! kernels that sign, join, place and order the other side, make the tables and count the
//! pairs ([`kernels`]), the quarter tables a device holds ([`quarters`]), what a device
//! keeps for the pair count ([`gpu`]), and the executor that hands a unit's sieves to the
//! GPUs from the CPU's threads ([`executor`]).

pub(crate) mod batch;
pub(crate) mod executor;
pub(crate) mod gpu;
pub(crate) mod kernels;
pub(crate) mod pass_times;
pub(crate) mod quarters;
pub(crate) mod queue;
pub(crate) mod wire;
