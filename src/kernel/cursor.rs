//! The listing search: depth-first, stopping at each solution and resumable, so solutions
//! come out in lexicographic order and work can be cut into slices by a node budget.

use crate::board::{Attacks, RowMasks, MAX_N};

/// A depth-first search that stops at each solution and can be resumed: solutions come out in
/// lexicographic order, and work can be cut into slices by a node budget.
#[derive(Clone, Debug)]
pub struct Cursor {
    n: usize,
    masks: RowMasks,
    start: usize,
    row: usize,
    exhausted: bool,
    free: [u64; MAX_N],
    seen: [Attacks; MAX_N],
    rows: [u64; MAX_N],
}

impl Cursor {
    /// A cursor over the completions of `prefix` (0-based columns) under `masks`.
    pub fn new(n: usize, masks: &RowMasks, prefix: &[u8]) -> Cursor {
        let mut cursor = Cursor {
            n,
            masks: masks.clone(),
            start: prefix.len(),
            row: prefix.len(),
            exhausted: false,
            free: [0; MAX_N],
            seen: [Attacks::default(); MAX_N],
            rows: [0; MAX_N],
        };
        let mut attacks = Attacks::default();
        for (r, &c) in prefix.iter().enumerate() {
            cursor.rows[r] = 1 << c;
            attacks = attacks.place(1 << c);
        }
        if cursor.start < n {
            cursor.free[cursor.start] = masks.free(cursor.start, attacks);
            cursor.seen[cursor.start] = attacks;
        }
        cursor
    }

    /// Whether every completion has been yielded.
    pub fn is_exhausted(&self) -> bool {
        self.exhausted
    }

    /// Advances to the next solution, backtracking at most `budget` times; returns the one-hot
    /// rows of the solution, or `None` when the budget ran out or the search is over
    /// (see [`Cursor::is_exhausted`]). `budget` is decreased by the backtracks made.
    pub fn next_within(&mut self, budget: &mut u64) -> Option<&[u64]> {
        if self.exhausted {
            return None;
        }
        let n = self.n;
        if self.start >= n {
            // the prefix is a whole board: one solution
            self.exhausted = true;
            return Some(&self.rows[..n]);
        }
        let last = n - 1;
        if self.start == last {
            // one row to fill: each free square is a solution
            let f = self.free[last];
            if f == 0 {
                self.exhausted = true;
                return None;
            }
            let bit = f & f.wrapping_neg();
            self.free[last] = f ^ bit;
            self.rows[last] = bit;
            return Some(&self.rows[..n]);
        }
        // `row` lives in a register; the budget is spent per backtrack, which keeps the
        // check off the path that places queens
        let mut row = self.row;
        loop {
            let f = self.free[row];
            if f == 0 {
                if row == self.start {
                    self.exhausted = true;
                    self.row = row;
                    return None;
                }
                row -= 1;
                if *budget == 0 {
                    self.row = row;
                    return None;
                }
                *budget -= 1;
                continue;
            }
            // lowest set bit first: the leftmost column, hence lexicographic order
            let bit = f & f.wrapping_neg();
            self.free[row] = f ^ bit;
            self.rows[row] = bit;
            let below = self.seen[row].place(bit);
            let next = row + 1;
            let next_free = self.masks.free(next, below);
            if next == last {
                // one column is left for the last row: check it here instead of descending
                if next_free != 0 {
                    self.rows[last] = next_free;
                    self.row = row;
                    return Some(&self.rows[..n]);
                }
            } else if next_free != 0 {
                row = next;
                self.free[next] = next_free;
                self.seen[next] = below;
            }
        }
    }
}
