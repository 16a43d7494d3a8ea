//! A complete solution, and the solutions of a board in lexicographic order.

use crate::board::{check_n, PartialBoard, RowMasks};
use crate::error::Error;
use crate::kernel::Cursor;
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
///
/// ```
/// let mut it = nqueens::solutions(4).unwrap();
/// assert_eq!(it.next().unwrap().to_string(), "2 4 1 3");
/// assert_eq!(it.next().unwrap().to_string(), "3 1 4 2");
/// assert!(it.next().is_none());
/// ```
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
