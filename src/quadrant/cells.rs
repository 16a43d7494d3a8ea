//! A half's patterns as the cells that join them, for a device that holds the quarter
//! tables and joins them itself: a cell pairs the north placements on some columns with the
//! south ones on the others, and its *candidates* (every such pair, north-major) are
//! numbered cell after cell. A candidate is one of the half's patterns when its two
//! placements share no diagonal with each other or with the middle column's queen.

use super::join::{pair_up, Cell};
use super::pair_kernel::PairKernel;
use super::pattern::{Packed, Pattern};
use super::quarter::{subsets, Quarter, RowSet};
use std::collections::TryReserveError;

/// Candidates a pivot sample tests, evenly spaced (a seventh to a fifth are patterns from
/// N = 19 on: about the 256 the pivots sample of a joined side below 2^38 pairs).
const SAMPLE: usize = 2048;

/// The fewest candidates of a half a device joins: a smaller one is joined on the host,
/// whose join of it costs little more than the sample would (at N = 17, where most halves
/// have fewer, joined on the GPU the sample and the batches' costs made the threads' work
/// on lavapipe four times as long). The crate's own tests join halves of 400 candidates and
/// more on a device, to run the join on the small boards they count, beside halves sent
/// as they are (a batch may hold both).
pub const LEAST_JOINED: usize = if cfg!(test) { 400 } else { 4 * SAMPLE };

/// Words of a cell as a device reads it ([`Joinable::cell_words`]).
pub const CELL_WORDS: usize = 4;

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

/// A pattern's words as a device reads them: its main diagonals, then its anti-diagonals,
/// each low half first.
pub fn pattern_words(p: Pattern) -> [u32; 4] {
    let halves = |w: u64| [w as u32, (w >> 32) as u32];
    let [m0, m1] = halves(p.main);
    let [a0, a1] = halves(p.anti);
    [m0, m1, a0, a1]
}

/// One cell: its north placements' columns, the first of its candidates, and how many
/// south placements each north one is paired with.
#[derive(Clone, Copy, Debug)]
struct JoinCell {
    cols: usize,
    first: usize,
    upper_at: u32,
    lower_at: u32,
    lower_len: usize,
}

/// A half's patterns as its cells, to be joined where they are counted.
pub struct Joinable<'a> {
    quarters: Quarters<'a>,
    upper: &'a RowSet<Packed>,
    lower: &'a RowSet<Pattern>,
    /// The north quarter's columns, all of them.
    all: usize,
    cells: Vec<JoinCell>,
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
        let mut cells = Vec::new();
        let mut candidates = 0;
        for cols in subsets(width, north_rows.count_ones()).map(|c| c as usize) {
            let (above, below) = (upper.cell(cols).len(), lower.cell(all & !cols).len());
            if above * below == 0 {
                continue;
            }
            cells.push(JoinCell {
                cols,
                first: candidates,
                upper_at: quarters.north.flat_place(north_rows, cols),
                lower_at: quarters.south.flat_place(south_rows, all & !cols),
                lower_len: below,
            });
            candidates += above * below;
        }
        Joinable {
            quarters,
            upper,
            lower,
            all,
            cells,
            avoid,
            candidates,
            reckoned: candidates,
        }
    }

    /// The patterns the half is reckoned to hold ([`Joinable::sample`]).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn reckoned(&self) -> usize {
        self.reckoned
    }

    /// The candidates of the half on the board rows `rows` (the north placements on some
    /// columns times the south ones on the others, summed over the columns): counted
    /// before its cells are made (most halves below N = 19 have fewer than a device joins).
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

    /// The diagonals no pattern may take (the middle column's queen's, or none).
    pub fn avoid(&self) -> Pattern {
        self.avoid
    }

    /// How far a north placement's main and anti-diagonal words move up when unpacked.
    pub fn unpack_shifts(&self) -> (u32, u32) {
        let (main, anti) = self.quarters.north.region().lowest_diagonals();
        (main as u32, anti as u32)
    }

    /// The cells as a device reads them ([`CELL_WORDS`] each): the first candidate (from
    /// `first` on), where its north and south placements start in the flat tables, and how
    /// many south ones it has.
    pub fn cell_words(&self, first: u32) -> impl ExactSizeIterator<Item = [u32; CELL_WORDS]> + '_ {
        (self.cells.iter()).map(move |c| {
            [
                first + c.first as u32,
                c.upper_at,
                c.lower_at,
                c.lower_len as u32,
            ]
        })
    }

    fn cell(&self, c: &JoinCell) -> Cell<'a> {
        (self.upper.cell(c.cols), self.lower.cell(self.all & !c.cols))
    }

    /// Candidate `k` joined, or `None` where its placements share a diagonal.
    pub fn pattern(&self, k: usize) -> Option<Pattern> {
        let c = &self.cells[self.cells.partition_point(|c| c.first <= k) - 1];
        let (above, below) = self.cell(c);
        let local = k - c.first;
        let region = self.quarters.north.region();
        self.joined(
            above[local / c.lower_len].unpack(region),
            below[local % c.lower_len],
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
