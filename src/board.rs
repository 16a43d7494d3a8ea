//! The partial board: queens placed in the first rows, plus the constraints on the rest.
//!
//! Every unit of work in nqueens (a mirror-halving prefix, a full-symmetry frame, a shard, a
//! checkpointed subtask) is a [`PartialBoard`]: the search only ever asks "how many ways can the
//! remaining rows be filled, given these masks?".
//!
//! Masks are `u64` with bit `c` standing for column `c` (0-based, column 0 = the leftmost
//! column, the `1` of the 1-based sequences printed by `list`). Invariant: bits at or above `n`
//! are zero in every allowed mask, so `allowed[row] & !(cols | ld | rd)` is the exact set of
//! free squares of a row even though the shifted diagonals carry bits past the board.

use crate::error::Error;

/// The largest supported board side: the masks are `u64`, and a diagonal shifted left once per
/// row reaches at most bit `2 * MAX_N - 1 = 63`, so no bit is ever lost.
///
/// A bound: [`crate::Error`]'s example shows the refusal past it.
pub const MAX_N: usize = 32;

/// All columns of an `n`-wide board.
#[inline]
pub fn full_mask(n: usize) -> u64 {
    debug_assert!((1..=MAX_N).contains(&n));
    (1u64 << n) - 1
}

/// Checks that `n` is a supported board side (1..=32).
pub fn check_n(n: usize) -> Result<(), Error> {
    if (1..=MAX_N).contains(&n) {
        Ok(())
    } else {
        Err(Error::BadN(n))
    }
}

/// The attack state seen by the next row: occupied columns and both diagonal directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attacks {
    /// Occupied columns.
    pub cols: u64,
    /// Diagonals running down and to the right (shifted left once per row).
    pub right_down: u64,
    /// Diagonals running down and to the left (shifted right once per row).
    pub left_down: u64,
}

impl Attacks {
    /// The squares of the next row under attack.
    #[inline]
    pub fn blocked(self) -> u64 {
        self.cols | self.right_down | self.left_down
    }

    /// The attack state for the row below after a queen is put on `bit`.
    #[inline]
    pub fn place(self, bit: u64) -> Attacks {
        Attacks {
            cols: self.cols | bit,
            right_down: (self.right_down | bit) << 1,
            left_down: (self.left_down | bit) >> 1,
        }
    }
}

/// Per-row constraints shared by every subtask of a frame.
///
/// `allowed[r]` limits the columns row `r` may use. The columns of `must` must all be occupied
/// once row `must_row` is placed: when that row is reached with two of them still empty the
/// branch is dead, and with one empty the row must take it (the full-symmetry engine uses it
/// to force both side columns into a band of rows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowMasks {
    /// Allowed columns per row (bits below `n` only).
    pub allowed: [u64; MAX_N],
    /// The row by which `must` is filled (`MAX_N`: none).
    pub must_row: usize,
    /// Columns that must be filled by the end of `must_row`.
    pub must: u64,
}

impl RowMasks {
    /// No constraint beyond the board itself.
    pub fn unconstrained(n: usize) -> RowMasks {
        let mut allowed = [0; MAX_N];
        allowed[..n].fill(full_mask(n));
        RowMasks {
            allowed,
            must_row: MAX_N,
            must: 0,
        }
    }

    /// Pins a queen on (`row`, `col`): that row may only use `col`, and every other row loses
    /// the column and the two diagonals through the square.
    pub fn pin(&mut self, n: usize, row: usize, col: usize) {
        for r in 0..n {
            if r == row {
                self.allowed[r] &= 1 << col;
                continue;
            }
            let d = r.abs_diff(row);
            let mut attacked = 1u64 << col;
            if col >= d {
                attacked |= 1 << (col - d);
            }
            if col + d < n {
                attacked |= 1 << (col + d);
            }
            self.allowed[r] &= !attacked;
        }
    }

    /// Whether some row has required columns (the kernel skips the check otherwise).
    pub fn has_must(&self) -> bool {
        self.must_row < MAX_N
    }

    /// Free squares of `row` given the attacks, honouring `allowed` and `must`.
    #[inline(always)]
    pub fn free(&self, row: usize, attacks: Attacks) -> u64 {
        let free = self.allowed[row] & !attacks.blocked();
        if row != self.must_row {
            return free;
        }
        required_row_free(free, self.must & !attacks.cols)
    }
}

/// The free squares `free` of the row by which required columns must be filled, `missing`
/// of them still empty: all of them when none is missing; the missing column when one is
/// (this row must take it); none when two or more are (the branch is dead). Written without
/// branches, for the batched kernel's lanes too.
#[inline(always)]
pub(crate) fn required_row_free(free: u64, missing: u64) -> u64 {
    let forced = if missing == 0 { free } else { free & missing };
    if missing & missing.wrapping_sub(1) == 0 {
        forced
    } else {
        0
    }
}

/// Queens placed in the first rows of an `n`×`n` board, with the attacks they cast on the next row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartialBoard {
    n: usize,
    queens: Vec<u8>,
    attacks: Attacks,
}

impl PartialBoard {
    /// An empty board of side `n` (1..=32).
    pub fn new(n: usize) -> Result<PartialBoard, Error> {
        check_n(n)?;
        Ok(PartialBoard {
            n,
            queens: Vec::with_capacity(n),
            attacks: Attacks::default(),
        })
    }

    /// A board with the given 0-based columns placed in rows 0, 1, ...
    pub fn from_columns(n: usize, columns: &[usize]) -> Result<PartialBoard, Error> {
        let mut board = PartialBoard::new(n)?;
        for &c in columns {
            board.push(c)?;
        }
        Ok(board)
    }

    /// The 0-based columns of the placed queens, row 0 first.
    #[cfg(test)]
    pub fn columns(&self) -> &[u8] {
        &self.queens
    }

    /// Whether a queen may go on `column` of the next row.
    pub fn is_free(&self, column: usize) -> bool {
        column < self.n && self.queens.len() < self.n && self.attacks.blocked() >> column & 1 == 0
    }

    /// Places a queen on `column` (0-based) of the next row.
    pub fn push(&mut self, column: usize) -> Result<(), Error> {
        let row = self.queens.len();
        if column >= self.n || row >= self.n {
            // 1-based in messages; u128 so that no column, however large, overflows
            return Err(Error::BadPrefix(format!(
                "row {} column {} is off the {n}x{n} board",
                row + 1,
                column as u128 + 1,
                n = self.n
            )));
        }
        if !self.is_free(column) {
            return Err(Error::BadPrefix(format!(
                "the queen in row {} column {} is attacked by an earlier queen",
                row + 1,
                column + 1
            )));
        }
        self.attacks = self.attacks.place(1 << column);
        self.queens.push(column as u8);
        Ok(())
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn full_mask_example() {
        assert_eq!(crate::board::full_mask(4), 0b1111);
        assert_eq!(crate::board::full_mask(32), 0xFFFF_FFFF);
    }

    #[test]
    fn pin_example() {
        use crate::board::RowMasks;
        let mut m = RowMasks::unconstrained(5);
        m.pin(5, 4, 2);
        assert_eq!(m.allowed[4], 0b00100);
        assert_eq!(m.allowed[3], 0b10001);
        assert_eq!(m.allowed[0], 0b11011);
    }

    #[test]
    fn partialboard_example() {
        use crate::board::PartialBoard;
        let mut b = PartialBoard::new(8).unwrap();
        b.push(0).unwrap();
        assert!(b.push(1).is_err()); // diagonal attack
        b.push(2).unwrap();
        assert_eq!(b.columns(), &[0, 2]);
    }
}
