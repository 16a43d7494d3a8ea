//! Symmetries of the board: the eight of the square ([`square`]) and their use at the
//! leaves of a search ([`classify`]).

pub(crate) mod classify;
mod square;

pub use square::{canonical, is_canonical};
