//! The portable counting search: the vector kernels' batched algorithm on scalar lanes.
//!
//! Every row has a buffer of pending nodes. A step takes up to 32 nodes of one row;
//! each takes its lowest free square, goes back to its row if it has squares left, and its
//! child joins the next row if the child has a free square. A node's work has no branch
//! that depends on the board (only on the row, which is the same for the whole step), so
//! nothing is mispredicted inside a step and the lanes' work overlaps in the pipeline:
//! depth-first search one node at a time spends about half its time on mispredicted branches.
//! The last two rows are not stored: two columns are left, and both orders are tried.

use super::Leaf;
use crate::board::{required_row_free, Attacks, RowMasks, MAX_N};
use std::sync::atomic::{AtomicBool, Ordering};

/// Nodes expanded per step.
const LANES: usize = 32;

/// Room per row: a row is only expanded when every row below holds less than a step's
/// nodes, so no row ever holds two steps' worth.
const CAP: usize = 2 * LANES;

/// Steps between two looks at the stop flag.
const STOP_CHECK_STEPS: u64 = 1 << 12;

/// Pending nodes of every row (struct of arrays; masks trimmed to the board fit 32 bits).
struct Rows {
    cols: [[u32; CAP]; MAX_N],
    right: [[u32; CAP]; MAX_N],
    left: [[u32; CAP]; MAX_N],
    free: [[u32; CAP]; MAX_N],
    len: [usize; MAX_N],
}

/// Whether a subtask can be counted here: at least three rows left and no required column
/// on the last two rows (they are counted without the check).
pub fn applies(n: usize, masks: &RowMasks, start_row: usize) -> bool {
    n <= MAX_N && start_row + 3 <= n && (!masks.has_must() || masks.must_row + 2 < n)
}

/// Counts the completions of a board whose rows `0..start_row` are placed, giving the
/// solutions to `leaf` in bulk ([`Leaf::add_solutions`]; the leaf must not need boards).
/// Returns the nodes as the depth-first kernel counts them, or `None` when stopped.
///
/// # Panics
/// In debug builds, when [`applies`] does not hold or the leaf needs boards.
pub fn count<L: Leaf>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    debug_assert!(applies(n, masks, start_row) && !L::NEEDS_BOARD);
    ROWS.with_borrow_mut(|rows| {
        rows.len = [0; MAX_N];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt")
            && std::arch::is_x86_feature_detected!("bmi1")
        {
            // SAFETY: `run_bmi` only needs popcnt and bmi1, which this CPU was just found to have.
            return unsafe { run_bmi(rows, n, masks, start_row, attacks, leaf, stop) };
        }
        run(rows, n, masks, start_row, attacks, leaf, stop)
    })
}

thread_local! {
    /// One set of row buffers per worker thread, reused by every subtask it counts.
    static ROWS: std::cell::RefCell<Box<Rows>> = std::cell::RefCell::new(Box::new(Rows {
        cols: [[0; CAP]; MAX_N],
        right: [[0; CAP]; MAX_N],
        left: [[0; CAP]; MAX_N],
        free: [[0; CAP]; MAX_N],
        len: [0; MAX_N],
    }));
}

/// [`run`] compiled with popcnt and bmi1 (`blsi` for the lowest bit).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
fn run_bmi<L: Leaf>(
    rows: &mut Rows,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    run(rows, n, masks, start_row, attacks, leaf, stop)
}

#[inline(always)]
fn run<L: Leaf>(
    rows: &mut Rows,
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    let full = crate::board::full_mask(n) as u32;
    let first_free = masks.free(start_row, attacks) as u32;
    if first_free == 0 {
        return Some(0);
    }
    rows.cols[start_row][0] = attacks.cols as u32;
    rows.right[start_row][0] = (attacks.right_down & u64::from(full)) as u32;
    rows.left[start_row][0] = attacks.left_down as u32;
    rows.free[start_row][0] = first_free;
    rows.len[start_row] = 1;
    // bit r set: row r has pending nodes / at least a step's worth of them
    let mut pending: u32 = 1 << start_row;
    let mut full_rows: u32 = 0;
    let (mut nodes, mut solutions, mut steps) = (0u64, 0u64, 0u64);
    let last_allowed = masks.allowed[n - 1] as u32;
    while pending != 0 {
        steps += 1;
        if steps.is_multiple_of(STOP_CHECK_STEPS) && stop.load(Ordering::Relaxed) {
            return None;
        }
        let row = next_row(pending, full_rows);
        let next = row + 1;
        let step = Step {
            full,
            allowed: masks.allowed[next] as u32,
            must: masks.must as u32,
            last_allowed,
        };
        nodes += if next + 2 == n {
            let (placed, solved) = step.expand_last(rows, row);
            solutions += solved;
            placed
        } else if next == masks.must_row {
            step.expand::<true>(rows, row)
        } else {
            step.expand::<false>(rows, row)
        };
        set_row(
            &mut pending,
            &mut full_rows,
            next,
            rows.len[next % MAX_N],
            LANES,
        );
        set_row(&mut pending, &mut full_rows, row, rows.len[row], LANES);
    }
    leaf.add_solutions(solutions);
    Some(nodes)
}

/// What every node of one step shares: it is on the same row.
struct Step {
    full: u32,
    /// Columns the next row allows.
    allowed: u32,
    /// Columns that must be filled by the next row (when it is the required row).
    must: u32,
    /// Columns the last row allows.
    last_allowed: u32,
}

impl Step {
    /// Takes up to [`LANES`] nodes from the end of `row`: each places a queen on its lowest
    /// free square and its child joins the next row. Returns the queens placed.
    #[inline(always)]
    fn expand<const MUST_ROW: bool>(&self, rows: &mut Rows, row: usize) -> u64 {
        let next = (row + 1) % MAX_N;
        let (base, len) = taken(rows, row);
        let (mut kept, mut pushed) = (base, rows.len[next]);
        for i in base..len {
            let (c2, r2, l2) = self.place_lowest(rows, row, i, &mut kept);
            let mut free2 = self.allowed & !(c2 | r2 | l2);
            if MUST_ROW {
                free2 = required_row_free(free2.into(), (self.must & !c2).into()) as u32;
            }
            put(rows, next, pushed, (c2, r2, l2, free2));
            pushed += usize::from(free2 != 0);
        }
        rows.len[row] = kept;
        rows.len[next] = pushed;
        (len - base) as u64
    }

    /// Like [`Step::expand`] for the row above the last two: two columns are left for
    /// them, tried in both orders. Returns the queens placed (on this row and the next) and
    /// the solutions.
    #[inline(always)]
    fn expand_last(&self, rows: &mut Rows, row: usize) -> (u64, u64) {
        let (base, len) = taken(rows, row);
        let (mut kept, mut placed, mut solved) = (base, 0u64, 0u64);
        for i in base..len {
            let (c2, r2, l2) = self.place_lowest(rows, row, i, &mut kept);
            let free2 = self.allowed & !(c2 | r2 | l2);
            let open = self.full & !c2;
            let low = open & open.wrapping_neg();
            let high = open ^ low;
            for (here, there) in [(low, high), (high, low)] {
                let fits = free2 & here != 0;
                let below = ((r2 | here) << 1) | ((l2 | here) >> 1);
                placed += u64::from(fits);
                solved += u64::from(fits & (self.last_allowed & there & !below != 0));
            }
        }
        rows.len[row] = kept;
        (placed + (len - base) as u64, solved)
    }

    /// Node `i` of `row` places a queen on its lowest free square: the node itself goes back
    /// to position `kept` (which moves on only if it has squares left) and the attacks its
    /// child sees on the next row are returned.
    #[inline(always)]
    fn place_lowest(
        &self,
        rows: &mut Rows,
        row: usize,
        i: usize,
        kept: &mut usize,
    ) -> (u32, u32, u32) {
        let (c, r, l, f) = node(rows, row, i);
        let bit = f & f.wrapping_neg();
        let rest = f ^ bit;
        // compaction in place: `kept <= i`, so no node is overwritten before it is read
        put(rows, row, *kept, (c, r, l, rest));
        *kept += usize::from(rest != 0);
        (c | bit, ((r | bit) << 1) & self.full, (l | bit) >> 1)
    }
}

/// The positions of the nodes a step takes from `row`: its last [`LANES`] (or fewer).
#[inline(always)]
fn taken(rows: &Rows, row: usize) -> (usize, usize) {
    let len = rows.len[row];
    (len - len.min(LANES), len)
}

#[inline(always)]
fn node(rows: &Rows, row: usize, i: usize) -> (u32, u32, u32, u32) {
    let (row, i) = (row % MAX_N, i % CAP);
    (
        rows.cols[row][i],
        rows.right[row][i],
        rows.left[row][i],
        rows.free[row][i],
    )
}

#[inline(always)]
fn put(rows: &mut Rows, row: usize, i: usize, (c, r, l, f): (u32, u32, u32, u32)) {
    let (row, i) = (row % MAX_N, i % CAP);
    rows.cols[row][i] = c;
    rows.right[row][i] = r;
    rows.left[row][i] = l;
    rows.free[row][i] = f;
}

/// The row to expand next: the deepest holding a step's worth; else the shallowest, whose
/// children fill the rows below (a row below a full one never grows, so no row reaches two
/// steps' worth). Shared with the vector kernels.
#[inline(always)]
pub(super) fn next_row(pending: u32, full_rows: u32) -> usize {
    if full_rows != 0 {
        31 - full_rows.leading_zeros() as usize
    } else {
        pending.trailing_zeros() as usize
    }
}

/// Keeps the row bitmaps in step with a row's length (`lanes`: a step's worth).
#[inline(always)]
pub(super) fn set_row(
    pending: &mut u32,
    full_rows: &mut u32,
    row: usize,
    len: usize,
    lanes: usize,
) {
    let bit = 1u32 << row;
    if len > 0 {
        *pending |= bit;
    } else {
        *pending &= !bit;
    }
    if len >= lanes {
        *full_rows |= bit;
    } else {
        *full_rows &= !bit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::split::{EngineChoice, Plan};

    /// Counts solutions but asks for boards, so the scalar kernel searches depth-first.
    #[derive(Default)]
    struct BoardTally(u64);

    impl Leaf for BoardTally {
        const NEEDS_BOARD: bool = true;
        fn solution(&mut self, _rows: &[u64]) {
            self.0 += 1;
        }
    }

    /// Every subtask of plans with and without required columns, at every depth that
    /// leaves the batch at least three rows: the same solutions and nodes as depth-first.
    #[test]
    fn counts_every_subtask_like_the_depth_first_search() {
        let stop = AtomicBool::new(false);
        let mut compared = 0;
        for engine in [EngineChoice::Mirror, EngineChoice::D4] {
            for n in 4..=12 {
                for depth in 1..=3.min(n - 1) {
                    let Ok(plan) = Plan::new(n, engine, None, Some(depth)) else {
                        continue;
                    };
                    for id in 0..plan.len() {
                        let (frame, attacks, mut board) = plan.start(id);
                        let masks = &frame.masks;
                        if !applies(n, masks, plan.depth()) {
                            continue;
                        }
                        let mut batched = crate::kernel::Tally::default();
                        let nodes = count(n, masks, plan.depth(), attacks, &mut batched, &stop);
                        let mut deep = BoardTally::default();
                        let deep_nodes = crate::kernel::search_scalar(
                            n,
                            masks,
                            plan.depth(),
                            attacks,
                            &mut board,
                            &mut deep,
                            &stop,
                        );
                        assert_eq!(
                            (batched.0, nodes),
                            (deep.0, deep_nodes),
                            "{engine:?} n={n} depth={depth} id={id}"
                        );
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 1000, "only {compared} subtasks compared");
    }

    /// A stop request set before the count is seen, not ignored.
    #[test]
    fn a_set_stop_flag_stops_a_long_count() {
        let n = 16;
        let masks = RowMasks::unconstrained(n);
        let stop = AtomicBool::new(true);
        let mut tally = crate::kernel::Tally::default();
        assert_eq!(
            count(n, &masks, 0, Attacks::default(), &mut tally, &stop),
            None
        );
    }
}
