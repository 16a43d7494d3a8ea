//! Symmetry classification at the leaves: canonical forms of whole boards (`--unique`
//! without full symmetry) and the tie rule of the full-symmetry side frames (which image of a
//! board counts, and for how many solutions).

use super::square::{inverse, is_canonical, Symmetry};
use crate::kernel::Leaf;

/// Counts all solutions and those that are their class's canonical form.
#[derive(Default)]
pub(crate) struct CanonicalTally {
    pub all: u64,
    pub canonical: u64,
}

impl Leaf for CanonicalTally {
    const NEEDS_BOARD: bool = true;
    fn solution(&mut self, rows: &[u64]) {
        self.all += 1;
        if is_canonical(&columns(rows)[..rows.len()]) {
            self.canonical += 1;
        }
    }
}

/// The 0-based columns of one-hot rows.
pub(crate) fn columns(rows: &[u64]) -> [u8; crate::board::MAX_N] {
    let mut q = [0u8; crate::board::MAX_N];
    for (c, r) in q.iter_mut().zip(rows) {
        *c = r.trailing_zeros() as u8;
    }
    q
}

/// Leaf rule of the full-symmetry side frames: is a board the representative of its class
/// within the frame, and how many solutions does that class hold?
#[derive(Clone, Copy)]
pub(crate) struct SideRule {
    n: usize,
    b1: usize,
    /// The side columns, looked at on rows `b1` and `n-1-b1`.
    side_mask: u64,
    /// Columns `b1` and `n-1-b1`, looked at on the bottom row.
    bottom_mask: u64,
}

impl SideRule {
    pub fn new(n: usize, b1: usize) -> SideRule {
        SideRule {
            n,
            b1,
            side_mask: 1 | 1 << (n - 1),
            bottom_mask: 1 << b1 | 1 << (n - 1 - b1),
        }
    }

    /// The orbit size the board stands for (8, 4 or 2), or `None` when an image in the same
    /// frame is smaller and counts instead.
    #[inline]
    pub fn weight(&self, rows: &[u64]) -> Option<u8> {
        let (n, b1) = (self.n, self.b1);
        // Only an edge queen exactly b1 from a corner can turn the board into another board
        // of this frame; without one the eight images are distinct and all but this one lie
        // outside the frame.
        let tie = (rows[b1] | rows[n - 1 - b1]) & self.side_mask != 0
            || rows[n - 1] & self.bottom_mask != 0;
        if !tie {
            return Some(8);
        }
        let q = columns(rows);
        let q = &q[..n];
        let inv = inverse(q);
        let mut fixed = 1;
        for sym in &Symmetry::ALL[1..] {
            // an image is in this frame exactly when its first-row queen is at column b1
            if sym.image_at(q, &inv[..n], 0) as usize != b1 {
                continue;
            }
            match sym.compare_image(q, &inv[..n]) {
                std::cmp::Ordering::Less => return None,
                std::cmp::Ordering::Equal => fixed += 1,
                std::cmp::Ordering::Greater => {}
            }
        }
        Some(8 / fixed)
    }
}

/// Counts side-frame representatives by orbit size.
pub(crate) struct SideClassifier {
    rule: SideRule,
    /// Representatives found with orbit 8, 4 and 2.
    pub by_orbit: [u64; 3],
}

impl SideClassifier {
    pub fn new(n: usize, b1: usize) -> SideClassifier {
        SideClassifier {
            rule: SideRule::new(n, b1),
            by_orbit: [0; 3],
        }
    }
}

impl Leaf for SideClassifier {
    const NEEDS_BOARD: bool = true;
    #[inline]
    fn solution(&mut self, rows: &[u64]) {
        match self.rule.weight(rows) {
            Some(8) => self.by_orbit[0] += 1,
            Some(4) => self.by_orbit[1] += 1,
            Some(_) => self.by_orbit[2] += 1,
            None => {}
        }
    }
}
