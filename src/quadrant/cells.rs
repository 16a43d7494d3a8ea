//! A half's patterns as the cells that join them, for a device that holds the quarter
//! tables and joins them itself: a cell pairs the north placements on some columns with the
//! south ones on the others, those on a diagonal of the middle column's queen left out, and
//! its *candidates* (every such pair, north-major) are numbered cell after cell. A
//! candidate is one of the half's patterns when its two placements share no diagonal.

use super::join::{pair_up, Cell};
use super::pair_kernel::PairKernel;
use super::pattern::{Packed, Pattern};
use super::quarter::{subsets, Quarter};
use std::collections::TryReserveError;

/// Candidates a pivot sample tests, evenly spaced (a seventh to a fifth are patterns from
/// N = 19 on: about the 256 the pivots sample of a joined side below 2^38 pairs).
const SAMPLE: usize = 2048;

/// The fewest candidates of a half a device joins: a smaller one is joined on the host,
/// whose join of it costs little more than the sample and the batch would. The crate's own
/// tests join halves of 400 candidates and
/// more on a device, to run the join on the small boards they count, beside halves sent
/// as they are (a batch may hold both).
pub const LEAST_JOINED: usize = if cfg!(test) { 400 } else { 4 * SAMPLE };

/// The tables a device holds to join halves: both whole.
#[derive(Clone, Copy)]
pub struct Quarters<'a> {
    pub north: &'a Quarter<Packed>,
    pub south: &'a Quarter<Pattern>,
}

#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
impl Quarters<'_> {
    /// The board the tables are of.
    pub fn n(&self) -> usize {
        self.north.region().n
    }

    /// The north table laid out flat, a placement as its two packed words.
    pub fn north_words(&self) -> Vec<u32> {
        (self.north.placements())
            .flat_map(|p| {
                let (main, anti) = p.words();
                [main, anti]
            })
            .collect()
    }

    /// The south table laid out flat, a placement as its main diagonals then its
    /// anti-diagonals, each low word first.
    pub fn south_words(&self) -> Vec<u32> {
        (self.south.placements())
            .flat_map(|p| pattern_words(*p))
            .collect()
    }

    /// Bytes of the two tables as a device holds them.
    pub fn bytes(&self) -> [u64; 2] {
        [8 * self.north.len() as u64, 16 * self.south.len() as u64]
    }
}

/// Appends to `kept` the placements of `cell` for which `keeps` holds, and to `at` where
/// each lies in its table laid out flat (`cell` from `first` on); how many. Without a branch
/// a placement: on odd boards about half keep off the middle queen's diagonals, a branch
/// no predictor guesses.
fn keep_where<P: Copy>(
    cell: &[P],
    first: u32,
    keeps: impl Fn(P) -> bool,
    (kept, at): (&mut Vec<P>, &mut Vec<u32>),
) -> usize {
    let base = kept.len();
    kept.extend_from_slice(cell);
    at.extend(first..first + cell.len() as u32);
    let mut end = base;
    for (i, &p) in cell.iter().enumerate() {
        kept[end] = p;
        at[end] = first + i as u32;
        end += usize::from(keeps(p));
    }
    kept.truncate(end);
    at.truncate(end);
    end - base
}

/// A pattern's words as a device reads them: its main diagonals, then its anti-diagonals,
/// each low half first.
pub fn pattern_words(p: Pattern) -> [u32; 4] {
    let halves = |w: u64| [w as u32, (w >> 32) as u32];
    let [m0, m1] = halves(p.main);
    let [a0, a1] = halves(p.anti);
    [m0, m1, a0, a1]
}

/// One cell: the first of its candidates, and where its north and south placements that
/// keep off the avoided diagonals lie among the half's ([`Joinable::place_lists`]), and how
/// many.
#[derive(Clone, Copy, Debug)]
pub struct JoinCell {
    pub first: usize,
    pub upper: (u32, u32),
    pub lower: (u32, u32),
}

/// A half's patterns as its cells, to be joined where they are counted.
pub struct Joinable<'a> {
    quarters: Quarters<'a>,
    cells: Vec<JoinCell>,
    /// Each cell's north placements that keep off `avoid`, cell after cell, and where each
    /// lies in the north table laid out flat: a candidate pairs only these (on odd boards
    /// about half of each quarter's placements take a diagonal of the middle column's
    /// queen, so the cells' full products held two to three times the candidates).
    upper: Vec<Packed>,
    upper_at: Vec<u32>,
    /// The same of the south placements.
    lower: Vec<Pattern>,
    lower_at: Vec<u32>,
    avoid: Pattern,
    candidates: usize,
    /// The patterns reckoned from the sample ([`Joinable::sample`]; the candidates before).
    reckoned: usize,
}

impl<'a> Joinable<'a> {
    /// The half with queens on the board rows `rows` and every west column, none on a
    /// diagonal of `avoid`, as the cells of `quarters` (cells without candidates left out).
    pub(super) fn new(quarters: Quarters<'a>, (rows, avoid): (u64, Pattern)) -> Joinable<'a> {
        let region = quarters.north.region();
        let north_rows = rows & region.row_mask();
        let south_rows = rows & !north_rows;
        let (upper, lower) = (
            quarters.north.row_set(north_rows),
            quarters.south.row_set(south_rows),
        );
        let width = region.cols as u32;
        let all = (1usize << width) - 1;
        let mut joinable = Joinable {
            quarters,
            cells: Vec::new(),
            upper: Vec::new(),
            upper_at: Vec::new(),
            lower: Vec::new(),
            lower_at: Vec::new(),
            avoid,
            candidates: 0,
            reckoned: 0,
        };
        let j = &mut joinable;
        for cols in subsets(width, north_rows.count_ones()).map(|c| c as usize) {
            let (above, below) = (upper.cell(cols), lower.cell(all & !cols));
            if above.is_empty() || below.is_empty() {
                continue;
            }
            let (upper_from, lower_from) = (j.upper.len(), j.lower.len());
            let above_at = quarters.north.flat_place(north_rows, cols);
            let off_avoid = |p: Packed| p.unpack(region).disjoint(avoid);
            let kept_above =
                keep_where(above, above_at, off_avoid, (&mut j.upper, &mut j.upper_at));
            let below_at = quarters.south.flat_place(south_rows, all & !cols);
            let off_avoid = |q: Pattern| q.disjoint(avoid);
            let kept_below =
                keep_where(below, below_at, off_avoid, (&mut j.lower, &mut j.lower_at));
            let kept = [kept_above, kept_below];
            if kept.contains(&0) {
                j.upper.truncate(upper_from);
                j.upper_at.truncate(upper_from);
                j.lower.truncate(lower_from);
                j.lower_at.truncate(lower_from);
                continue;
            }
            j.cells.push(JoinCell {
                first: j.candidates,
                upper: (upper_from as u32, kept[0] as u32),
                lower: (lower_from as u32, kept[1] as u32),
            });
            j.candidates += kept[0] * kept[1];
        }
        joinable.reckoned = joinable.candidates;
        joinable
    }

    /// The patterns the half is reckoned to hold ([`Joinable::sample`]).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn reckoned(&self) -> usize {
        self.reckoned
    }

    /// The candidates of the half on the board rows `rows` before the placements on the
    /// avoided diagonals are left out (the north placements on some columns times the
    /// south ones on the others, summed over the columns; at least [`Joinable::len`]):
    /// counted before its cells are made (most halves below N = 19 have fewer than a device joins).
    pub(super) fn count(quarters: Quarters, rows: u64) -> usize {
        let region = quarters.north.region();
        let north_rows = rows & region.row_mask();
        let upper = quarters.north.row_set(north_rows);
        let lower = quarters.south.row_set(rows & !north_rows);
        let all = (1usize << region.cols) - 1;
        (subsets(region.cols as u32, north_rows.count_ones()))
            .map(|cols| upper.cell(cols as usize).len() * lower.cell(all & !cols as usize).len())
            .sum()
    }

    /// The candidates: every pair of each cell.
    pub fn len(&self) -> usize {
        self.candidates
    }

    /// The tables the cells lie in.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn quarters(&self) -> Quarters<'a> {
        self.quarters
    }

    /// How far a north placement's main and anti-diagonal words move up when unpacked.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn unpack_shifts(&self) -> (u32, u32) {
        let (main, anti) = self.quarters.north.region().lowest_diagonals();
        (main as u32, anti as u32)
    }

    /// The cells (those with candidates), in order.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn cell_list(&self) -> &[JoinCell] {
        &self.cells
    }

    /// Where each cell's north placements lie in the north table laid out flat, cell after
    /// cell, and the same of the south ones.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn place_lists(&self) -> [&[u32]; 2] {
        [&self.upper_at, &self.lower_at]
    }

    fn cell(&self, c: &JoinCell) -> Cell<'_> {
        let range = |(from, len): (u32, u32)| from as usize..(from + len) as usize;
        (&self.upper[range(c.upper)], &self.lower[range(c.lower)])
    }

    /// The cell candidate `k` lies in, in [`Joinable::cell_list`].
    pub fn cell_at(&self, k: usize) -> usize {
        self.cells.partition_point(|c| c.first <= k) - 1
    }

    /// Candidate `k` joined, or `None` where its placements share a diagonal.
    pub fn pattern(&self, k: usize) -> Option<Pattern> {
        let c = &self.cells[self.cell_at(k)];
        let (above, below) = self.cell(c);
        let local = k - c.first;
        let region = self.quarters.north.region();
        self.joined(
            above[local / below.len()].unpack(region),
            below[local % below.len()],
        )
    }

    /// The pattern of north placement `p` and south placement `q`, if they and the avoided
    /// diagonals share none.
    fn joined(&self, p: Pattern, q: Pattern) -> Option<Pattern> {
        (p.disjoint(self.avoid) && q.disjoint(p.with(self.avoid))).then(|| p.with(q))
    }

    /// Each candidate in turn, joined ([`Joinable::pattern`]).
    pub fn candidates(&self) -> impl Iterator<Item = Option<Pattern>> + '_ {
        let region = self.quarters.north.region();
        (self.cells.iter()).flat_map(move |c| {
            let (above, below) = self.cell(c);
            (above.iter()).flat_map(move |p| {
                let p = p.unpack(region);
                below.iter().map(move |&q| self.joined(p, q))
            })
        })
    }

    /// The first candidate that is a pattern, if any.
    pub fn first_pattern(&self) -> Option<usize> {
        self.candidates().position(|p| p.is_some())
    }

    /// The patterns of evenly spaced cells (about [`SAMPLE`] candidates), joined on the loop
    /// `pairs`, and the patterns the half is reckoned to hold from them: what the pivots
    /// are chosen by, and a batch of a device sized. Whole cells, joined as the host joins
    /// a half: 2,048 candidates picked one by one cost as much as the whole half's join at
    /// N = 18.
    pub fn sample(&mut self, pairs: PairKernel) -> Result<(Vec<Pattern>, usize), TryReserveError> {
        let step = self.candidates.div_ceil(SAMPLE).max(1);
        let cells: Vec<Cell> = (self.cells.iter().step_by(step))
            .map(|c| self.cell(c))
            .collect();
        let tested: usize = cells
            .iter()
            .map(|(above, below)| above.len() * below.len())
            .sum();
        let mut sample = Vec::new();
        let region = self.quarters.north.region();
        for batch in cells.chunks(32) {
            pair_up(pairs, (region, batch), self.avoid, &mut sample)?;
        }
        self.reckoned = (sample.len() * self.candidates).div_ceil(tested.max(1));
        Ok((sample, self.reckoned))
    }

    /// Appends the half's patterns to `out` (joined here: a device declined the cells), on
    /// the loop `pairs`.
    pub fn join(&self, pairs: PairKernel, out: &mut Vec<Pattern>) -> Result<(), TryReserveError> {
        let region = self.quarters.north.region();
        let cells: Vec<Cell> = self.cells.iter().map(|c| self.cell(c)).collect();
        for batch in cells.chunks(32) {
            pair_up(pairs, (region, batch), self.avoid, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parallel::Workers;
    use crate::quadrant::half::{Halves, Kept, Table};
    use crate::quadrant::regions;
    use std::sync::atomic::AtomicBool;

    fn whole<P: crate::quadrant::pattern::Stored>(
        region: crate::quadrant::pattern::Region,
    ) -> Table<P> {
        let never = AtomicBool::new(false);
        let quarter = Quarter::build_within(region, u64::MAX, &Workers::this_thread(), &never);
        Table::Whole(quarter.unwrap().unwrap())
    }

    /// A half's cells join the half the host builds, only of placements off the middle
    /// column's queen's diagonals (fewer candidates than the full products on odd boards),
    /// and their words, read as `join.wgsl` reads them, pick each candidate's placements.
    #[test]
    fn cells_join_the_half_and_their_words_pick_each_candidate() {
        for n in [12, 13] {
            let [north, south] = regions(n);
            let halves = Halves::Tables {
                north: whole(north),
                south: whole(south),
            };
            let quarters = halves.quarters().expect("whole tables");
            let north_flat: Vec<Packed> = quarters.north.placements().copied().collect();
            let south_flat: Vec<Pattern> = quarters.south.placements().copied().collect();
            let h = n / 2;
            let (avoid, middle) = if n % 2 == 1 {
                (Pattern::queen(n, 3, h), 1 << 3)
            } else {
                (Pattern::default(), 0)
            };
            let mut kept = Kept::default();
            let mut fewer = 0;
            let row_sets = subsets(n as u32, h as u32).filter(|rows| rows & middle == 0);
            for rows in row_sets.step_by(29).take(8) {
                let cells = Joinable::new(quarters, (rows, avoid));
                let mut want = Vec::new();
                let mut half = halves
                    .parts(n, (rows, avoid), PairKernel::Scalar, &mut kept)
                    .unwrap();
                assert!(!half.fill(&mut want, usize::MAX).unwrap());
                let mut joined: Vec<Pattern> = cells.candidates().flatten().collect();
                let key = |p: &Pattern| (p.main, p.anti);
                want.sort_unstable_by_key(key);
                joined.sort_unstable_by_key(key);
                assert_eq!(joined, want, "n = {n}, rows {rows:b}");
                let all = Joinable::count(quarters, rows);
                assert!(cells.len() <= all, "n = {n}, rows {rows:b}");
                fewer += usize::from(cells.len() < all);
                // each candidate's placements found as a device finds them, by its cell
                let region = quarters.north.region();
                let [north_at, south_at] = cells.place_lists();
                for k in 0..cells.len() {
                    let c = cells.cell_list()[cells.cell_at(k)];
                    let local = (k - c.first) as u32;
                    let up = north_at[(c.upper.0 + local / c.lower.1) as usize] as usize;
                    let low = south_at[(c.lower.0 + local % c.lower.1) as usize] as usize;
                    let (p, q) = (north_flat[up].unpack(region), south_flat[low]);
                    let read = p.disjoint(q).then(|| p.with(q));
                    assert_eq!(
                        read,
                        cells.pattern(k),
                        "n = {n}, rows {rows:b}, candidate {k}"
                    );
                }
            }
            assert_eq!(
                fewer > 0,
                n % 2 == 1,
                "n = {n}: {fewer} halves of fewer candidates"
            );
        }
    }
}
