//! Running one subtask: the kernel plus the leaf rule of its frame.

use crate::found::Found;
use crate::kernel::{Kernel, Leaf, Tally};
use crate::split::{LeafRule, Plan};
use crate::symmetry::classify::{columns, CanonicalTally, SideClassifier, SideRule};
use std::sync::atomic::AtomicBool;

/// Counts subtask `id` of `plan`. `unique` asks for fundamental solutions too (free for the
/// full-symmetry engine; the others canonicalise every solution they find).
///
/// Returns `None` when `stop` was set before the subtask was finished.
pub fn run_subtask(
    plan: &Plan,
    id: usize,
    unique: bool,
    kernel: Kernel,
    stop: &AtomicBool,
) -> Option<Found> {
    if let Some(layout) = plan.quadrant_layout() {
        return layout.count_unit(id, kernel, stop);
    }
    let n = plan.n();
    match plan.frames()[plan.subtask(id).frame as usize].rule {
        LeafRule::Weight(w) if unique => {
            let (leaf, nodes) = search_subtask(plan, id, kernel, stop, CanonicalTally::default)?;
            Some(found(leaf.all * w as u64, leaf.canonical, nodes))
        }
        rule @ (LeafRule::Weight(_) | LeafRule::Orbit8) => {
            let (leaf, nodes) = search_subtask(plan, id, kernel, stop, Tally::default)?;
            counted(rule, leaf.0, nodes)
        }
        LeafRule::Side { b1 } => {
            let (leaf, nodes) = search_subtask(plan, id, kernel, stop, || {
                SideClassifier::new(n, b1 as usize)
            })?;
            let classes = leaf.by_orbit;
            Some(found(
                8 * classes[0] + 4 * classes[1] + 2 * classes[2],
                classes.iter().sum(),
                nodes,
            ))
        }
    }
}

/// What a subtask whose `solutions` were counted without looking at them found: weighted by
/// the frame's rule (its fundamental solutions too, for full-symmetry frames without ties).
/// `None` for rules that must see each board (the tie frames).
pub(crate) fn counted(rule: LeafRule, solutions: u64, nodes: u64) -> Option<Found> {
    match rule {
        LeafRule::Weight(w) => Some(found(solutions * w as u64, 0, nodes)),
        LeafRule::Orbit8 => Some(found(solutions * 8, solutions, nodes)),
        LeafRule::Side { .. } => None,
    }
}

/// Runs subtask `id` with a leaf from `make` on `kernel`. Returns the leaf and the nodes, or
/// `None` when stopped.
fn search_subtask<L: Leaf>(
    plan: &Plan,
    id: usize,
    kernel: Kernel,
    stop: &AtomicBool,
    make: impl Fn() -> L,
) -> Option<(L, u64)> {
    let (frame, attacks, mut rows) = plan.start(id);
    let (n, start, masks) = (plan.n(), plan.depth(), &frame.masks);
    crate::kernel::search(kernel, n, masks, start, attacks, &mut rows, make, stop)
}

fn found(total: u64, unique: u64, nodes: u64) -> Found {
    Found {
        total: total as u128,
        unique: unique as u128,
        nodes: nodes as u128,
        max_subtask_nodes: nodes as u128,
    }
}

/// Calls `visit(columns, weight)` for every solution subtask `id` counts, with the number of
/// solutions it stands for (0-based columns). Slower than [`run_subtask`]; for cross-checks.
pub fn for_each_counted(plan: &Plan, id: usize, visit: impl FnMut(&[u8], u8)) {
    struct Visit<F> {
        n: usize,
        rule: LeafRule,
        side: Option<SideRule>,
        visit: F,
    }
    impl<F: FnMut(&[u8], u8)> Leaf for Visit<F> {
        const NEEDS_BOARD: bool = true;
        fn solution(&mut self, rows: &[u64]) {
            let weight = match (self.rule, self.side) {
                (LeafRule::Weight(w), _) => Some(w),
                (LeafRule::Orbit8, _) => Some(8),
                (LeafRule::Side { .. }, Some(side)) => side.weight(rows),
                (LeafRule::Side { .. }, None) => unreachable!("side frames carry their rule"),
            };
            if let Some(w) = weight {
                (self.visit)(&columns(rows)[..self.n], w);
            }
        }
    }
    let n = plan.n();
    let (frame, attacks, mut rows) = plan.start(id);
    let side = match frame.rule {
        LeafRule::Side { b1 } => Some(SideRule::new(n, b1 as usize)),
        _ => None,
    };
    let mut leaf = Visit {
        n,
        rule: frame.rule,
        side,
        visit,
    };
    let never = AtomicBool::new(false);
    crate::kernel::search_scalar(
        n,
        &frame.masks,
        plan.depth(),
        attacks,
        &mut rows,
        &mut leaf,
        &never,
    );
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn for_each_counted_example() {
        use crate::{EngineChoice, Plan};
        let plan = Plan::new(8, EngineChoice::D4, None, Some(2)).unwrap();
        let mut total = 0;
        for id in 0..plan.len() {
            crate::search::for_each_counted(&plan, id, |_q, weight| total += weight as u32);
        }
        assert_eq!(total, 92);
    }
}
