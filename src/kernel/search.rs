//! What a search is given (where it starts) and what it does with each board it finds.

use crate::board::{Attacks, RowMasks};

/// Where a search starts: an `n`×`n` board under `masks` whose rows `0..row` are placed,
/// and the attacks they cast on row `row`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Start<'a> {
    pub n: usize,
    pub masks: &'a RowMasks,
    pub row: usize,
    pub attacks: Attacks,
}

#[cfg(test)]
impl<'a> Start<'a> {
    /// An empty `n`×`n` board under `masks`.
    pub fn empty(n: usize, masks: &'a RowMasks) -> Start<'a> {
        Start {
            n,
            masks,
            row: 0,
            attacks: Attacks::default(),
        }
    }
}

/// What the search does with each complete board it finds.
pub trait Leaf {
    /// Whether [`Leaf::solution`] reads the board; when false the kernel skips recording it.
    const NEEDS_BOARD: bool;
    /// Called once per solution with the one-hot column mask of each row's queen.
    fn solution(&mut self, rows: &[u64]);
    /// Records `k` solutions at once; only called when `NEEDS_BOARD` is false.
    fn add_solutions(&mut self, k: u64) {
        for _ in 0..k {
            self.solution(&[]);
        }
    }
}

/// Counts solutions, ignoring their shape.
#[derive(Default, Debug, Clone, Copy)]
pub struct Tally(pub u64);

impl Leaf for Tally {
    const NEEDS_BOARD: bool = false;
    #[inline(always)]
    fn solution(&mut self, _rows: &[u64]) {
        self.0 += 1;
    }
    #[inline(always)]
    fn add_solutions(&mut self, k: u64) {
        self.0 += k;
    }
}
