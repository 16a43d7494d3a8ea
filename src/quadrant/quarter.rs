//! Building the patterns of one half of the board: from quarter tables, or by search.
//!
//! A half (the east or west columns) with a given set of rows holds one queen per row and per
//! column. Its north rows take some of the columns and its south rows the rest, so every
//! pattern of the half is a north-quarter placement on (north rows, X) next to a south-quarter
//! placement on (south rows, the other columns), with no diagonal between them.

use crate::kernel::join;
use crate::kernel::sieve::Pattern;
use crate::kernel::Kernel;

/// Every non-attacking placement in one quarter of the board (at most one queen per row and
/// column), indexed by the (rows, columns) it occupies.
#[derive(Debug)]
pub(crate) struct Quarter {
    row0: usize,
    rows: usize,
    col0: usize,
    cols: usize,
    /// Patterns of cell `k` (`rows_bits << cols | cols_bits`) at `offsets[k]..offsets[k + 1]`.
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

impl Region {
    /// Visits every placement in the region with its cell key.
    fn for_each_placement(self, mut visit: impl FnMut(usize, Pattern)) {
        fn go(
            r: Region,
            i: usize,
            row_bits: usize,
            col_bits: usize,
            p: Pattern,
            visit: &mut impl FnMut(usize, Pattern),
        ) {
            if i == r.rows {
                visit(row_bits << r.cols | col_bits, p);
                return;
            }
            go(r, i + 1, row_bits, col_bits, p, visit);
            for j in (0..r.cols).filter(|j| col_bits >> j & 1 == 0) {
                let q = Pattern::queen(r.n, r.row0 + i, r.col0 + j);
                if p.disjoint(q) {
                    go(
                        r,
                        i + 1,
                        row_bits | 1 << i,
                        col_bits | 1 << j,
                        p.with(q),
                        visit,
                    );
                }
            }
        }
        go(self, 0, 0, 0, Pattern::default(), &mut visit);
    }

    /// Cells in the index.
    fn cells(self) -> usize {
        1 << (self.rows + self.cols)
    }

    /// Bytes the quarter table of this region takes, and its placements per cell.
    pub(crate) fn table_size(self) -> (u64, Vec<u32>) {
        let mut per_cell = vec![0u32; self.cells()];
        self.for_each_placement(|k, _| per_cell[k] += 1);
        let placements: u64 = per_cell.iter().map(|&c| u64::from(c)).sum();
        let bytes = placements * std::mem::size_of::<Pattern>() as u64
            + (self.cells() as u64 + 1) * std::mem::size_of::<u32>() as u64;
        (bytes, per_cell)
    }
}

impl Quarter {
    /// The table of `region`, from its per-cell counts ([`Region::table_size`]).
    pub(crate) fn build(region: Region, per_cell: &[u32]) -> Quarter {
        let mut offsets = Vec::with_capacity(per_cell.len() + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &c in per_cell {
            at += c;
            offsets.push(at);
        }
        let mut patterns = vec![Pattern::default(); at as usize];
        let mut cursor: Vec<u32> = offsets[..per_cell.len()].to_vec();
        region.for_each_placement(|k, p| {
            patterns[cursor[k] as usize] = p;
            cursor[k] += 1;
        });
        Quarter {
            row0: region.row0,
            rows: region.rows,
            col0: region.col0,
            cols: region.cols,
            offsets,
            patterns,
        }
    }

    /// The placements on exactly `rows` and `cols` (board bit masks, clipped to the quarter).
    fn cell(&self, rows: u64, cols: u64) -> &[Pattern] {
        let r = (rows >> self.row0) as usize & ((1 << self.rows) - 1);
        let c = (cols >> self.col0) as usize & ((1 << self.cols) - 1);
        let k = r << self.cols | c;
        &self.patterns[self.offsets[k] as usize..self.offsets[k + 1] as usize]
    }

    /// Bytes held by the table.
    pub(crate) fn bytes(&self) -> u64 {
        (self.patterns.len() * std::mem::size_of::<Pattern>()
            + self.offsets.len() * std::mem::size_of::<u32>()) as u64
    }

    /// Rows of the board this quarter covers, as a mask.
    fn row_mask(&self) -> u64 {
        ((1u64 << self.rows) - 1) << self.row0
    }
}

/// Appends to `out` every pattern of the half with queens on `rows` and on every column of
/// `cols`, none on a diagonal of `avoid`, joining `north` and `south` quarter placements
/// (on `kernel`'s loop).
pub(crate) fn join(
    north: &Quarter,
    south: &Quarter,
    rows: u64,
    cols: u64,
    avoid: Pattern,
    kernel: Kernel,
    out: &mut Vec<Pattern>,
) {
    let north_rows = rows & north.row_mask();
    let queens = north_rows.count_ones();
    // `out[..end]` holds the patterns; the rest is room for candidates, sized once per cell
    let mut end = out.len();
    let (low, width) = (cols.trailing_zeros().min(63), cols.count_ones());
    debug_assert_eq!(
        cols >> low,
        (1 << width) - 1,
        "a half's columns are contiguous"
    );
    for chosen in subsets(width, queens) {
        let x = chosen << low;
        {
            let upper = north.cell(north_rows, x);
            if !upper.is_empty() {
                let lower = south.cell(rows & !north_rows, cols & !x);
                let room = end + upper.len() * lower.len();
                if out.len() < room {
                    out.resize(room, Pattern::default());
                }
                end += join::pair_up(kernel, upper, lower, avoid, &mut out[end..room]);
            }
        }
    }
    out.truncate(end);
}

/// Every set of `size` bits out of the low `width` bits, in increasing order.
fn subsets(width: u32, size: u32) -> impl Iterator<Item = u64> {
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

/// The patterns [`join`] gives, found by a depth-first search over the rows instead (no
/// tables: for boards whose tables do not fit the memory limit).
pub(crate) fn search(n: usize, rows: u64, cols: u64, avoid: Pattern, out: &mut Vec<Pattern>) {
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
