//! A complete solution, and a resumable depth-first cursor that yields solutions in
//! lexicographic order.

use crate::board::{check_n, Attacks, PartialBoard, RowMasks, MAX_N};
use crate::error::Error;
use crate::symmetry;
use std::fmt;
use std::str::FromStr;

/// A valid placement of n queens: `columns()[r]` is the 0-based column of row `r`'s queen.
///
/// Displays and parses as the 1-based column sequence that `nqueens list` prints.
///
/// ```
/// use nqueens::Solution;
/// let s: Solution = "2 4 6 1 3 5".parse().unwrap();
/// assert_eq!(s.columns(), &[1, 3, 5, 0, 2, 4]);
/// assert_eq!(s.to_string(), "2 4 6 1 3 5");
/// assert!("1 2 3".parse::<Solution>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Solution {
    columns: Vec<u8>,
}

impl Solution {
    /// Checks that `columns` (0-based) places n non-attacking queens on an n×n board.
    pub fn new(columns: Vec<u8>) -> Result<Solution, Error> {
        let n = columns.len();
        let mut board = PartialBoard::new(n)?;
        for &c in &columns {
            board.push(c as usize)?;
        }
        Ok(Solution { columns })
    }

    /// Board side.
    pub fn n(&self) -> usize {
        self.columns.len()
    }

    /// 0-based columns, row 0 first.
    pub fn columns(&self) -> &[u8] {
        &self.columns
    }

    /// The lexicographically smallest of the solution's eight symmetric images.
    pub fn canonical(&self) -> Solution {
        Solution {
            columns: symmetry::canonical(&self.columns).0,
        }
    }

    /// Whether this is the canonical form of its symmetry class.
    pub fn is_canonical(&self) -> bool {
        symmetry::is_canonical(&self.columns)
    }
}

impl fmt::Display for Solution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.columns.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{}", c + 1)?;
        }
        Ok(())
    }
}

impl FromStr for Solution {
    type Err = Error;

    fn from_str(s: &str) -> Result<Solution, Error> {
        let words: Vec<&str> = s.split_whitespace().collect();
        check_n(words.len())?;
        let n = words.len();
        let columns = words
            .iter()
            .map(|w| match w.parse::<usize>() {
                Ok(c) if (1..=n).contains(&c) => Ok((c - 1) as u8),
                _ => Err(Error::BadPrefix(format!(
                    "'{w}' is not a column from 1 to {n}"
                ))),
            })
            .collect::<Result<Vec<u8>, Error>>()?;
        Solution::new(columns)
    }
}

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

/// The solutions of an `n`×`n` board in lexicographic order, one at a time, in flat memory.
///
/// ```
/// let first: Vec<String> = nqueens::solutions(6).unwrap().take(2).map(|s| s.to_string()).collect();
/// assert_eq!(first, ["2 4 6 1 3 5", "3 6 2 5 1 4"]);
/// assert_eq!(nqueens::solutions(8).unwrap().count(), 92);
/// ```
pub fn solutions(n: usize) -> Result<Solutions, Error> {
    check_n(n)?;
    Ok(Solutions {
        cursor: Cursor::new(n, &RowMasks::unconstrained(n), &[]),
    })
}

/// Iterator returned by [`solutions`].
#[derive(Clone, Debug)]
pub struct Solutions {
    cursor: Cursor,
}

impl Iterator for Solutions {
    type Item = Solution;

    fn next(&mut self) -> Option<Solution> {
        let mut unlimited = u64::MAX;
        let rows = self.cursor.next_within(&mut unlimited)?;
        Some(Solution {
            columns: rows.iter().map(|r| r.trailing_zeros() as u8).collect(),
        })
    }
}
