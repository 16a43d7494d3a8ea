//! Building the patterns of one half of the board: from quarter tables, or by search.
//!
//! A half (the east or west columns) with a given set of rows holds one queen per row and per
//! column. Its north rows take some of the columns and its south rows the rest, so every
//! pattern of the half is a north-quarter placement on (north rows, X) next to a south-quarter
//! placement on (south rows, the other columns), with no diagonal between them.

use super::join::pair_up;
use super::sieve::Pattern;
use super::PairKernel;
use crate::error::Error;
use crate::parallel::Workers;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Every non-attacking placement in one quarter of the board (at most one queen per row and
/// column), indexed by the (rows, columns) it occupies.
#[derive(Debug)]
pub(crate) struct Quarter {
    row0: usize,
    rows: usize,
    col0: usize,
    cols: usize,
    /// The placements on the quarter's rows `r` (bit `i`: row `row0 + i`) at `by_rows[r]`.
    by_rows: Vec<RowSet>,
}

/// The placements of a quarter on one set of its rows, by the columns they take.
#[derive(Debug, Default)]
struct RowSet {
    /// Placements on the quarter's columns `c` at `offsets[c]..offsets[c + 1]` (empty when
    /// the row set has none).
    offsets: Vec<u32>,
    patterns: Vec<Pattern>,
}

/// The rows `row0..row0 + rows` and columns `col0..col0 + cols` of an `n`×`n` board.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Region {
    pub n: usize,
    pub row0: usize,
    pub rows: usize,
    pub col0: usize,
    pub cols: usize,
}

impl RowSet {
    /// Every placement of `region` with a queen on each of its rows `rows` and on no other.
    fn build(region: Region, rows: usize) -> RowSet {
        /// The queens go on the rows of `rows` lowest first; `right` and `left` are the
        /// columns that the queens above attack in the row being filled, along the diagonals
        /// going right and left.
        #[derive(Clone, Copy)]
        struct Step {
            rows: usize,
            row: usize,
            cols: usize,
            right: usize,
            left: usize,
            p: Pattern,
        }
        fn go(r: Region, at: Step, out: &mut Vec<(usize, Pattern)>) {
            let mut free = !(at.cols | at.right | at.left) & ((1 << r.cols) - 1);
            let rest = at.rows & (at.rows - 1);
            // the gap to the next row moves the attacked columns that many places
            let gap = (rest.trailing_zeros() as usize).wrapping_sub(at.row);
            while free != 0 {
                let j = free.trailing_zeros() as usize;
                let bit = free & free.wrapping_neg();
                free ^= bit;
                let p = at.p.with(Pattern::queen(r.n, r.row0 + at.row, r.col0 + j));
                let cols = at.cols | bit;
                if rest == 0 {
                    out.push((cols, p));
                    continue;
                }
                let next = Step {
                    rows: rest,
                    row: at.row + gap,
                    cols,
                    right: (at.right | bit) << gap,
                    left: (at.left | bit) >> gap,
                    p,
                };
                go(r, next, out);
            }
        }
        let mut found = Vec::new();
        if rows == 0 {
            found.push((0, Pattern::default()));
        } else {
            let first = Step {
                rows,
                row: rows.trailing_zeros() as usize,
                cols: 0,
                right: 0,
                left: 0,
                p: Pattern::default(),
            };
            go(region, first, &mut found);
        }
        if found.is_empty() {
            return RowSet::default();
        }
        // counting sort by columns: each cell's placements contiguous, in search order
        let mut offsets = vec![0u32; (1 << region.cols) + 1];
        for &(cols, _) in &found {
            offsets[cols + 1] += 1;
        }
        for c in 1..offsets.len() {
            offsets[c] += offsets[c - 1];
        }
        let mut cursor = offsets.clone();
        let mut patterns = vec![Pattern::default(); found.len()];
        for (cols, p) in found {
            patterns[cursor[cols] as usize] = p;
            cursor[cols] += 1;
        }
        RowSet { offsets, patterns }
    }

    fn cell(&self, cols: usize) -> &[Pattern] {
        match self.offsets.get(cols..cols + 2) {
            Some(&[from, to]) => &self.patterns[from as usize..to as usize],
            _ => &[],
        }
    }

    fn bytes(&self) -> u64 {
        (self.patterns.len() * std::mem::size_of::<Pattern>()
            + self.offsets.len() * std::mem::size_of::<u32>()) as u64
    }
}

impl Quarter {
    /// The tables of `regions`, built in parallel (one task per quarter and row set), or
    /// `None` as soon as they pass `memory_limit` bytes or `stop` is set: what was built is
    /// dropped, so the peak stays near the limit.
    pub(crate) fn build_within<const Q: usize>(
        regions: [Region; Q],
        memory_limit: u64,
        workers: &Workers,
        stop: &AtomicBool,
    ) -> Result<Option<[Quarter; Q]>, Error> {
        let used = AtomicU64::new(0);
        let over = AtomicBool::new(false);
        let tasks: Vec<(usize, usize)> = (0..Q)
            .flat_map(|q| (0..1usize << regions[q].rows).map(move |rows| (q, rows)))
            .collect();
        let next = AtomicUsize::new(0);
        let built = workers.at_most(tasks.len()).run(|_| {
            let mut built = Vec::new();
            while !over.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                let task = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(q, rows)) = tasks.get(task) else {
                    break;
                };
                let set = RowSet::build(regions[q], rows);
                if used.fetch_add(set.bytes(), Ordering::Relaxed) + set.bytes() > memory_limit {
                    over.store(true, Ordering::Relaxed);
                }
                built.push((task, set));
            }
            built
        })?;
        if over.into_inner() || stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // in task order: each quarter's row sets, quarter after quarter
        let mut sets: Vec<(usize, RowSet)> = built.into_iter().flatten().collect();
        sets.sort_unstable_by_key(|&(task, _)| task);
        let mut sets = sets.into_iter().map(|(_, set)| set);
        Ok(Some(regions.map(|region| Quarter {
            row0: region.row0,
            rows: region.rows,
            col0: region.col0,
            cols: region.cols,
            by_rows: sets.by_ref().take(1 << region.rows).collect(),
        })))
    }

    /// The placements on exactly `rows` and `cols` (board bit masks, clipped to the quarter).
    fn cell(&self, rows: u64, cols: u64) -> &[Pattern] {
        let r = (rows >> self.row0) as usize & ((1 << self.rows) - 1);
        let c = (cols >> self.col0) as usize & ((1 << self.cols) - 1);
        self.by_rows[r].cell(c)
    }

    /// Bytes held by the table.
    pub(crate) fn bytes(&self) -> u64 {
        self.by_rows.iter().map(RowSet::bytes).sum()
    }

    /// Rows of the board this quarter covers, as a mask.
    fn row_mask(&self) -> u64 {
        ((1u64 << self.rows) - 1) << self.row0
    }
}

/// Bytes [`Quarter::build_within`] takes for `region`: its placements counted, not built
/// (each row set's, as its [`RowSet`] holds them), once per shape and process (a quarter's
/// placements do not depend on where it lies on the board).
pub(crate) fn table_bytes(region: Region) -> u64 {
    static COUNTED: std::sync::Mutex<Vec<((usize, usize), u64)>> =
        std::sync::Mutex::new(Vec::new());
    let shape = (region.rows, region.cols);
    let mut counted = COUNTED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(&(_, bytes)) = counted.iter().find(|(s, _)| *s == shape) {
        return bytes;
    }
    // placements per row set, by a search that skips or fills each row in turn
    let mut per_rows = vec![0u64; 1 << region.rows];
    fn go(r: Region, row: usize, rows: usize, cols: u64, right: u64, left: u64, out: &mut [u64]) {
        if row == r.rows {
            out[rows] += 1;
            return;
        }
        // the row left empty: the diagonals move on one column
        go(r, row + 1, rows, cols, right << 1, left >> 1, out);
        let mut free = !(cols | right | left) & ((1 << r.cols) - 1);
        while free != 0 {
            let bit = free & free.wrapping_neg();
            free ^= bit;
            let (right, left) = ((right | bit) << 1, (left | bit) >> 1);
            go(r, row + 1, rows | 1 << row, cols | bit, right, left, out);
        }
    }
    go(region, 0, 0, 0, 0, 0, &mut per_rows);
    let offsets = ((1 << region.cols) + 1) * std::mem::size_of::<u32>() as u64;
    let bytes = per_rows
        .iter()
        .filter(|&&placements| placements > 0)
        .map(|&placements| placements * std::mem::size_of::<Pattern>() as u64 + offsets)
        .sum();
    counted.push((shape, bytes));
    bytes
}

/// Appends to `out` every pattern of the half with queens on `rows` and on every column of
/// `cols`, none on a diagonal of `avoid`, joining the placements of its `[north, south]`
/// quarters (on the loop `pairs`). It does not look at the stop flag: a look per subset of
/// columns cost 3 % of `count 17 -t 1`, and a half takes milliseconds at most.
pub(crate) fn half_from_tables(
    [north, south]: [&Quarter; 2],
    rows: u64,
    cols: u64,
    avoid: Pattern,
    pairs: PairKernel,
    out: &mut Vec<Pattern>,
) {
    let north_rows = rows & north.row_mask();
    let queens = north_rows.count_ones();
    let (low, width) = (cols.trailing_zeros().min(63), cols.count_ones());
    debug_assert_eq!(
        cols >> low,
        (1 << width) - 1,
        "a half's columns are contiguous"
    );
    for chosen in subsets(width, queens) {
        let x = chosen << low;
        let upper = north.cell(north_rows, x);
        if !upper.is_empty() {
            let lower = south.cell(rows & !north_rows, cols & !x);
            pair_up(pairs, upper, lower, avoid, out);
        }
    }
}

/// Every set of `size` bits out of the low `width` bits, in increasing order.
pub(crate) fn subsets(width: u32, size: u32) -> impl Iterator<Item = u64> {
    let first = (1u64 << size) - 1;
    let past = 1u64 << width;
    std::iter::successors((size <= width).then_some(first), move |&s| {
        if s == 0 {
            return None;
        }
        // the next number with as many bits (Gosper): carry the lowest run up by one, put
        // the rest of the run back at the bottom
        let lowest = s & s.wrapping_neg();
        let carried = s + lowest;
        let next = carried | (((s ^ carried) >> 2) / lowest);
        (next < past).then_some(next)
    })
}

/// The patterns [`half_from_tables`] gives, found by a depth-first search over the rows
/// instead (no tables: for boards whose tables do not fit the memory limit).
pub(crate) fn half_by_search(
    n: usize,
    rows: u64,
    cols: u64,
    avoid: Pattern,
    out: &mut Vec<Pattern>,
) {
    let order: Vec<usize> = (0..n).filter(|r| rows >> r & 1 != 0).collect();
    if order.is_empty() {
        out.push(Pattern::default());
        return;
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
                return;
            }
            i -= 1;
            continue;
        }
        let bit = free[i] & free[i].wrapping_neg();
        free[i] ^= bit;
        let r = order[i];
        let placed = pattern[i].with(Pattern::queen(n, r, bit.trailing_zeros() as usize));
        if i + 1 == k {
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

    /// The tables of `region` within `limit` bytes, built on this thread.
    fn build(region: Region, limit: u64) -> Option<Quarter> {
        let never = AtomicBool::new(false);
        let built = Quarter::build_within([region], limit, &Workers::this_thread(), &never);
        built.unwrap().map(|[quarter]| quarter)
    }

    #[test]
    fn table_bytes_are_what_the_built_tables_take() {
        for n in [4, 7, 10, 13] {
            for region in crate::quadrant::regions(n) {
                let built = build(region, u64::MAX).unwrap().bytes();
                assert_eq!(table_bytes(region), built, "n={n} {region:?}");
            }
        }
    }

    #[test]
    fn tables_are_built_within_the_limit_or_not_at_all() {
        let region = Region {
            n: 12,
            row0: 0,
            rows: 6,
            col0: 6,
            cols: 6,
        };
        let whole = build(region, u64::MAX).unwrap().bytes();
        assert!(whole > 0);
        assert!(build(region, whole).is_some());
        assert!(build(region, whole - 1).is_none());
    }

    #[test]
    fn subsets_are_every_choice_in_order() {
        for width in 0..=9u32 {
            for size in 0..=width + 1 {
                let got: Vec<u64> = subsets(width, size).collect();
                let want: Vec<u64> = (0..1u64 << width)
                    .filter(|s| s.count_ones() == size)
                    .collect();
                assert_eq!(got, want, "{size} of {width}");
            }
        }
    }
}
