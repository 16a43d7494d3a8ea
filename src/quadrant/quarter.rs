//! The quarter tables: every placement in one quarter of the board, by the rows and columns
//! it takes.
//!
//! A half (the east or west columns) with a given set of rows holds one queen per row and per
//! column. Its north rows take some of the columns and its south rows the rest, so every
//! pattern of the half is a north-quarter placement on (north rows, X) next to a south-quarter
//! placement on (south rows, the other columns), with no diagonal between them
//! ([`super::half`] joins them).
//!
//! Both halves are built on the west quarters' tables: the east half is the west half moved
//! `n - n / 2` columns, so its patterns come out in the west's coordinates (see
//! [`super::pattern::Shift`]) and one table per quarter shape serves both halves.

use super::join::keep_disjoint;
use super::pair_kernel::PairKernel;
use super::pattern::{Pattern, Region, Stored};
use super::sizes_file;
use crate::error::Error;
use crate::memory::memory_short;
use crate::parallel::{lock, Workers};
use std::collections::TryReserveError;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Every non-attacking placement in one quarter of the board (at most one queen per row and
/// column), indexed by the (rows, columns) it occupies, each stored as `P`.
#[derive(Debug)]
pub(crate) struct Quarter<P> {
    region: Region,
    /// The placements on the quarter's rows `r` (bit `i`: row `row0 + i`) at `by_rows[r]`.
    by_rows: Vec<RowSet<P>>,
    /// Where row set `r`'s placements start in the table laid out flat, the row sets in
    /// turn ([`Quarter::placements`]): what a device that holds the table finds a cell by.
    flat_at: Vec<u32>,
}

/// The placements of a quarter on one set of its rows, by the columns they take.
#[derive(Debug)]
pub(crate) struct RowSet<P> {
    /// Placements on the quarter's columns `c` at `offsets[c]..offsets[c + 1]` (empty when
    /// the row set has none).
    offsets: Vec<u32>,
    patterns: Vec<P>,
}

impl<P> Default for RowSet<P> {
    fn default() -> Self {
        RowSet {
            offsets: Vec::new(),
            patterns: Vec::new(),
        }
    }
}

impl<P: Stored> RowSet<P> {
    /// Every placement of `region` with a queen on each of its rows `rows` and on no other;
    /// an error when the memory for them cannot be had.
    pub(crate) fn build(region: Region, rows: usize) -> Result<RowSet<P>, TryReserveError> {
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
        fn go(r: Region, at: Step, out: &mut Vec<(usize, Pattern)>) -> Result<(), TryReserveError> {
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
                    out.try_reserve(1)?;
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
                go(r, next, out)?;
            }
            Ok(())
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
            go(region, first, &mut found)?;
        }
        if found.is_empty() {
            return Ok(RowSet::default());
        }
        // counting sort by columns: each cell's placements contiguous, in search order
        let mut offsets = filled(0u32, (1 << region.cols) + 1)?;
        for &(cols, _) in &found {
            offsets[cols + 1] += 1;
        }
        for c in 1..offsets.len() {
            offsets[c] += offsets[c - 1];
        }
        let mut cursor = filled(0u32, offsets.len())?;
        cursor.copy_from_slice(&offsets);
        let mut patterns = filled(P::default(), found.len())?;
        for (cols, p) in found {
            patterns[cursor[cols] as usize] = P::store(region, p);
            cursor[cols] += 1;
        }
        Ok(RowSet { offsets, patterns })
    }
}

impl RowSet<Pattern> {
    /// The placements of this row set that share no diagonal with `avoid`, by the same
    /// columns and in the same order, filtered on the loop `pairs`; an error when the memory
    /// cannot be had.
    pub(crate) fn disjoint_from(
        &self,
        avoid: Pattern,
        pairs: PairKernel,
    ) -> Result<RowSet<Pattern>, TryReserveError> {
        let mut kept = RowSet::default();
        let cells = (&self.offsets[..], &self.patterns[..]);
        keep_disjoint(pairs, cells, avoid, (&mut kept.offsets, &mut kept.patterns))?;
        Ok(kept)
    }
}

/// `len` copies of `value`, or an error when the memory cannot be had.
pub(crate) fn filled<T: Clone>(value: T, len: usize) -> Result<Vec<T>, TryReserveError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)?;
    v.resize(len, value);
    Ok(v)
}

impl<P> RowSet<P> {
    /// The placements on the quarter's columns `cols` (its own bits).
    pub(crate) fn cell(&self, cols: usize) -> &[P] {
        match self.offsets.get(cols..cols + 2) {
            Some(&[from, to]) => &self.patterns[from as usize..to as usize],
            _ => &[],
        }
    }

    /// Bytes the row set holds.
    pub(crate) fn bytes(&self) -> u64 {
        (self.patterns.len() * std::mem::size_of::<P>()
            + self.offsets.len() * std::mem::size_of::<u32>()) as u64
    }
}

impl<P: Stored> Quarter<P> {
    /// The table of `region`, built in parallel (one task per row set), or `None` as soon as
    /// it passes `memory_limit` bytes or `stop` is set: what was built is dropped, so the peak
    /// stays near the limit.
    pub(crate) fn build_within(
        region: Region,
        memory_limit: u64,
        workers: &Workers,
        stop: &AtomicBool,
    ) -> Result<Option<Quarter<P>>, Error> {
        let used = AtomicU64::new(0);
        let over = AtomicBool::new(false);
        let short = AtomicBool::new(false);
        let tasks = 1usize << region.rows;
        let next = AtomicUsize::new(0);
        let built = workers.at_most(tasks).run(|_| {
            let mut built = Vec::new();
            while !over.load(Ordering::Relaxed) && !stop.load(Ordering::Relaxed) {
                let rows = next.fetch_add(1, Ordering::Relaxed);
                if rows >= tasks {
                    break;
                }
                let Ok(set) = RowSet::build(region, rows) else {
                    short.store(true, Ordering::Relaxed);
                    over.store(true, Ordering::Relaxed);
                    break;
                };
                if used.fetch_add(set.bytes(), Ordering::Relaxed) + set.bytes() > memory_limit {
                    over.store(true, Ordering::Relaxed);
                }
                built.push((rows, set));
            }
            built
        })?;
        if short.into_inner() {
            return Err(memory_short("the quadrant engine's tables"));
        }
        if over.into_inner() || stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let mut sets: Vec<(usize, RowSet<P>)> = built.into_iter().flatten().collect();
        sets.sort_unstable_by_key(|&(rows, _)| rows);
        let by_rows: Vec<RowSet<P>> = sets.into_iter().map(|(_, set)| set).collect();
        let flat_at = (by_rows.iter())
            .scan(0u32, |at, set| {
                let start = *at;
                *at += set.patterns.len() as u32;
                Some(start)
            })
            .collect();
        Ok(Some(Quarter {
            region,
            by_rows,
            flat_at,
        }))
    }
}

impl<P> Quarter<P> {
    /// The placements on the board rows `rows` (clipped to the quarter).
    pub(crate) fn row_set(&self, rows: u64) -> &RowSet<P> {
        &self.by_rows[self.region.local_rows(rows)]
    }

    /// The region the table covers.
    pub(crate) fn region(&self) -> Region {
        self.region
    }

    /// Where the placements on the board rows `rows` and the quarter's columns `cols` start
    /// in the table laid out flat ([`Quarter::placements`]).
    pub(crate) fn flat_place(&self, rows: u64, cols: usize) -> u32 {
        let r = self.region.local_rows(rows);
        self.flat_at[r] + self.by_rows[r].offsets.get(cols).copied().unwrap_or(0)
    }

    /// Every placement, the row sets in turn, each by its columns.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn placements(&self) -> impl Iterator<Item = &P> {
        self.by_rows.iter().flat_map(|set| &set.patterns)
    }

    /// The placements.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.by_rows.iter().map(|set| set.patterns.len()).sum()
    }

    /// Bytes held by the table.
    pub(crate) fn bytes(&self) -> u64 {
        self.by_rows.iter().map(RowSet::bytes).sum()
    }
}

/// Placements of a quarter of shape `rows`×`cols`, per row set (bit `i`: the quarter's row
/// `i`), counted, not built: once per shape and process (a quarter's placements do not depend
/// on where it lies on the board), on every core from N = 24, the placements whose first
/// queen is in the east columns counted as the mirrors of those in the west ones; shapes of
/// 12 rows and more (N = 23's south quarter, every quarter from N = 24) kept on disk for the
/// next process ([`sizes_file`]). `None` when `stop` was set first (N = 27's quarters take
/// 10 s on 2 cores).
pub(crate) fn placements(rows: usize, cols: usize, stop: &AtomicBool) -> Option<Arc<[u64]>> {
    type Counted = Vec<((usize, usize), Arc<[u64]>)>;
    static COUNTED: std::sync::Mutex<Counted> = std::sync::Mutex::new(Vec::new());
    let shape = (rows, cols);
    if let Some((_, per_rows)) = lock(&COUNTED).iter().find(|(s, _)| *s == shape) {
        return Some(per_rows.clone());
    }
    let kept = rows >= sizes_file::KEPT_FROM_ROWS;
    let per_rows = match kept.then(|| sizes_file::read(rows, cols)).flatten() {
        Some(read) => read,
        None => {
            // on one thread below 12 rows (tens of milliseconds at most), on every core from
            // them, whatever the count's threads: the sizing comes before them
            let threads = match kept {
                false => 1,
                true => std::thread::available_parallelism().map_or(1, |t| t.get()),
            };
            let counted = count_placements(shape, threads, stop)?;
            if kept {
                sizes_file::write(rows, cols, &counted);
            }
            counted
        }
    };
    let per_rows: Arc<[u64]> = per_rows.into();
    lock(&COUNTED).push((shape, per_rows.clone()));
    Some(per_rows)
}

/// A search that skips or fills each row in turn; the last row's choices are counted,
/// `weight` times each.
struct PlacementCount<'a> {
    shape: (usize, usize),
    weight: u64,
    /// The row the stop flag is looked at on (a few below where the search began).
    look_at: usize,
    out: Vec<u64>,
    stop: &'a AtomicBool,
}

impl PlacementCount<'_> {
    /// The last two rows at once (the widest level of the search, counted, not
    /// visited: N = 26's sizing took twice as long without): `open` is row `row`'s
    /// free columns, `then` row `row + 1`'s when `row` stays empty. A queen on `a` takes
    /// `a` and its two neighbours from the next row.
    fn last_two(&mut self, row: usize, set: usize, open: u64, then: u64) {
        let then = then & ((1 << self.shape.1) - 1);
        let pop = |x: u64| u64::from(x.count_ones());
        let both = pop(open) * pop(then)
            - pop(open & then)
            - pop(open << 1 & then)
            - pop(open >> 1 & then);
        self.out[set] += self.weight;
        self.out[set | 1 << row] += self.weight * pop(open);
        self.out[set | 2 << row] += self.weight * pop(then);
        self.out[set | 3 << row] += self.weight * both;
    }

    /// Row `row` on, the rows above holding the queens of `set`, which take the columns
    /// `cols` and attack the columns `right` and `left` of this row along the diagonals.
    fn go(&mut self, row: usize, set: usize, [cols, right, left]: [u64; 3]) {
        let open = !(cols | right | left) & ((1 << self.shape.1) - 1);
        if row + 1 == self.shape.0 {
            self.out[set] += self.weight;
            self.out[set | 1 << row] += self.weight * u64::from(open.count_ones());
            return;
        }
        if row == self.look_at && self.stop.load(Ordering::Relaxed) {
            return;
        }
        if row + 2 == self.shape.0 {
            self.last_two(row, set, open, !(cols | right << 1 | left >> 1));
            return;
        }
        // the row left empty: the diagonals move on one column
        self.go(row + 1, set, [cols, right << 1, left >> 1]);
        let mut open = open;
        while open != 0 {
            let bit = open & open.wrapping_neg();
            open ^= bit;
            let next = [cols | bit, (right | bit) << 1, (left | bit) >> 1];
            self.go(row + 1, set | 1 << row, next);
        }
    }
}

/// [`placements`] counted on `threads` threads, not kept.
fn count_placements(
    (rows, cols): (usize, usize),
    threads: usize,
    stop: &AtomicBool,
) -> Option<Vec<u64>> {
    let shape = (rows, cols);
    // the placements by their first queen: its row and its column in the west half of the
    // columns, counted twice (the mirror of a placement has the same rows), or the middle one
    let firsts: Vec<(usize, usize, u64)> = (0..rows)
        .flat_map(|row| {
            (0..cols.div_ceil(2)).map(move |col| {
                let mirrored = col != cols - 1 - col;
                (row, col, if mirrored { 2 } else { 1 })
            })
        })
        .collect();
    let next = AtomicUsize::new(0);
    let work = || {
        let mut count = PlacementCount {
            shape,
            weight: 0,
            look_at: 0,
            out: vec![0u64; 1 << rows],
            stop,
        };
        while let Some(&(row, col, weight)) = firsts.get(next.fetch_add(1, Ordering::Relaxed)) {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let bit = 1u64 << col;
            count.weight = weight;
            count.look_at = row + 2;
            if row + 1 == rows {
                count.out[1 << row] += weight;
            } else {
                count.go(row + 1, 1 << row, [bit, bit << 1, bit >> 1]);
            }
        }
        count.out
    };
    let count_on = |workers: Workers| {
        next.store(0, Ordering::Relaxed);
        workers.run(|_| work())
    };
    // a worker that cannot be started (a small address space) fails the run: counted again
    // on this thread alone, which always starts
    let counted = Workers::new(threads, false)
        .and_then(count_on)
        .or_else(|_| count_on(Workers::this_thread()))
        .expect("the calling thread counts");
    let mut out = vec![0u64; 1 << rows];
    // the placement with no queen
    out[0] = 1;
    for part in counted {
        for (total, counted) in out.iter_mut().zip(part) {
            *total += counted;
        }
    }
    (!stop.load(Ordering::Relaxed)).then_some(out)
}

/// Bytes a [`RowSet`] of `placements` placements stored as `P` takes in a quarter `cols`
/// columns wide.
pub(crate) fn row_set_bytes<P>(placements: u64, cols: usize) -> u64 {
    if placements == 0 {
        return 0;
    }
    let offsets = ((1u64 << cols) + 1) * std::mem::size_of::<u32>() as u64;
    placements * std::mem::size_of::<P>() as u64 + offsets
}

/// Bytes [`Quarter::build_within`] takes for `region` with placements stored as `P` (`None`
/// when `stop` was set first).
pub(crate) fn table_bytes<P>(region: Region, stop: &AtomicBool) -> Option<u64> {
    let per_rows = placements(region.rows, region.cols, stop)?;
    Some(
        per_rows
            .iter()
            .map(|&p| row_set_bytes::<P>(p, region.cols))
            .sum(),
    )
}

/// Bytes of the largest [`RowSet`] of `region` with placements stored as `P` (`None` when
/// `stop` was set first).
pub(crate) fn largest_row_set_bytes<P>(region: Region, stop: &AtomicBool) -> Option<u64> {
    let most = placements(region.rows, region.cols, stop)?
        .iter()
        .copied()
        .max();
    Some(row_set_bytes::<P>(most.unwrap_or(0), region.cols))
}

/// Every set of `size` bits out of the low `width` bits, in increasing order.
pub(crate) fn subsets(width: u32, size: u32) -> Subsets {
    Subsets {
        next: (size <= width).then_some((1u64 << size) - 1),
        past: 1u64 << width,
    }
}

/// The sets [`subsets`] gives, one at a time.
#[derive(Clone, Debug)]
pub(crate) struct Subsets {
    next: Option<u64>,
    past: u64,
}

impl Iterator for Subsets {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        let s = self.next?;
        self.next = (s != 0)
            .then(|| {
                // the next number with as many bits (Gosper): carry the lowest run up by
                // one, put the rest of the run back at the bottom
                let lowest = s & s.wrapping_neg();
                let carried = s + lowest;
                carried | ((s ^ carried) >> 2 >> lowest.trailing_zeros())
            })
            .filter(|&next| next < self.past);
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quadrant::pattern::Packed;

    /// The table of `region` within `limit` bytes, built on this thread.
    fn build<P: Stored>(region: Region, limit: u64) -> Option<Quarter<P>> {
        let never = AtomicBool::new(false);
        let built = Quarter::build_within(region, limit, &Workers::this_thread(), &never);
        built.unwrap()
    }

    #[test]
    fn table_bytes_are_what_the_built_tables_take() {
        for n in [4, 7, 10, 13] {
            for region in crate::quadrant::regions(n) {
                let never = AtomicBool::new(false);
                let built = build::<Pattern>(region, u64::MAX).unwrap().bytes();
                let counted = table_bytes::<Pattern>(region, &never);
                assert_eq!(counted, Some(built), "n={n} {region:?}");
                let packed = build::<Packed>(region, u64::MAX).unwrap().bytes();
                let counted = table_bytes::<Packed>(region, &never);
                assert_eq!(counted, Some(packed), "n={n} {region:?}");
                let largest = (0..1 << region.rows)
                    .map(|rows| RowSet::<Pattern>::build(region, rows).unwrap().bytes())
                    .max();
                let counted = largest_row_set_bytes::<Pattern>(region, &never);
                assert_eq!(counted, largest, "n={n} {region:?}");
            }
        }
    }

    #[test]
    fn placements_are_counted_per_row_set_as_the_row_sets_hold_them() {
        // shapes of one to eight rows (the last two rows' shortcut and the plain last row)
        for rows in 1..=8 {
            for cols in 1..=8 {
                let never = AtomicBool::new(false);
                let region = Region {
                    n: 2 * rows.max(cols),
                    row0: 0,
                    rows,
                    col0: 0,
                    cols,
                };
                for threads in [1, 3] {
                    let counted = count_placements((rows, cols), threads, &never).unwrap();
                    for (set, &count) in counted.iter().enumerate() {
                        let built = RowSet::<Pattern>::build(region, set).unwrap();
                        assert_eq!(count, built.patterns.len() as u64, "{rows}x{cols} {set:b}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_stopped_count_is_not_kept() {
        let stopped = AtomicBool::new(true);
        assert_eq!(count_placements((7, 6), 1, &stopped), None);
        // kept counts are the process's, and other tests count the shapes of boards: a shape
        // no board has is counted by this test alone, so it was not counted before
        assert_eq!(placements(3, 9, &stopped), None);
        let never = AtomicBool::new(false);
        // every row set of a quarter, one queen on each of its rows, by a plain search (odd
        // and even widths: the count halves by the columns' mirror)
        for (rows, cols) in [
            (3, 9),
            (7, 6),
            (7, 7),
            (6, 7),
            (1, 1),
            (1, 2),
            (2, 1),
            (3, 0),
            (0, 3),
        ] {
            let counted = placements(rows, cols, &never).unwrap();
            let on_three = count_placements((rows, cols), 3, &never).unwrap();
            assert_eq!(
                &counted[..],
                &on_three[..],
                "{rows}x{cols} on three threads"
            );
            let region = Region {
                n: 16,
                row0: 0,
                rows,
                col0: 0,
                cols,
            };
            let want: Vec<u64> = (0..1u64 << rows)
                .map(|set| {
                    RowSet::<Pattern>::build(region, set as usize)
                        .unwrap()
                        .patterns
                        .len() as u64
                })
                .collect();
            assert_eq!(&counted[..], &want[..], "{rows}x{cols}");
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
        let whole = build::<Pattern>(region, u64::MAX).unwrap().bytes();
        assert!(whole > 0);
        assert!(build::<Pattern>(region, whole).is_some());
        assert!(build::<Pattern>(region, whole - 1).is_none());
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
