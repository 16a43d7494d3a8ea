//! The batched search: the nodes of one row expanded a vector at a time, written once over
//! [`Lanes`] and compiled for a portable array of 32 lanes, AVX2 (8) and AVX-512 (16).
//!
//! Every row has a buffer of pending nodes (struct of arrays: columns, both diagonals, and the
//! squares still to try). A step takes up to a vector of nodes from the deepest row holding a
//! full vector (or else from the shallowest non-empty row); each lane takes its lowest free
//! square; the lanes that still have squares go back to their row, and the children that have
//! a free square are appended to the next row, both packed by a compress-store. A node's work
//! has no branch that depends on the board (only on the row, the same for the whole step), so
//! nothing inside a step is mispredicted: depth-first search one node at a time spends about
//! half its time on mispredicted branches. The last two rows are not stored: two columns are
//! left at row n-2, so a lane's solutions are counted with two mask tests. Masks are trimmed
//! to the board every row, so 32-bit lanes hold any board up to 32 columns.
//!
//! Leaves that need the whole board (the full-symmetry tie frames, `--unique` with mirror
//! halving) run with *tracking*: every stored node also records an entry (its parent entry and
//! its column) in an arena, so a solution's board is rebuilt from its chain when it is found.
//! Counting leaves skip the arena and count solutions with popcounts.

use super::lanes::{Lanes, Portable};
use super::search::{Leaf, Start};
use crate::board::{Attacks, RowMasks, MAX_N};
use std::sync::atomic::{AtomicBool, Ordering};

/// Room per row: a row is only expanded when the row below holds less than a vector, so no
/// row holds two vectors (of 32 lanes at most).
const CAP: usize = 64;

/// Arena entries one tracked subtask may use (8 bytes each); a larger subtask runs
/// depth-first.
const ARENA_CAP: usize = 1 << 20;

/// Room past the arena's end for whole-vector stores.
const LANE_SLACK: usize = 32;

/// No parent: the node's earlier rows are the subtask's prefix.
const ROOT: u32 = u32::MAX;

/// Steps between two looks at the stop flag.
const STOP_CHECK_STEPS: u64 = 1 << 8;

/// Pending nodes of every row, as a struct of arrays.
struct Buffers {
    cols: [[u32; CAP]; MAX_N],
    right: [[u32; CAP]; MAX_N],
    left: [[u32; CAP]; MAX_N],
    free: [[u32; CAP]; MAX_N],
    /// Arena entry of the queen on the row above (tracking only).
    node: [[u32; CAP]; MAX_N],
    len: [usize; MAX_N],
    /// Arena: parent entry and one-hot column of each placed queen (tracking only).
    parent: Vec<u32>,
    column: Vec<u32>,
}

thread_local! {
    /// One set of row buffers per worker thread, reused by every subtask it counts.
    static BUFFERS: std::cell::RefCell<Box<Buffers>> = std::cell::RefCell::new(Box::new(Buffers {
        cols: [[0; CAP]; MAX_N],
        right: [[0; CAP]; MAX_N],
        left: [[0; CAP]; MAX_N],
        free: [[0; CAP]; MAX_N],
        node: [[0; CAP]; MAX_N],
        len: [0; MAX_N],
        parent: Vec::new(),
        column: Vec::new(),
    }));
}

/// How a batched count ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Finished: the queens placed above the last row (leaves got their solutions).
    Done {
        /// Search nodes, counted as the depth-first kernel counts them.
        nodes: u64,
    },
    /// The stop flag was set.
    Stopped,
    /// The subtask needs more arena than allowed: count it depth-first.
    TooLarge,
}

/// Whether `start` can be counted here: at least three rows left and no required-column
/// check on the last two rows (they are counted without one).
pub fn applies(start: &Start) -> bool {
    let Start { n, masks, row, .. } = *start;
    n <= MAX_N && row + 3 <= n && (!masks.has_must() || masks.must_row + 2 < n)
}

/// The instruction set a batched count runs on: one wrapper each below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    /// Portable, a node at a time, 32 to a step, with popcnt and bmi1 when the CPU has them.
    Portable { bmi: bool },
    /// 8 lanes, AVX2.
    Avx2,
    /// 16 lanes, AVX-512.
    Avx512,
}

/// Counts (or, for leaves that need boards, visits) the completions of `start` (its placed
/// rows one-hot in `prefix`), a vector of nodes at a time.
///
/// # Safety
/// The CPU must have the instructions of `width` (what [`super::Chosen`] checked), and
/// [`applies`] must hold.
pub(crate) unsafe fn count<L: Leaf>(
    width: Width,
    start: Start,
    prefix: &[u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Outcome {
    debug_assert!(applies(&start));
    BUFFERS.with_borrow_mut(|buf| {
        buf.len = [0; MAX_N];
        if L::NEEDS_BOARD {
            buf.parent.clear();
            buf.column.clear();
            // an arena that cannot be had (memory short) sends the subtask depth-first, as
            // one too large for it
            let room = ARENA_CAP + LANE_SLACK;
            if buf.parent.try_reserve(room).is_err() || buf.column.try_reserve(room).is_err() {
                return Outcome::TooLarge;
            }
        }
        let task = Task {
            start,
            prefix,
            stop,
        };
        // SAFETY: the caller guarantees the instructions of `width`.
        unsafe {
            match width {
                Width::Portable { bmi: false } => run::<L, Portable>(buf, &task, leaf),
                Width::Portable { bmi: true } => run_bmi(buf, &task, leaf),
                Width::Avx2 => run_avx2(buf, &task, leaf),
                Width::Avx512 => run_avx512(buf, &task, leaf),
            }
        }
    })
}

/// A count's start, with its prefix and stop flag.
struct Task<'a> {
    start: Start<'a>,
    prefix: &'a [u64; MAX_N],
    stop: &'a AtomicBool,
}

// One wrapper per instruction set: the generic body is inlined into each and compiled for it.

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
unsafe fn run_bmi<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    // SAFETY: the portable lanes use no instruction the CPU might lack.
    unsafe { run::<L, Portable>(buf, task, leaf) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn run_avx2<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    // SAFETY: this function runs only where the CPU has AVX2 (its caller's contract).
    unsafe { run::<L, super::lanes::Avx2>(buf, task, leaf) }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn run_avx512<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    // SAFETY: this function runs only where the CPU has AVX-512F (its caller's contract).
    unsafe { run::<L, super::lanes::Avx512>(buf, task, leaf) }
}

// Elsewhere only the portable lanes exist ([`super::Chosen`] never picks the others).
#[cfg(not(target_arch = "x86_64"))]
unsafe fn run_bmi<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    unsafe { run::<L, Portable>(buf, task, leaf) }
}
#[cfg(not(target_arch = "x86_64"))]
unsafe fn run_avx2<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    unsafe { run::<L, Portable>(buf, task, leaf) }
}
#[cfg(not(target_arch = "x86_64"))]
unsafe fn run_avx512<L: Leaf>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    unsafe { run::<L, Portable>(buf, task, leaf) }
}

/// The batched search on lanes `V`: a step takes up to [`Lanes::BATCH`] nodes of one row,
/// a vector at a time (one vector, or for the one-lane portable kernel a loop of them).
///
/// # Safety
/// The CPU has `V`'s instructions. Every access to a row buffer below stays in it: a row
/// never holds two batches (a row is only expanded when the one below holds less than a
/// batch), so a whole vector read or written from a row's `base`, `kept` or `len` ends within
/// `2 * BATCH <= CAP`; the arena keeps [`LANE_SLACK`] entries past [`ARENA_CAP`] for whole
/// vectors stored at its end. Nodes are packed in place: `kept` never passes `from`, so a
/// vector stored at `kept` covers only nodes already read (a step is one vector, or vectors
/// of one lane).
#[inline(always)]
unsafe fn run<L: Leaf, V: Lanes>(buf: &mut Buffers, task: &Task, leaf: &mut L) -> Outcome {
    let (start, prefix, stop) = (task.start, task.prefix, task.stop);
    let (n, masks, start_row) = (start.n, start.masks, start.row);
    let full = crate::board::full_mask(n) as u32;
    if !buf.push_root(masks, start_row, start.attacks, full) {
        return Outcome::Done { nodes: 0 };
    }
    // bit r set: row r has pending nodes / at least a vector of them
    let mut pending: u32 = 1 << start_row;
    let mut full_rows: u32 = 0;
    let (mut nodes, mut steps) = (0u64, 0u64);
    // SAFETY: see the function's contract.
    unsafe {
        let zero = V::splat(0);
        let board = V::splat(full);
        let last_allowed = V::splat(masks.allowed[n - 1] as u32);
        while pending != 0 {
            steps += 1;
            if steps.is_multiple_of(STOP_CHECK_STEPS) && stop.load(Ordering::Relaxed) {
                return Outcome::Stopped;
            }
            let row = next_row(pending, full_rows);
            let next = row + 1;
            let allowed = V::splat(masks.allowed[next] as u32);
            let must_row = next == masks.must_row;
            let last_rows = next + 2 == n;
            let len = buf.len[row];
            let take = len.min(V::BATCH);
            let base = len - take;
            nodes += take as u64;
            // the nodes stay packed in place (a write never passes the next read), the
            // children are appended to the next row
            let (mut kept, mut grown) = (base, buf.len[next]);
            let mut from = base;
            while from < len {
                let width = (len - from).min(V::WIDTH);
                let lanes = V::first(width);
                let c = V::load(buf.cols[row].as_ptr().add(from), width);
                let r = V::load(buf.right[row].as_ptr().add(from), width);
                let l = V::load(buf.left[row].as_ptr().add(from), width);
                let f = V::load(buf.free[row].as_ptr().add(from), width);
                let p = if L::NEEDS_BOARD {
                    V::load(buf.node[row].as_ptr().add(from), width)
                } else {
                    zero
                };
                from += width;
                // each lane takes its lowest free square; those with squares left stay
                let bit = f.lowest();
                let rest = f.xor(bit);
                let keep = rest.nonzero_in(lanes);
                c.compress_store(buf.cols[row].as_mut_ptr().add(kept), keep);
                r.compress_store(buf.right[row].as_mut_ptr().add(kept), keep);
                l.compress_store(buf.left[row].as_mut_ptr().add(kept), keep);
                rest.compress_store(buf.free[row].as_mut_ptr().add(kept), keep);
                if L::NEEDS_BOARD {
                    p.compress_store(buf.node[row].as_mut_ptr().add(kept), keep);
                }
                kept += keep.count_ones() as usize;
                let c2 = c.or(bit);
                let r2 = r.or(bit).shl1().and(board);
                let l2 = l.or(bit).shr1();
                let mut free2 = c2.or(r2).or(l2).and_not(allowed);
                if must_row {
                    free2 = within_must(free2, c2, masks.must as u32);
                }
                if last_rows {
                    let child = [c2, r2, l2, free2, p, bit];
                    let last = (board, last_allowed);
                    nodes += last_two_rows(buf, leaf, (prefix, n, row), lanes, child, last);
                    continue;
                }
                let push = free2.nonzero_in(lanes);
                debug_assert!(grown + V::WIDTH <= CAP);
                c2.compress_store(buf.cols[next].as_mut_ptr().add(grown), push);
                r2.compress_store(buf.right[next].as_mut_ptr().add(grown), push);
                l2.compress_store(buf.left[next].as_mut_ptr().add(grown), push);
                free2.compress_store(buf.free[next].as_mut_ptr().add(grown), push);
                let pushed = push.count_ones() as usize;
                if L::NEEDS_BOARD && pushed > 0 && !record_parents(buf, (p, bit), push, next, grown)
                {
                    return Outcome::TooLarge;
                }
                grown += pushed;
            }
            buf.len[row] = kept;
            if !last_rows {
                buf.len[next] = grown;
                set_row(&mut pending, &mut full_rows, next, grown, V::BATCH);
            }
            set_row(&mut pending, &mut full_rows, row, kept, V::BATCH);
        }
    }
    Outcome::Done { nodes }
}

/// The free squares `free` of children whose columns are `cols` on the row that must hold
/// the columns `must`: one must column missing, this row must take it; two or more, none.
///
/// # Safety
/// As [`run`]'s: the lanes' instruction set is this CPU's.
#[inline(always)]
unsafe fn within_must<V: Lanes>(free: V, cols: V, must: u32) -> V {
    // SAFETY: see the function's contract
    unsafe {
        let missing = cols.and_not(V::splat(must));
        let none = missing.zero_lanes();
        let at_most_one = missing.and(missing.sub(V::splat(1))).zero_lanes();
        free.and(missing.or(none)).and(at_most_one)
    }
}

/// Rows n-2 and n-1 of the children `[cols, right, left, free, parent, bit]` in `lanes`
/// (their row `row`'s queen just placed): two columns u < v are left, tried u then v on row
/// n-2 against the last row's mask; solutions go to `leaf`. The nodes placed.
///
/// # Safety
/// As [`run`]'s: called from it with its buffers.
#[inline(always)]
unsafe fn last_two_rows<L: Leaf, V: Lanes>(
    buf: &Buffers,
    leaf: &mut L,
    (prefix, n, row): (&[u64; MAX_N], usize, usize),
    lanes: u32,
    [c2, r2, l2, free2, p, bit]: [V; 6],
    (board, last_allowed): (V, V),
) -> u64 {
    let mut nodes = 0;
    // SAFETY: see the function's contract (a lane array holds 32 lanes, every width's)
    unsafe {
        let open = c2.and_not(board);
        let u = open.lowest();
        let v = open.xor(u);
        for (here, there) in [(u, v), (v, u)] {
            let placed = free2.and(here).nonzero_in(lanes);
            let r3 = r2.or(here).shl1();
            let l3 = l2.or(here).shr1();
            let ok = r3.or(l3).and_not(there.and(last_allowed));
            let solved = ok.nonzero_in(placed);
            nodes += u64::from(placed.count_ones());
            if L::NEEDS_BOARD {
                if solved != 0 {
                    let mut lanes_of = [[0u32; 32]; 4];
                    for (dst, v) in lanes_of.iter_mut().zip([p, bit, here, there]) {
                        v.store(dst.as_mut_ptr());
                    }
                    emit_tracked(buf, leaf, prefix, n, row, solved, &lanes_of);
                }
            } else {
                leaf.add_solutions(u64::from(solved.count_ones()));
            }
        }
    }
    nodes
}

/// Records the parent and column of the children in `push`, stored at `grown` on row
/// `next`, in the arena, and points them at their entries: false where the arena is full.
///
/// # Safety
/// As [`run`]'s: `reserve(ARENA_CAP + LANE_SLACK)` made room for a whole vector from any
/// entry up to [`ARENA_CAP`]; `set_len` then keeps only the packed lanes.
#[inline(always)]
unsafe fn record_parents<V: Lanes>(
    buf: &mut Buffers,
    (p, bit): (V, V),
    push: u32,
    next: usize,
    grown: usize,
) -> bool {
    let pushed = push.count_ones() as usize;
    let entry = buf.parent.len();
    if entry + pushed > ARENA_CAP {
        return false;
    }
    // SAFETY: see the function's contract
    unsafe {
        p.compress_store(buf.parent.as_mut_ptr().add(entry), push);
        bit.compress_store(buf.column.as_mut_ptr().add(entry), push);
        buf.parent.set_len(entry + pushed);
        buf.column.set_len(entry + pushed);
        V::iota(entry as u32).store(buf.node[next].as_mut_ptr().add(grown));
    }
    true
}

/// Rebuilds the board of every lane set in `solved` and hands it to `leaf`. `lanes` holds,
/// per lane, the arena entry of the node's parent queen, the queen just placed on `row`, and
/// the queens of rows n-2 and n-1.
fn emit_tracked<L: Leaf>(
    buf: &Buffers,
    leaf: &mut L,
    prefix: &[u64; MAX_N],
    n: usize,
    row: usize,
    solved: u32,
    lanes: &[[u32; 32]; 4],
) {
    let [parents, bits, heres, theres] = lanes;
    let mut todo = solved;
    while todo != 0 {
        let lane = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let mut rows = *prefix;
        rows[n - 1] = theres[lane] as u64;
        rows[n - 2] = heres[lane] as u64;
        rows[row] = bits[lane] as u64;
        let mut entry = parents[lane];
        let mut up = row;
        while entry != ROOT {
            up -= 1;
            rows[up] = buf.column[entry as usize] as u64;
            entry = buf.parent[entry as usize];
        }
        leaf.solution(&rows[..n]);
    }
}

impl Buffers {
    /// Stores the subtask's root on `row`; false when it has no free square.
    fn push_root(&mut self, masks: &RowMasks, row: usize, attacks: Attacks, full: u32) -> bool {
        let free = masks.free(row, attacks) as u32;
        if free == 0 {
            return false;
        }
        self.cols[row][0] = attacks.cols as u32;
        self.right[row][0] = (attacks.right_down & u64::from(full)) as u32;
        self.left[row][0] = attacks.left_down as u32;
        self.free[row][0] = free;
        self.node[row][0] = ROOT;
        self.len[row] = 1;
        true
    }
}

/// The row to expand next: the deepest holding a vector's worth; else the shallowest, whose
/// children fill the rows below (a row below a full one never grows, so no row reaches two
/// vectors' worth).
#[inline(always)]
fn next_row(pending: u32, full_rows: u32) -> usize {
    if full_rows != 0 {
        31 - full_rows.leading_zeros() as usize
    } else {
        pending.trailing_zeros() as usize
    }
}

/// Keeps the row bitmaps in step with a row's length (`lanes`: a vector's worth).
#[inline(always)]
fn set_row(pending: &mut u32, full_rows: &mut u32, row: usize, len: usize, lanes: usize) {
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
    use crate::engine::EngineChoice;
    use crate::kernel::{Chosen, Kernel, Tally};
    use crate::plan::Plan;

    /// Counts solutions but asks for boards: batched counts run with tracking.
    #[derive(Default)]
    struct BoardTally(u64);

    impl Leaf for BoardTally {
        const NEEDS_BOARD: bool = true;
        fn solution(&mut self, rows: &[u64]) {
            assert!(rows.iter().all(|r| r.count_ones() == 1), "a whole board");
            self.0 += 1;
        }
    }

    /// The widths this CPU runs, with and without popcnt and bmi1 for the portable one.
    fn widths() -> Vec<Width> {
        let mut all = vec![
            Width::Portable { bmi: false },
            Width::Portable {
                bmi: crate::kernel::features().bmi,
            },
        ];
        for kernel in Kernel::available() {
            match kernel {
                Kernel::Avx2 => all.push(Width::Avx2),
                Kernel::Avx512 => all.push(Width::Avx512),
                Kernel::Scalar => {}
            }
        }
        all
    }

    /// Every subtask of plans with and without required columns, at every depth that
    /// leaves the batch at least three rows, on every width, counting and tracking boards:
    /// the same solutions and nodes as depth-first.
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
                    let rows = plan.rows().unwrap();
                    for id in 0..rows.len() {
                        let (_, start, mut board) = rows.begin(id);
                        if !applies(&start) {
                            continue;
                        }
                        let mut deep = BoardTally::default();
                        let deep_nodes = crate::kernel::depth_first(
                            Chosen::portable(),
                            start,
                            &mut board,
                            &mut deep,
                            &stop,
                        );
                        let done = Outcome::Done {
                            nodes: deep_nodes.unwrap(),
                        };
                        for width in widths() {
                            let mut counted = Tally::default();
                            let mut tracked = BoardTally::default();
                            // SAFETY: `widths` gives what this CPU runs; `applies` holds.
                            let outcomes = unsafe {
                                [
                                    count(width, start, &board, &mut counted, &stop),
                                    count(width, start, &board, &mut tracked, &stop),
                                ]
                            };
                            assert_eq!(outcomes, [done; 2], "{engine:?} n={n} id={id} {width:?}");
                            assert_eq!((counted.0, tracked.0), (deep.0, deep.0), "n={n} id={id}");
                        }
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
        let masks = RowMasks::unconstrained(16);
        let start = Start::empty(16, &masks);
        let stop = AtomicBool::new(true);
        for width in widths() {
            let mut tally = Tally::default();
            // SAFETY: `widths` gives what this CPU runs; `applies` holds.
            let outcome = unsafe { count(width, start, &[0; MAX_N], &mut tally, &stop) };
            assert_eq!(outcome, Outcome::Stopped, "{width:?}");
        }
    }
}
