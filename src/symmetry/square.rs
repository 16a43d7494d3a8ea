//! The eight symmetries of the square (the dihedral group D4) acting on solutions.
//!
//! A solution is a column sequence: `q[r]` is the 0-based column of the queen in row `r`.
//! Every symmetry maps a solution to a solution; the *canonical form* of a solution is the
//! lexicographically smallest of its eight images, and the *orbit size* is how many distinct
//! solutions those images are (8, 4 or 2 for n > 1).

use crate::board::MAX_N;

/// One of the eight symmetries of the square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symmetry {
    /// Leaves the board as it is.
    Identity,
    /// Quarter turn clockwise.
    Rotate90,
    /// Half turn.
    Rotate180,
    /// Quarter turn counter-clockwise.
    Rotate270,
    /// Mirror left-right.
    FlipColumns,
    /// Mirror top-bottom.
    FlipRows,
    /// Mirror through the main diagonal.
    Transpose,
    /// Mirror through the anti-diagonal.
    AntiTranspose,
}

impl Symmetry {
    /// All eight, identity first.
    pub const ALL: [Symmetry; 8] = [
        Symmetry::Identity,
        Symmetry::Rotate90,
        Symmetry::Rotate180,
        Symmetry::Rotate270,
        Symmetry::FlipColumns,
        Symmetry::FlipRows,
        Symmetry::Transpose,
        Symmetry::AntiTranspose,
    ];

    /// Where the square `(row, col)` of an `n`×`n` board goes.
    #[inline]
    pub fn map(self, n: usize, row: usize, col: usize) -> (usize, usize) {
        let last = n - 1;
        match self {
            Symmetry::Identity => (row, col),
            Symmetry::Rotate90 => (col, last - row),
            Symmetry::Rotate180 => (last - row, last - col),
            Symmetry::Rotate270 => (last - col, row),
            Symmetry::FlipColumns => (row, last - col),
            Symmetry::FlipRows => (last - row, col),
            Symmetry::Transpose => (col, row),
            Symmetry::AntiTranspose => (last - col, last - row),
        }
    }

    /// Entry `i` of the image of solution `q`, given `inverse` (`inverse[c]` = the row of the
    /// queen in column `c`): no need to build the whole image to compare it.
    #[inline]
    pub fn image_at(self, q: &[u8], inverse: &[u8], i: usize) -> u8 {
        let last = (q.len() - 1) as u8;
        match self {
            Symmetry::Identity => q[i],
            Symmetry::Rotate90 => last - inverse[i],
            Symmetry::Rotate180 => last - q[q.len() - 1 - i],
            Symmetry::Rotate270 => inverse[q.len() - 1 - i],
            Symmetry::FlipColumns => last - q[i],
            Symmetry::FlipRows => q[q.len() - 1 - i],
            Symmetry::Transpose => inverse[i],
            Symmetry::AntiTranspose => last - inverse[q.len() - 1 - i],
        }
    }

    /// How the image of `q` compares with `q`, entry by entry, stopping at the first
    /// difference.
    #[inline]
    pub fn compare_image(self, q: &[u8], inverse: &[u8]) -> std::cmp::Ordering {
        for (i, &own) in q.iter().enumerate() {
            let other = self.image_at(q, inverse, i);
            if other != own {
                return other.cmp(&own);
            }
        }
        std::cmp::Ordering::Equal
    }

    /// The image of a complete solution `q` (one queen per row), written into `out`.
    pub fn apply(self, q: &[u8], out: &mut [u8]) {
        let n = q.len();
        for (row, &col) in q.iter().enumerate() {
            let (r, c) = self.map(n, row, col as usize);
            out[r] = c as u8;
        }
    }
}

/// The canonical form of solution `q` and its orbit size.
pub fn canonical(q: &[u8]) -> (Vec<u8>, usize) {
    let n = q.len();
    let mut best = [0u8; MAX_N];
    best[..n].copy_from_slice(q);
    let mut image = [0u8; MAX_N];
    let mut fixed = 0;
    for sym in Symmetry::ALL {
        sym.apply(q, &mut image[..n]);
        if image[..n] == q[..] {
            fixed += 1;
        }
        if image[..n] < best[..n] {
            best[..n].copy_from_slice(&image[..n]);
        }
    }
    (best[..n].to_vec(), 8 / fixed)
}

/// `inverse[c]` = the row of the queen in column `c` of solution `q`.
pub fn inverse(q: &[u8]) -> [u8; MAX_N] {
    let mut inv = [0u8; MAX_N];
    for (row, &col) in q.iter().enumerate() {
        inv[col as usize] = row as u8;
    }
    inv
}

/// Whether `q` is the canonical form of its class (no image is lexicographically smaller).
pub fn is_canonical(q: &[u8]) -> bool {
    let inv = inverse(q);
    Symmetry::ALL[1..]
        .iter()
        .all(|sym| sym.compare_image(q, &inv[..q.len()]) != std::cmp::Ordering::Less)
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn canonical_example() {
        use crate::symmetry::canonical;
        // 0-based columns of the 6x6 solution "2 4 6 1 3 5"
        let (form, orbit) = canonical(&[1, 3, 5, 0, 2, 4]);
        assert_eq!(form, vec![1, 3, 5, 0, 2, 4]);
        assert_eq!(orbit, 4);
    }

    #[test]
    fn is_canonical_example() {
        assert!(crate::symmetry::is_canonical(&[1, 3, 5, 0, 2, 4]));
        assert!(!crate::symmetry::is_canonical(&[4, 2, 0, 5, 3, 1]));
    }
}
