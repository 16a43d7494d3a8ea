//! A half-board's patterns on one set of rows: joined from the quarter tables, or found by a
//! search over the rows where the tables did not fit.

use super::cache::{Lent, RowSets};
use super::cells::Quarters;
use super::join::{pair_up, Cell};
use super::pair_kernel::PairKernel;
use super::pattern::{Packed, Pattern, Region, Stored};
use super::quarter::{subsets, Quarter, RowSet, Subsets};
use crate::memory::Budget;
use crate::stages::{time, Stage};
use std::collections::TryReserveError;

/// Whole cells joined in one call (a call per cell was most of the join's time at N = 16,
/// whose cells pair about 8 north placements with 8 south ones).
const BATCH: usize = 32;

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

/// One row set of a [`Table`], held while a half is built from it: borrowed from the whole
/// table (or a thread's [`Kept`]), or lent by the recent ones built on demand.
enum Held<'a, P> {
    Borrowed(&'a RowSet<P>),
    Lent(Lent<P>),
}

impl<P> Held<'_, P> {
    fn set(&self) -> &RowSet<P> {
        match self {
            Held::Borrowed(set) => set,
            Held::Lent(lent) => lent.set(),
        }
    }
}

/// A south row set without the placements on the diagonals of a middle column's queen,
/// kept from unit to unit by a thread: units in id order mostly share their south rows
/// and middle row. Only on odd boards: there about half the pairs the join would try hold
/// such a placement, and filtering each unit's row sets again cost as much as it saved.
#[derive(Default)]
pub(super) struct Kept {
    /// What `set` is: the region, its rows, and the diagonals avoided.
    key: Option<(Region, u64, Pattern)>,
    set: RowSet<Pattern>,
}

impl Kept {
    /// The placements of `table` on `rows` that share no diagonal with `avoid`, filtered
    /// on the loop `pairs` where the last ones do not serve.
    fn of(
        &mut self,
        table: &Table<Pattern>,
        (rows, avoid): (u64, Pattern),
        pairs: PairKernel,
    ) -> Result<&RowSet<Pattern>, TryReserveError> {
        let key = Some((table.region(), rows, avoid));
        if self.key != key {
            self.key = None;
            self.set = table.row_set(rows)?.set().disjoint_from(avoid, pairs)?;
            self.key = key;
        }
        Ok(&self.set)
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
            Table::Whole(quarter) => Held::Borrowed(quarter.row_set(rows)),
            Table::OnDemand(sets) => Held::Lent(sets.get(rows)?),
        })
    }
}

impl Halves {
    /// Both tables, where both are whole: what a device holds to join halves from
    /// ([`Joinable`](crate::quadrant::cells::Joinable)).
    pub(super) fn quarters(&self) -> Option<Quarters<'_>> {
        match self {
            Halves::Tables {
                north: Table::Whole(north),
                south: Table::Whole(south),
            } => Some(Quarters { north, south }),
            _ => None,
        }
    }

    /// The patterns of the half of an `n`×`n` board with queens on `rows` and on every west
    /// column, none on a diagonal of `avoid`, on the loop `pairs` (the east half is built
    /// there too, moved west), to be had a part at a time ([`Parts::fill`]); an error when
    /// the memory for a row set or a searched half cannot be had. On odd boards its south
    /// placements come from `kept`, made anew only where the last unit's do not serve.
    pub(super) fn parts<'a>(
        &'a self,
        n: usize,
        (rows, avoid): (u64, Pattern),
        pairs: PairKernel,
        kept: &'a mut Kept,
    ) -> Result<Parts<'a>, TryReserveError> {
        time(Stage::Joins, || {
            let source = match self {
                Halves::Tables { north, south } => {
                    let region = north.region();
                    let north_rows = rows & region.row_mask();
                    let width = region.cols as u32;
                    let mut cells = subsets(width, north_rows.count_ones());
                    let south_rows = rows & !north_rows;
                    let lower = if avoid == Pattern::default() {
                        south.row_set(south_rows)?
                    } else {
                        Held::Borrowed(kept.of(south, (south_rows, avoid), pairs)?)
                    };
                    Source::Tables {
                        region,
                        upper: north.row_set(north_rows)?,
                        lower,
                        cell: cells.next(),
                        cells,
                        all: (1usize << width) - 1,
                        avoid,
                        pairs,
                    }
                }
                Halves::Search { .. } => {
                    let west_cols = (1u64 << (n / 2)) - 1;
                    let mut searched = Vec::new();
                    by_search(n, rows, west_cols, avoid, &mut searched)?;
                    Source::Searched(searched)
                }
            };
            Ok(Parts { source, next: 0 })
        })
    }
}

/// A half's patterns, handed out a part at a time: joined from the tables cell by cell, or
/// searched whole beforehand.
pub(super) struct Parts<'a> {
    source: Source<'a>,
    /// Where the next part starts: the next placement of the cell of the north row set
    /// being joined (the next pattern, when searched).
    next: usize,
}

enum Source<'a> {
    /// The north and south row sets, joined cell by cell: the north quarter's columns
    /// `cell`, then `cells`, with the south one's other columns (`all` but those).
    Tables {
        region: Region,
        upper: Held<'a, Packed>,
        lower: Held<'a, Pattern>,
        cell: Option<u64>,
        cells: Subsets,
        all: usize,
        avoid: Pattern,
        pairs: PairKernel,
    },
    Searched(Vec<Pattern>),
}

impl Parts<'_> {
    /// Appends the half's next patterns to `out` until it holds at least `most` or the
    /// half ends, at most `most` plus a south cell's patterns; whether more may follow.
    /// It does not look at the stop flag: a look per subset of columns cost 3 % of
    /// `count 17 -t 1`, and a part takes milliseconds.
    pub(super) fn fill(
        &mut self,
        out: &mut Vec<Pattern>,
        most: usize,
    ) -> Result<bool, TryReserveError> {
        time(Stage::Joins, || self.fill_untimed(out, most))
    }

    /// [`Parts::fill`].
    fn fill_untimed(
        &mut self,
        out: &mut Vec<Pattern>,
        most: usize,
    ) -> Result<bool, TryReserveError> {
        match &mut self.source {
            Source::Tables {
                region,
                upper,
                lower,
                cell,
                cells,
                all,
                avoid,
                pairs,
            } => {
                // whole cells are joined a batch at a time, with room for every pair each
                // makes; a cell that does not fit whole, a part of it at a time
                let mut batch: [Cell; BATCH] = [(&[], &[]); BATCH];
                let (mut batched, mut candidates) = (0, 0);
                while let Some(chosen) = *cell {
                    let above = &upper.set().cell(chosen as usize)[self.next..];
                    let below = lower.set().cell(*all & !(chosen as usize));
                    let whole = above.len().saturating_mul(below.len());
                    if whole <= most.saturating_sub(out.len() + candidates) {
                        if whole > 0 {
                            batch[batched] = (above, below);
                            (batched, candidates) = (batched + 1, candidates + whole);
                        }
                        if batched == BATCH {
                            pair_up(*pairs, (*region, &batch[..batched]), *avoid, out)?;
                            (batched, candidates) = (0, 0);
                        }
                        *cell = cells.next();
                        self.next = 0;
                        continue;
                    }
                    pair_up(*pairs, (*region, &batch[..batched]), *avoid, out)?;
                    (batched, candidates) = (0, 0);
                    let room = most.saturating_sub(out.len());
                    if room == 0 {
                        return Ok(true);
                    }
                    // as many north placements as leave room for every pair they make (a
                    // division only where the cell does not fit whole: it cost 4 % at N = 16)
                    let taken = room.div_ceil(below.len()).min(above.len());
                    pair_up(*pairs, (*region, &[(&above[..taken], below)]), *avoid, out)?;
                    if taken == above.len() {
                        *cell = cells.next();
                        self.next = 0;
                    } else {
                        self.next += taken;
                    }
                }
                pair_up(*pairs, (*region, &batch[..batched]), *avoid, out)?;
                Ok(false)
            }
            Source::Searched(patterns) => {
                let rest = &patterns[self.next..];
                let taken = most.saturating_sub(out.len()).min(rest.len());
                out.try_reserve(taken)?;
                out.extend_from_slice(&rest[..taken]);
                self.next += taken;
                Ok(self.next < patterns.len())
            }
        }
    }
}

/// A half's patterns as the tables give them, found by a depth-first search over the
/// rows instead (no tables: for boards whose tables do not fit the memory limit).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::Budget;
    use crate::parallel::Workers;
    use crate::quadrant::quarter::Quarter;
    use crate::quadrant::regions;
    use std::sync::atomic::AtomicBool;

    fn whole<P: Stored>(region: Region) -> Table<P> {
        let never = AtomicBool::new(false);
        let quarter = Quarter::build_within(region, u64::MAX, &Workers::this_thread(), &never);
        Table::Whole(quarter.unwrap().unwrap())
    }

    /// Parts of any size add up to the whole half, in its order, each as long as asked
    /// (the last at most) and no longer than a south cell past it.
    #[test]
    fn parts_of_any_size_make_the_whole_half() {
        for n in [9, 12, 13] {
            let [north, south] = regions(n);
            let tables = Halves::Tables {
                north: whole(north),
                south: whole(south),
            };
            let searched = Halves::Search {
                memory_limit: Budget::asked(0),
            };
            let Halves::Tables { south: table, .. } = &tables else {
                unreachable!()
            };
            // the longest south cell: how far past its size a part may run
            let longest_cell = (0..1u64 << south.rows)
                .flat_map(|rows| {
                    let set = table.row_set(rows << south.row0).unwrap();
                    (0..1usize << south.cols).map(move |c| set.set().cell(c).len())
                })
                .max()
                .unwrap();
            let pairs = PairKernel::Scalar;
            let h = n / 2;
            // a half's rows (h of them), the middle column's queen on row 3 on odd boards
            let (avoid, middle) = if n % 2 == 1 {
                (Pattern::queen(n, 3, h), 1 << 3)
            } else {
                (Pattern::default(), 0)
            };
            let mut longest_half = 0;
            // one for every half, as a thread's: a half's rows and middle row change its key
            let mut kept = Kept::default();
            let row_sets = subsets(n as u32, h as u32).filter(|rows| rows & middle == 0);
            for rows in row_sets.step_by(37).take(6) {
                for halves in [&tables, &searched] {
                    let mut all = Vec::new();
                    let mut one = halves.parts(n, (rows, avoid), pairs, &mut kept).unwrap();
                    assert!(!one.fill(&mut all, usize::MAX).unwrap());
                    longest_half = longest_half.max(all.len());
                    for most in [1, 7, 100] {
                        let mut parts = halves.parts(n, (rows, avoid), pairs, &mut kept).unwrap();
                        let mut joined = Vec::new();
                        loop {
                            let mut part = Vec::new();
                            let more = parts.fill(&mut part, most).unwrap();
                            assert!(part.len() < most + longest_cell, "{most}: {}", part.len());
                            assert!(!more || part.len() >= most, "{most}: {}", part.len());
                            joined.extend(part);
                            if !more {
                                break;
                            }
                        }
                        assert_eq!(joined, all, "n = {n}, rows {rows:b}, {most} at a time");
                    }
                }
            }
            assert!(
                n < 12 || longest_half > 20,
                "n = {n}: halves worth cutting, {longest_half}"
            );
        }
    }
}
