//! A unit counted again by a row-by-row search restricted to it, without the tables, joins
//! or sieve that counted it (`merge --verify`): a check that cannot repeat their fault.
//! Each unit's search is split at its first rows into parts enough for every thread.

use super::units::Unit;
use crate::board::{Attacks, RowMasks, MAX_N};
use crate::error::Error;
use crate::found::Found;
use crate::kernel::{visit, Chosen, Start, Tally};
use crate::parallel::{lock, Workers};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Parts a recount is split into a thread at the least: parts differ in size by orders of
/// magnitude, and the threads take them as they finish, so the last part is a small share.
const PARTS_A_THREAD: usize = 16;

/// The rows a split reaches at most, short of the last three the batched kernels need.
fn deepest_split(n: usize) -> usize {
    n.saturating_sub(3).min(n / 2)
}

/// One piece of a unit's search: its first `row` rows placed (one-hot in `placed`), and the
/// attacks they cast on row `row`.
#[derive(Clone, Copy)]
struct Part {
    unit: usize,
    row: usize,
    attacks: Attacks,
    placed: [u64; MAX_N],
}

impl Part {
    /// The parts one row deeper under `masks`: a queen on each free allowed square.
    fn children(&self, masks: &RowMasks) -> impl Iterator<Item = Part> + '_ {
        let free = masks.allowed[self.row] & !self.attacks.blocked();
        (0..u64::BITS)
            .filter(move |c| free >> c & 1 != 0)
            .map(move |c| {
                let bit = 1 << c;
                let mut placed = self.placed;
                placed[self.row] = bit;
                Part {
                    unit: self.unit,
                    row: self.row + 1,
                    attacks: self.attacks.place(bit),
                    placed,
                }
            })
    }
}

/// The columns each row of an `n`×`n` board may take in `unit`: the east columns on its
/// rows `E`, the middle column on its middle row, the west columns on the others.
fn unit_rows(n: usize, unit: Unit) -> RowMasks {
    let half = n / 2;
    let west = (1u64 << half) - 1;
    let east = ((1u64 << n) - 1) & !((1u64 << (n - half)) - 1);
    let mut masks = RowMasks::unconstrained(n);
    for (row, allowed) in masks.allowed[..n].iter_mut().enumerate() {
        *allowed = if usize::from(unit.middle_row) == row {
            1 << half
        } else if unit.east_rows >> row & 1 != 0 {
            east
        } else {
            west
        };
    }
    masks
}

/// Counts `unit` of an `n`×`n` board in one row-by-row search on the row kernel `kernel`:
/// the tests' reference for [`recount`]. `None` when `stop` was set first.
#[cfg(test)]
pub(super) fn search(n: usize, unit: Unit, kernel: Chosen, stop: &AtomicBool) -> Option<Found> {
    if unit.weight == 0 {
        return Some(Found::default());
    }
    let masks = unit_rows(n, unit);
    let start = Start {
        n,
        masks: &masks,
        row: 0,
        attacks: Attacks::default(),
    };
    let mut board = [0; MAX_N];
    let (tally, nodes) = visit(kernel, start, &mut board, Tally::default, stop)?;
    Some(found(unit, tally.0, nodes))
}

/// Counts each of `units` of an `n`×`n` board by a row-by-row search restricted to it, on
/// the row kernel `kernel` and `workers`, in the order of `units`: their searches split at
/// their first rows into parts enough to keep every worker busy (one unit of N = 24 takes
/// minutes of one thread).
pub(super) fn recount(
    n: usize,
    units: &[Unit],
    kernel: Chosen,
    workers: &Workers,
) -> Result<Vec<Found>, Error> {
    let masks: Vec<RowMasks> = units.iter().map(|&u| unit_rows(n, u)).collect();
    let (parts, split_nodes) = split(n, units, &masks, workers.count() * PARTS_A_THREAD);
    // each unit's solutions and nodes, the split's nodes first
    let sums = Mutex::new(
        split_nodes
            .into_iter()
            .map(|n| (0u64, n))
            .collect::<Vec<_>>(),
    );
    let next = AtomicUsize::new(0);
    let never = AtomicBool::new(false);
    workers.at_most(parts.len()).run(|_| {
        while let Some(part) = parts.get(next.fetch_add(1, Ordering::Relaxed)) {
            let start = Start {
                n,
                masks: &masks[part.unit],
                row: part.row,
                attacks: part.attacks,
            };
            let mut board = part.placed;
            let (tally, nodes) =
                visit(kernel, start, &mut board, Tally::default, &never).expect("never stopped");
            let sum = &mut lock(&sums)[part.unit];
            sum.0 += tally.0;
            sum.1 += nodes;
        }
    })?;
    let sums = sums.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok((units.iter().zip(sums))
        .map(|(&unit, (solutions, nodes))| found(unit, solutions, nodes))
        .collect())
}

/// `units`' searches split row by row until there are `enough` parts or the split reaches
/// [`deepest_split`], and the nodes each unit's split placed: a unit of weight 0 (its row
/// sets counted under another id) gives none.
fn split(n: usize, units: &[Unit], masks: &[RowMasks], enough: usize) -> (Vec<Part>, Vec<u64>) {
    let mut nodes = vec![0; units.len()];
    let mut parts: Vec<Part> = (units.iter().enumerate())
        .filter(|(_, u)| u.weight != 0)
        .map(|(unit, _)| Part {
            unit,
            row: 0,
            attacks: Attacks::default(),
            placed: [0; MAX_N],
        })
        .collect();
    for _ in 0..deepest_split(n) {
        if parts.len() >= enough {
            break;
        }
        parts = (parts.iter())
            .flat_map(|part| part.children(&masks[part.unit]))
            .collect();
        for part in &parts {
            nodes[part.unit] += 1;
        }
    }
    (parts, nodes)
}

/// What a search of `unit` found: `solutions` of its row set, each standing for the
/// unit's weight of boards.
fn found(unit: Unit, solutions: u64, nodes: u64) -> Found {
    Found {
        total: u128::from(solutions) * u128::from(unit.weight),
        unique: 0,
        nodes: nodes.into(),
        max_subtask_nodes: nodes.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::quadrant::Layout;

    /// Split into parts or not, on one thread or more, on every kernel this CPU has: the
    /// same solutions and nodes as one search a unit (units of weight 0 among them).
    #[test]
    fn a_split_recount_finds_what_one_search_a_unit_finds() {
        for n in [6, 9, 12, 13] {
            let layout = Layout::new(n);
            let ids: Vec<usize> = (0..layout.len()).step_by(layout.len() / 7 + 1).collect();
            for kernel in Kernel::available() {
                let kernel = Chosen::named(kernel).unwrap();
                let never = AtomicBool::new(false);
                let units: Vec<Unit> = ids.iter().map(|&id| layout.unit(id)).collect();
                let alone: Vec<Found> = (units.iter())
                    .map(|&unit| search(n, unit, kernel, &never).unwrap())
                    .collect();
                for threads in [1, 3, 64] {
                    let workers = Workers::new(threads, false).unwrap();
                    let split = recount(n, &units, kernel, &workers).unwrap();
                    assert_eq!(split, alone, "n = {n}, {threads} threads, {kernel:?}");
                }
            }
        }
    }

    /// A split stops at the enough parts asked, or at its deepest row: every part's
    /// placed rows are the rows above it, and a unit's parts are its searches' nodes there.
    #[test]
    fn a_split_goes_as_deep_as_its_parts_need() {
        let layout = Layout::new(12);
        let ids = [1, 5, 9];
        let units: Vec<Unit> = ids.iter().map(|&id| layout.unit(id)).collect();
        let masks: Vec<RowMasks> = units.iter().map(|&u| unit_rows(12, u)).collect();
        let (few, _) = split(12, &units, &masks, 1);
        assert_eq!(few.len(), units.iter().filter(|u| u.weight != 0).count());
        let (all, nodes) = split(12, &units, &masks, usize::MAX);
        assert!(all.iter().all(|p| p.row == deepest_split(12)));
        for part in &all {
            let rows = &part.placed[..part.row];
            assert!(rows.iter().all(|r| r.count_ones() == 1));
            let allowed = &masks[part.unit].allowed;
            assert!(rows.iter().zip(allowed).all(|(r, a)| r & a == *r));
        }
        assert!(nodes.iter().sum::<u64>() >= all.len() as u64);
    }
}
