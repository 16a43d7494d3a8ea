//! Running one subtask: the kernel plus the leaf rule of its frame.

use crate::found::Found;
use crate::kernel::{scalar, Kernel, Leaf, Tally};
use crate::split::{LeafRule, Plan};
use crate::symmetry::{inverse, is_canonical, Symmetry};
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

/// Runs subtask `id` with a leaf from `make`: on the vector kernel when asked and it takes
/// the subtask, else on the scalar kernel (with the required-column check only where
/// needed). Returns the leaf and the nodes, or `None` when stopped.
fn search_subtask<L: Leaf>(
    plan: &Plan,
    id: usize,
    kernel: Kernel,
    stop: &AtomicBool,
    make: impl Fn() -> L,
) -> Option<(L, u64)> {
    if kernel != Kernel::Scalar {
        let (frame, attacks, rows) = plan.start(id);
        let (n, start, masks) = (plan.n(), plan.depth(), &frame.masks);
        let mut leaf = make();
        if let Some(outcome) =
            crate::kernel::search_vector(kernel, n, masks, start, attacks, &rows, &mut leaf, stop)
        {
            return outcome.map(|nodes| (leaf, nodes));
        }
    }
    let mut leaf = make();
    let nodes = scalar_subtask(plan, id, &mut leaf, stop)?;
    Some((leaf, nodes))
}

/// Runs subtask `id` on the scalar kernel, with the required-column check only where needed.
fn scalar_subtask<L: Leaf>(plan: &Plan, id: usize, leaf: &mut L, stop: &AtomicBool) -> Option<u64> {
    let (frame, attacks, mut rows) = plan.start(id);
    let (n, start, masks) = (plan.n(), plan.depth(), &frame.masks);
    if masks.has_must() {
        scalar::search::<L, true>(n, masks, start, attacks, &mut rows, leaf, stop)
    } else {
        scalar::search::<L, false>(n, masks, start, attacks, &mut rows, leaf, stop)
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

/// Counts all solutions and those that are their class's canonical form.
#[derive(Default)]
struct CanonicalTally {
    all: u64,
    canonical: u64,
}

impl Leaf for CanonicalTally {
    const NEEDS_BOARD: bool = true;
    fn solution(&mut self, rows: &[u64]) {
        self.all += 1;
        if is_canonical(&columns(rows)[..rows.len()]) {
            self.canonical += 1;
        }
    }
}

fn columns(rows: &[u64]) -> [u8; crate::board::MAX_N] {
    let mut q = [0u8; crate::board::MAX_N];
    for (c, r) in q.iter_mut().zip(rows) {
        *c = r.trailing_zeros() as u8;
    }
    q
}

/// Leaf rule of the full-symmetry side frames: is a board the representative of its class
/// within the frame, and how many solutions does that class hold?
#[derive(Clone, Copy)]
struct SideRule {
    n: usize,
    b1: usize,
    /// The side columns, looked at on rows `b1` and `n-1-b1`.
    side_mask: u64,
    /// Columns `b1` and `n-1-b1`, looked at on the bottom row.
    bottom_mask: u64,
}

impl SideRule {
    fn new(n: usize, b1: usize) -> SideRule {
        SideRule {
            n,
            b1,
            side_mask: 1 | 1 << (n - 1),
            bottom_mask: 1 << b1 | 1 << (n - 1 - b1),
        }
    }

    /// The orbit size the board stands for (8, 4 or 2), or `None` when an image in the same
    /// frame is smaller and counts instead.
    #[inline]
    fn weight(&self, rows: &[u64]) -> Option<u8> {
        let (n, b1) = (self.n, self.b1);
        // Only an edge queen exactly b1 from a corner can turn the board into another board
        // of this frame; without one the eight images are distinct and all but this one lie
        // outside the frame.
        let tie = (rows[b1] | rows[n - 1 - b1]) & self.side_mask != 0
            || rows[n - 1] & self.bottom_mask != 0;
        if !tie {
            return Some(8);
        }
        let q = columns(rows);
        let q = &q[..n];
        let inv = inverse(q);
        let mut fixed = 1;
        for sym in &Symmetry::ALL[1..] {
            // an image is in this frame exactly when its first-row queen is at column b1
            if sym.image_at(q, &inv[..n], 0) as usize != b1 {
                continue;
            }
            match sym.compare_image(q, &inv[..n]) {
                std::cmp::Ordering::Less => return None,
                std::cmp::Ordering::Equal => fixed += 1,
                std::cmp::Ordering::Greater => {}
            }
        }
        Some(8 / fixed)
    }
}

/// Counts side-frame representatives by orbit size.
struct SideClassifier {
    rule: SideRule,
    /// Representatives found with orbit 8, 4 and 2.
    by_orbit: [u64; 3],
}

impl SideClassifier {
    fn new(n: usize, b1: usize) -> SideClassifier {
        SideClassifier {
            rule: SideRule::new(n, b1),
            by_orbit: [0; 3],
        }
    }
}

impl Leaf for SideClassifier {
    const NEEDS_BOARD: bool = true;
    #[inline]
    fn solution(&mut self, rows: &[u64]) {
        match self.rule.weight(rows) {
            Some(8) => self.by_orbit[0] += 1,
            Some(4) => self.by_orbit[1] += 1,
            Some(_) => self.by_orbit[2] += 1,
            None => {}
        }
    }
}

/// Calls `visit(columns, weight)` for every solution subtask `id` counts, with the number of
/// solutions it stands for (0-based columns). Slower than [`run_subtask`]; for cross-checks.
///
/// ```
/// use nqueens::split::{EngineChoice, Plan};
/// let plan = Plan::new(8, EngineChoice::D4, None, Some(2)).unwrap();
/// let mut total = 0;
/// for id in 0..plan.len() {
///     nqueens::search::for_each_counted(&plan, id, |_q, weight| total += weight as u32);
/// }
/// assert_eq!(total, 92);
/// ```
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
    let frame = &plan.frames()[plan.subtask(id).frame as usize];
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
    scalar_subtask(plan, id, &mut leaf, &never);
}
