//! The sequential leaf search: iterative depth-first search over bitmasks.

use super::Leaf;
use crate::board::{Attacks, RowMasks, MAX_N};
use std::sync::atomic::{AtomicBool, Ordering};

/// Nodes between two looks at the stop flag (a power of two: the test is a mask).
const STOP_CHECK_NODES: u64 = 1 << 16;

/// Visits every completion of a board whose rows `0..start_row` are placed.
///
/// `attacks` is the attack state on row `start_row`; `board[r]` holds the one-hot mask of the
/// queen of row `r` for the rows already placed (only read when `L::NEEDS_BOARD`). `MUST`
/// false skips the required-column check, for frames without `must` masks. Returns the
/// number of queens placed during the search above the last row (the "nodes" of `--stats`;
/// a queen on the last row is a solution, counted by the leaf), or `None` when `stop` was set
/// before the search finished (what the leaf saw is then incomplete).
pub fn search<L: Leaf, const MUST: bool>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") && std::arch::is_x86_feature_detected!("bmi1")
    {
        // SAFETY: `search_bmi` only needs popcnt and bmi1, which this CPU was just found to have.
        return unsafe { search_bmi::<L, MUST>(n, masks, start_row, attacks, board, leaf, stop) };
    }
    search_body::<L, MUST>(n, masks, start_row, attacks, board, leaf, stop)
}

/// The same search compiled with popcnt (node counts) and bmi1 (`blsi`/`blsr` for the lowest
/// bit): about a tenth faster than the baseline x86-64 build.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt,bmi1")]
fn search_bmi<L: Leaf, const MUST: bool>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    search_body::<L, MUST>(n, masks, start_row, attacks, board, leaf, stop)
}

#[inline(always)]
fn search_body<L: Leaf, const MUST: bool>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
    stop: &AtomicBool,
) -> Option<u64> {
    let first_free = if start_row < n {
        free_squares::<MUST>(masks, start_row, attacks)
    } else {
        0
    };
    if start_row + 3 >= n {
        // at most three rows left: no stack needed
        return Some(finish::<L, MUST>(
            n, masks, start_row, first_free, attacks, board, leaf,
        ));
    }
    let last = n - 1;
    // The row being tried lives in registers (`free`, `seen`); the rows above it wait on a
    // stack, written only on the way down. The last three rows are tried inline: the tree is
    // widest there, and they need no stack at all.
    let mut stack = [(0u64, Attacks::default()); MAX_N];
    let mut row = start_row;
    let mut free = first_free;
    let mut seen = attacks;
    let mut nodes = 0u64;
    let mut backtracks = 0u64;
    loop {
        if free == 0 {
            if row == start_row {
                return Some(nodes);
            }
            // a stop request is seen within about a millisecond, at no cost to the other nodes
            backtracks += 1;
            if backtracks.is_multiple_of(STOP_CHECK_NODES) && stop.load(Ordering::Relaxed) {
                return None;
            }
            row -= 1;
            (free, seen) = stack[row];
            continue;
        }
        // lowest set bit: the leftmost free column, so completions come out in lexicographic order
        let bit = free & free.wrapping_neg();
        free ^= bit;
        nodes += 1;
        if L::NEEDS_BOARD {
            board[row] = bit;
        }
        let below = seen.place(bit);
        let next = row + 1;
        let next_free = free_squares::<MUST>(masks, next, below);
        if next + 2 == last {
            nodes += last_three_rows::<L, MUST>(masks, last, next_free, below, board, leaf);
        } else if next_free != 0 {
            stack[row] = (free, seen);
            row = next;
            free = next_free;
            seen = below;
        }
    }
}

/// Completes a board with at most three rows left (also `start_row >= n`).
#[inline(always)]
fn finish<L: Leaf, const MUST: bool>(
    n: usize,
    masks: &RowMasks,
    start_row: usize,
    free: u64,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
) -> u64 {
    if start_row + 3 == n {
        last_three_rows::<L, MUST>(masks, n - 1, free, attacks, board, leaf)
    } else if start_row >= n {
        leaf.solution(&board[..n]);
        0
    } else if start_row + 1 == n {
        if free != 0 {
            if L::NEEDS_BOARD {
                board[start_row] = free;
            }
            leaf.solution(&board[..n]);
        }
        0
    } else {
        last_two_rows::<L, MUST>(masks, n - 1, free, attacks, board, leaf)
    }
}

/// Tries every square of row `last - 2` in `free` (three columns are left, so at most three)
/// and completes each with [`last_two_rows`].
#[inline(always)]
fn last_three_rows<L: Leaf, const MUST: bool>(
    masks: &RowMasks,
    last: usize,
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
            board[last - 2] = bit;
        }
        let below = attacks.place(bit);
        let two = free_squares::<MUST>(masks, last - 1, below);
        nodes += last_two_rows::<L, MUST>(masks, last, two, below, board, leaf);
    }
    nodes
}

/// Tries every square of row `last - 1` in `free` and the one column left for row `last`.
#[inline(always)]
fn last_two_rows<L: Leaf, const MUST: bool>(
    masks: &RowMasks,
    last: usize,
    mut free: u64,
    attacks: Attacks,
    board: &mut [u64; MAX_N],
    leaf: &mut L,
) -> u64 {
    let nodes = free.count_ones() as u64;
    while free != 0 {
        let bit = free & free.wrapping_neg();
        free ^= bit;
        // one column is left for the last row: it is either free or not
        let last_free = free_squares::<MUST>(masks, last, attacks.place(bit));
        if last_free != 0 {
            if L::NEEDS_BOARD {
                board[last - 1] = bit;
                board[last] = last_free;
            }
            leaf.solution(&board[..last + 1]);
        }
    }
    nodes
}

/// Free squares of `row`; `MUST` = false skips the required-column check.
#[inline(always)]
fn free_squares<const MUST: bool>(masks: &RowMasks, row: usize, attacks: Attacks) -> u64 {
    if MUST {
        masks.free(row, attacks)
    } else {
        debug_assert!(!masks.has_must());
        masks.allowed[row] & !attacks.blocked()
    }
}
