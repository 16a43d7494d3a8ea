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

    /// Gives away the untried columns of the shallowest row that has any, as cursors over
    /// their completions in lexicographic order; this cursor keeps the rest, all of which
    /// comes before them. Empty when nothing is left to give (or the search is over).
    pub fn split_off(&mut self) -> Vec<Cursor> {
        if self.exhausted || self.start + 1 >= self.n {
            return Vec::new();
        }
        // rows start..row hold the current path and their untried siblings; `row` holds
        // only untried columns (what it placed is searched or being returned)
        let Some(r) = (self.start..=self.row).find(|&r| self.free[r] != 0) else {
            return Vec::new();
        };
        let mut given = std::mem::take(&mut self.free[r]);
        let mut prefix: Vec<u8> = self.rows[..r]
            .iter()
            .map(|b| b.trailing_zeros() as u8)
            .collect();
        prefix.push(0);
        let mut pieces = Vec::new();
        while given != 0 {
            prefix[r] = given.trailing_zeros() as u8;
            given &= given - 1;
            pieces.push(Cursor::new(self.n, &self.masks, &prefix));
        }
        pieces
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every solution a cursor yields, in order, with a small budget per call.
    fn drain(cursor: &mut Cursor, out: &mut Vec<Vec<u64>>, calls: Option<usize>) {
        let mut left = calls.unwrap_or(usize::MAX);
        while !cursor.is_exhausted() && left > 0 {
            let mut budget = 7;
            if let Some(rows) = cursor.next_within(&mut budget) {
                out.push(rows.to_vec());
            }
            left -= 1;
        }
    }

    /// Split anywhere, what the cursor keeps then what it gave away is the unsplit sequence.
    #[test]
    fn what_a_split_gives_away_follows_what_it_keeps() {
        let mut given = 0;
        for n in 4..=10 {
            let masks = RowMasks::unconstrained(n);
            for prefix in [&[][..], &[1], &[0, 2]] {
                let mut whole = Vec::new();
                drain(&mut Cursor::new(n, &masks, prefix), &mut whole, None);
                for after in [0, 1, 3, 10, 40] {
                    let mut cursor = Cursor::new(n, &masks, prefix);
                    let mut got = Vec::new();
                    drain(&mut cursor, &mut got, Some(after));
                    let mut pieces = cursor.split_off();
                    given += pieces.len();
                    // split again where it can: the pieces stay in order
                    if let Some(first) = pieces.first_mut() {
                        let more = first.split_off();
                        pieces.splice(1..1, more);
                    }
                    drain(&mut cursor, &mut got, None);
                    for piece in &mut pieces {
                        drain(piece, &mut got, None);
                    }
                    assert_eq!(got, whole, "n={n} prefix={prefix:?} after {after} calls");
                }
            }
        }
        assert!(given > 100, "the splits gave away {given} pieces");
    }
}
