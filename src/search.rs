//! Running one subtask: the kernel plus the leaf rule of its frame.

use crate::board::{Attacks, MAX_N};
use crate::found::Found;
use crate::kernel::{Kernel, Leaf, Tally};
use crate::split::{Frame, LeafRule, Plan};
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
    let (frame, attacks, mut rows) = plan.start(id);
    let (n, start, masks) = (plan.n(), plan.depth(), &frame.masks);
    if let (true, LeafRule::Weight(w)) = (unique, frame.rule) {
        let (leaf, nodes) = crate::kernel::search(
            kernel,
            n,
            masks,
            start,
            attacks,
            &mut rows,
            CanonicalTally::default,
            stop,
        )?;
        return Some(found(leaf.all * w as u64, leaf.canonical, nodes));
    }
    Some(count_raw(n, frame, start, attacks, &mut rows, kernel, stop)?.weigh(frame.rule))
}

/// What a search under one frame counts before its rule weighs it: solutions (for tie
/// frames, those whose class holds 8 solutions), the tie-frame solutions whose class holds 4
/// and 2, and nodes. The CPU and the GPU both count this, so a subtask is weighed in one
/// place ([`Raw::weigh`]) whichever device counted it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Raw {
    pub solutions: u64,
    pub orbits: [u64; 2],
    pub nodes: u64,
}

impl Raw {
    /// Adds another part of the same subtask. A subtask's counts fit in `u64` (one with 2^64
    /// nodes would take millennia); the additions are checked all the same.
    #[cfg(feature = "gpu")]
    pub fn add(&mut self, other: Raw) {
        let add = |sum: &mut u64, x: u64| {
            *sum = sum.checked_add(x).expect("a subtask's counts fit in u64");
        };
        add(&mut self.solutions, other.solutions);
        add(&mut self.orbits[0], other.orbits[0]);
        add(&mut self.orbits[1], other.orbits[1]);
        add(&mut self.nodes, other.nodes);
    }

    /// The subtask's result under `rule`: mirror and plain frames weigh each solution,
    /// full-symmetry frames count each class once (8, 4 or 2 solutions).
    pub fn weigh(self, rule: LeafRule) -> Found {
        let solutions = u128::from(self.solutions);
        let [orbit4, orbit2] = self.orbits.map(u128::from);
        let (total, unique) = match rule {
            LeafRule::Weight(w) => (solutions * u128::from(w), 0),
            LeafRule::Orbit8 => (8 * solutions, solutions),
            LeafRule::Side { .. } => (
                8 * solutions + 4 * orbit4 + 2 * orbit2,
                solutions + orbit4 + orbit2,
            ),
        };
        Found {
            total,
            unique,
            nodes: self.nodes.into(),
            max_subtask_nodes: self.nodes.into(),
        }
    }
}

/// Counts the completions of a board whose rows `0..start` are placed (one-hot in `rows`,
/// which the search may overwrite below `start`) under `frame`, unweighed; `None` when
/// stopped. What a subtask is, and what a piece of one that the GPU gave back is.
pub(crate) fn count_raw(
    n: usize,
    frame: &Frame,
    start: usize,
    attacks: Attacks,
    rows: &mut [u64; MAX_N],
    kernel: Kernel,
    stop: &AtomicBool,
) -> Option<Raw> {
    let masks = &frame.masks;
    match frame.rule {
        LeafRule::Weight(_) | LeafRule::Orbit8 => {
            let (leaf, nodes) = crate::kernel::search(
                kernel,
                n,
                masks,
                start,
                attacks,
                rows,
                Tally::default,
                stop,
            )?;
            Some(Raw {
                solutions: leaf.0,
                orbits: [0, 0],
                nodes,
            })
        }
        LeafRule::Side { b1 } => {
            let (leaf, nodes) = crate::kernel::search(
                kernel,
                n,
                masks,
                start,
                attacks,
                rows,
                || SideClassifier::new(n, b1 as usize),
                stop,
            )?;
            let [solutions, orbit4, orbit2] = leaf.by_orbit;
            Some(Raw {
                solutions,
                orbits: [orbit4, orbit2],
                nodes,
            })
        }
    }
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
