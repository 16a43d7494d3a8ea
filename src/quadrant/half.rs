//! A half-board's patterns on one set of rows: joined from the quarter tables, or found by a
//! search over the rows where the tables did not fit.

use super::cache::{Lent, RowSets};
use super::join::pair_up;
use super::pair_kernel::PairKernel;
use super::pattern::{Packed, Pattern, Region, Stored};
use super::quarter::{subsets, Quarter, RowSet};
use crate::memory::Budget;
use std::collections::TryReserveError;

/// The quarter tables of a board, or the decision to search halves without them.
#[derive(Debug)]
pub(super) enum Halves {
    /// The west quarters' tables, which build both halves: the north one packed, each whole
    /// or a row set at a time.
    Tables {
        north: Table<Packed>,
        south: Table<Pattern>,
    },
    /// The tables would not fit this budget.
    Search { memory_limit: Budget },
}

/// A quarter's placements: the whole table, or its row sets as units ask for them.
#[derive(Debug)]
pub(super) enum Table<P> {
    Whole(Quarter<P>),
    OnDemand(RowSets<P>),
}

/// One row set of a [`Table`], held while a half is built from it.
enum Held<'a, P> {
    Whole(&'a RowSet<P>),
    Lent(Lent<P>),
}

impl<P> Held<'_, P> {
    fn set(&self) -> &RowSet<P> {
        match self {
            Held::Whole(set) => set,
            Held::Lent(lent) => lent.set(),
        }
    }
}

impl<P: Stored> Table<P> {
    fn region(&self) -> Region {
        match self {
            Table::Whole(quarter) => quarter.region(),
            Table::OnDemand(sets) => sets.region(),
        }
    }

    /// The placements on the board rows `rows` (clipped to the quarter); an error when the
    /// memory for a row set built now cannot be had.
    fn row_set(&self, rows: u64) -> Result<Held<'_, P>, TryReserveError> {
        Ok(match self {
            Table::Whole(quarter) => Held::Whole(quarter.row_set(rows)),
            Table::OnDemand(sets) => Held::Lent(sets.get(rows)?),
        })
    }
}

impl Halves {
    /// Appends to `out` every pattern of the half of an `n`×`n` board with queens on `rows`
    /// and on every west column, none on a diagonal of `avoid`, on the loop `pairs` (the east
    /// half is built there too, moved west).
    pub(super) fn build(
        &self,
        n: usize,
        rows: u64,
        avoid: Pattern,
        pairs: PairKernel,
        out: &mut Vec<Pattern>,
    ) -> Result<(), TryReserveError> {
        match self {
            Halves::Tables { north, south } => {
                let region = north.region();
                let north_rows = rows & region.row_mask();
                let upper = north.row_set(north_rows)?;
                let lower = south.row_set(rows & !north_rows)?;
                let queens = north_rows.count_ones();
                from_tables(
                    (region, upper.set()),
                    lower.set(),
                    queens,
                    avoid,
                    pairs,
                    out,
                )
            }
            Halves::Search { .. } => {
                let west_cols = (1u64 << (n / 2)) - 1;
                by_search(n, rows, west_cols, avoid, out)
            }
        }
    }
}

/// Appends to `out` every pattern of the half with queens on `rows` and on every one of the
/// `width` columns of the quarters, none on a diagonal of `avoid`, joining the placements of
/// its north quarter (rows `north_rows`, packed placements of `north_region`) and its south
/// quarter (`south`: the row set of the other rows), on the loop `pairs`. It does not look at
/// the stop flag: a look per subset of columns cost 3 % of `count 17 -t 1`, and a half takes
/// milliseconds at most.
fn from_tables(
    (north_region, north): (Region, &RowSet<Packed>),
    south: &RowSet<Pattern>,
    north_queens: u32,
    avoid: Pattern,
    pairs: PairKernel,
    out: &mut Vec<Pattern>,
) -> Result<(), TryReserveError> {
    let width = north_region.cols as u32;
    let all = (1usize << width) - 1;
    for chosen in subsets(width, north_queens) {
        let upper = north.cell(chosen as usize);
        if !upper.is_empty() {
            let lower = south.cell(all & !(chosen as usize));
            pair_up(pairs, (north_region, upper), lower, avoid, out)?;
        }
    }
    Ok(())
}

/// The patterns [`from_tables`] gives, found by a depth-first search over the rows
/// instead (no tables: for boards whose tables do not fit the memory limit).
fn by_search(
    n: usize,
    rows: u64,
    cols: u64,
    avoid: Pattern,
    out: &mut Vec<Pattern>,
) -> Result<(), TryReserveError> {
    let order: Vec<usize> = (0..n).filter(|r| rows >> r & 1 != 0).collect();
    if order.is_empty() {
        out.try_reserve(1)?;
        out.push(Pattern::default());
        return Ok(());
    }
    // Columns of row `r` on a diagonal of `avoid`.
    let blocked = |r: usize| -> u64 {
        (0..n)
            .filter(|&c| !Pattern::queen(n, r, c).disjoint(avoid))
            .fold(0, |m, c| m | 1 << c)
    };
    let blocked: Vec<u64> = order.iter().map(|&r| blocked(r)).collect();
    let k = order.len();
    // per level: free columns, used columns, diagonals seen from this row, the pattern
    let mut free = vec![0u64; k];
    let mut used = vec![0u64; k];
    let mut left = vec![0u64; k];
    let mut right = vec![0u64; k];
    let mut pattern = vec![Pattern::default(); k];
    free[0] = cols & !blocked[0];
    let mut i = 0;
    loop {
        if free[i] == 0 {
            if i == 0 {
                return Ok(());
            }
            i -= 1;
            continue;
        }
        let bit = free[i] & free[i].wrapping_neg();
        free[i] ^= bit;
        let r = order[i];
        let placed = pattern[i].with(Pattern::queen(n, r, bit.trailing_zeros() as usize));
        if i + 1 == k {
            out.try_reserve(1)?;
            out.push(placed);
            continue;
        }
        // diagonals move one column per row: shift them by the gap to the next row
        let gap = order[i + 1] - r;
        used[i + 1] = used[i] | bit;
        left[i + 1] = (left[i] | bit) << gap;
        right[i + 1] = (right[i] | bit) >> gap;
        pattern[i + 1] = placed;
        i += 1;
        free[i] = cols & !(used[i] | left[i] | right[i] | blocked[i]);
    }
}
