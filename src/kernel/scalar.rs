//! The depth-first search: leaves that need each board (canonical forms, tie frames) on the
//! portable kernel, and subtasks with fewer than three rows left on every kernel. It finds
//! completions in lexicographic order.

use super::search::{Leaf, Start};
use crate::board::{Attacks, RowMasks, MAX_N};
use std::sync::atomic::{AtomicBool, Ordering};

/// Visits every completion of `start` (in lexicographic order when `L::NEEDS_BOARD`).
///
/// `board[r]` holds the one-hot mask of the queen of row `r` for the rows already placed
/// (only read when `L::NEEDS_BOARD`). `MUST` false skips the required-column check, for
/// frames without `must` masks. Returns the number of queens placed during the search above
/// the last row (the "nodes" of `--stats`; a queen on the last row is a solution, counted by
/// the leaf), or `None` when `stop` was set before the search finished (what the leaf saw is
/// then incomplete).
///
/// `bmi`: compiled with popcnt (node counts) and bmi1 (`blsi`/`blsr` for the lowest bit),
/// about a tenth faster than the baseline x86-64 build; the caller found the CPU has them.
pub fn depth_first<L: Leaf, const MUST: bool>(
    bmi: bool,
    start: Start,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    let search = Search {
        start,
        board,
        leaf,
        stop,
    };
    #[cfg(target_arch = "x86_64")]
    if bmi {
        // SAFETY: the caller found popcnt and bmi1 on this CPU (`super::Chosen`).
        return unsafe { search_bmi::<L, MUST>(search) };
    }
    let _ = bmi;
    search_body::<L, MUST>(search)
}

/// A search's start, its board, leaf and stop flag.
struct Search<'a, L> {
    start: Start<'a>,
    board: &'a mut [u64; MAX_N],
    leaf: &'a mut L,
    stop: &'a AtomicBool,
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
fn search_bmi<L: Leaf, const MUST: bool>(search: Search<L>) -> Option<u64> {
    search_body::<L, MUST>(search)
}

/// Rows searched by the unrolled levels under the loop (the last two of them branch-free).
/// Each level is its own copy of the loop, so the branch predictor learns every depth apart:
/// what gcc gets from inlining the seed's recursion into itself. With the branch-free last
/// two rows, about a fifth faster than one loop for all rows (Zen 3 and Sapphire Rapids).
const UNROLLED: usize = 8;

/// Stack frames entered by the loop between two looks at the stop flag (each runs
/// [`UNROLLED`] rows, thousands of nodes at most).
const STOP_CHECK_FRAMES: u64 = 1 << 4;

/// What the unrolled levels share.
struct Tail<'a> {
    masks: &'a RowMasks,
    /// All columns of the board.
    full: u64,
    /// Whether one of the last two rows has required columns (then they are not counted
    /// branch-free).
    must_at_end: bool,
}

#[inline(always)]
fn search_body<L: Leaf, const MUST: bool>(search: Search<L>) -> Option<u64> {
    let Search {
        start,
        board,
        leaf,
        stop,
    } = search;
    let Start {
        n,
        masks,
        row: start_row,
        attacks,
    } = start;
    if start_row >= n {
        leaf.solution(&board[..n]);
        return Some(0);
    }
    let tail = Tail {
        masks,
        full: crate::board::full_mask(n),
        must_at_end: MUST && masks.must_row + 2 >= n,
    };
    let first_free = free_squares::<MUST>(masks, start_row, attacks);
    let unrolled_row = n.saturating_sub(UNROLLED);
    if start_row >= unrolled_row {
        return Some(levels::<L, MUST>(
            &tail, n, start_row, first_free, attacks, board, leaf,
        ));
    }
    // The row being tried lives in registers; the rows above it wait on a stack, written
    // only on the way down (`row < n <= MAX_N`, so `row % MAX_N` indexes without a check).
    let mut stack_free = [0u64; MAX_N];
    let mut stack_attacks = [Attacks::default(); MAX_N];
    let mut row = start_row;
    let mut free = first_free;
    let mut seen = attacks;
    let mut nodes = 0u64;
    let mut frames = 0u64;
    loop {
        while free != 0 {
            // lowest set bit: the leftmost free column, so completions come out in
            // lexicographic order
            let bit = free & free.wrapping_neg();
            free ^= bit;
            nodes += 1;
            if L::NEEDS_BOARD {
                board[row % MAX_N] = bit;
            }
            let below = seen.place(bit);
            let next = row + 1;
            let next_free = free_squares::<MUST>(masks, next, below);
            if next == unrolled_row {
                nodes += level8::<L, MUST>(&tail, next, next_free, below, board, leaf);
                frames += 1;
                // a stop request is seen within tens of microseconds: with thousands of
                // threads on a few cores, each must see it in its next time slice
                if frames.is_multiple_of(STOP_CHECK_FRAMES) && stop.load(Ordering::Relaxed) {
                    return None;
                }
            } else if next_free != 0 {
                stack_free[row % MAX_N] = free;
                stack_attacks[row % MAX_N] = seen;
                row = next;
                free = next_free;
                seen = below;
            }
        }
        if row == start_row {
            return Some(nodes);
        }
        row -= 1;
        free = stack_free[row % MAX_N];
        seen = stack_attacks[row % MAX_N];
    }
}

/// Searches from `row`, one of the last [`UNROLLED`] rows, with the level for its depth.
#[inline(always)]
fn levels<L: Leaf, const MUST: bool>(
    tail: &Tail,
    n: usize,
    row: usize,
    free: u64,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
) -> u64 {
    match n - row {
        1 => level1::<L, MUST>(tail, row, free, attacks, board, leaf),
        2 => level2::<L, MUST>(tail, row, free, attacks, board, leaf),
        3 => level3::<L, MUST>(tail, row, free, attacks, board, leaf),
        4 => level4::<L, MUST>(tail, row, free, attacks, board, leaf),
        5 => level5::<L, MUST>(tail, row, free, attacks, board, leaf),
        6 => level6::<L, MUST>(tail, row, free, attacks, board, leaf),
        7 => level7::<L, MUST>(tail, row, free, attacks, board, leaf),
        _ => level8::<L, MUST>(tail, row, free, attacks, board, leaf),
    }
}

/// `$name` tries every square of `free` on `row` and goes on with `$below`, the level of the
/// next row; returns the queens it placed.
macro_rules! unrolled_level {
    ($name:ident, $below:ident) => {
        #[inline(always)]
        fn $name<L: Leaf, const MUST: bool>(
            tail: &Tail,
            row: usize,
            mut free: u64,
            attacks: Attacks,
            board: &mut [u64; MAX_N],
            leaf: &mut L,
        ) -> u64 {
            let mut nodes = u64::from(free.count_ones());
            while free != 0 {
                let bit = free & free.wrapping_neg();
                free ^= bit;
                if L::NEEDS_BOARD {
                    board[row % MAX_N] = bit;
                }
                let below = attacks.place(bit);
                let next_free = free_squares::<MUST>(tail.masks, row + 1, below);
                nodes += $below::<L, MUST>(tail, row + 1, next_free, below, board, leaf);
            }
            nodes
        }
    };
}

unrolled_level!(level2_branching, level1);
unrolled_level!(level3, level2);
unrolled_level!(level4, level3);
unrolled_level!(level5, level4);
unrolled_level!(level6, level5);
unrolled_level!(level7, level6);
unrolled_level!(level8, level7);

/// The last two rows: `free` on row `row`, then the one column left on the last row.
/// Counting leaves take both orders of the two open columns without a branch (the bottom
/// rows are where a branch is mispredicted most).
#[inline(always)]
fn level2<L: Leaf, const MUST: bool>(
    tail: &Tail,
    row: usize,
    free: u64,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
) -> u64 {
    let last = row + 1;
    if L::NEEDS_BOARD || (MUST && tail.must_at_end) {
        return level2_branching::<L, MUST>(tail, row, free, attacks, board, leaf);
    }
    let last_allowed = tail.masks.allowed[last % MAX_N];
    // every row above holds a queen, so exactly two columns are open
    let open = tail.full & !attacks.cols;
    let low = open & open.wrapping_neg();
    let high = open ^ low;
    let fits = |here: u64, there: u64| {
        let below = attacks.place(here);
        (free & here != 0) & (last_allowed & there & !below.blocked() != 0)
    };
    leaf.add_solutions(u64::from(fits(low, high)) + u64::from(fits(high, low)));
    u64::from(free.count_ones())
}

/// The last row: `free` holds the one column left, or nothing.
#[inline(always)]
fn level1<L: Leaf, const MUST: bool>(
    _tail: &Tail,
    row: usize,
    free: u64,
    _attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
) -> u64 {
    if free != 0 {
        if L::NEEDS_BOARD {
            board[row % MAX_N] = free;
        }
        leaf.solution(&board[..=row]);
    }
    // a queen on the last row is a solution, not a node
    0
}

/// Free squares of `row`; `MUST` = false skips the required-column check.
#[inline(always)]
fn free_squares<const MUST: bool>(masks: &RowMasks, row: usize, attacks: Attacks) -> u64 {
    if MUST {
        masks.free(row % MAX_N, attacks)
    } else {
        debug_assert!(!masks.has_must());
        masks.allowed[row % MAX_N] & !attacks.blocked()
    }
}
