//! Counting one subtask of a plan: a row subtask with its frame's leaf rule on a row kernel,
//! or a unit of the quadrant engine on its pair loops; and the kernels a run does it with.

use crate::board::MAX_N;
use crate::error::Error;
use crate::found::Found;
use crate::kernel::{Chosen, Kernel, KernelChoice, Leaf, Start, Tally};
use crate::parallel::Spare;
use crate::plan::{Kind, LeafRule, Plan, Rows};
use crate::quadrant::PairKernel;
use crate::symmetry::classify::{columns, CanonicalTally, SideClassifier, SideRule};
use std::sync::atomic::AtomicBool;

/// The kernels a run counts with, resolved once for its plan: the row kernel of row plans,
/// the quadrant engine's pair loops for its plans. A kernel named for a plan that has no such
/// kernel is refused; the one the plan does not use stays at its portable default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kernels {
    pub rows: Chosen,
    pub pairs: PairKernel,
    reported: Kernel,
}

impl Kernels {
    /// The kernels `choice` asks for, for `plan`.
    pub fn resolve(plan: &Plan, choice: KernelChoice) -> Result<Kernels, Error> {
        Ok(match plan.kind() {
            Kind::Rows(_) => {
                let rows = Chosen::resolve(choice)?;
                Kernels {
                    rows,
                    pairs: PairKernel::Scalar,
                    reported: rows.kernel(),
                }
            }
            Kind::Quadrant(_) => {
                let pairs = PairKernel::resolve(choice)?;
                Kernels {
                    rows: Chosen::portable(),
                    pairs,
                    reported: pairs.kernel(),
                }
            }
        })
    }

    /// The kernel a report names.
    pub fn reported(self) -> Kernel {
        self.reported
    }
}

/// Counts subtask `id` of `plan` on `kernels` (resolved for this plan). `unique` asks for
/// fundamental solutions too (free for the full-symmetry engine; the others canonicalise
/// every solution they find).
///
/// A unit of the quadrant engine splits its pair count over the threads `spare` lends.
///
/// Returns `None` when `stop` was set before the subtask was finished, an error when its
/// memory could not be had (the quadrant engine's half lists).
pub(crate) fn count(
    plan: &Plan,
    id: usize,
    unique: bool,
    kernels: Kernels,
    (stop, spare): (&AtomicBool, &Spare),
) -> Result<Option<Found>, Error> {
    match plan.kind() {
        Kind::Quadrant(layout) => layout.count_unit_helped(id, kernels.pairs, (stop, spare)),
        Kind::Rows(rows) => Ok(count_rows(rows, id, unique, kernels.rows, stop)),
    }
}

fn count_rows(
    rows: &Rows,
    id: usize,
    unique: bool,
    kernel: Chosen,
    stop: &AtomicBool,
) -> Option<Found> {
    let (frame, start, mut board) = rows.begin(id);
    if let (true, LeafRule::Weight(w)) = (unique, frame.rule) {
        let canonical = CanonicalTally::default;
        let (leaf, nodes) = crate::kernel::visit(kernel, start, &mut board, canonical, stop)?;
        return Some(Found {
            total: u128::from(leaf.all) * u128::from(w),
            unique: leaf.canonical.into(),
            nodes: nodes.into(),
            max_subtask_nodes: nodes.into(),
        });
    }
    Some(count_raw(kernel, frame.rule, start, &mut board, stop)?.weigh(frame.rule))
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

/// What a leaf found, unweighed.
trait RawLeaf: Leaf {
    /// Solutions (of orbit 8 for tie frames), tie solutions of orbit 4 and 2.
    fn raw(&self) -> (u64, [u64; 2]);
}

impl RawLeaf for Tally {
    fn raw(&self) -> (u64, [u64; 2]) {
        (self.0, [0, 0])
    }
}

impl RawLeaf for SideClassifier {
    fn raw(&self) -> (u64, [u64; 2]) {
        let [solutions, orbit4, orbit2] = self.by_orbit;
        (solutions, [orbit4, orbit2])
    }
}

/// Counts the completions of `start` (its placed rows one-hot in `rows`, which the search
/// may overwrite below `start.row`) under a frame of `rule`, unweighed; `None` when stopped.
/// What a subtask is, and what a piece of one that the GPU gave back is.
pub(crate) fn count_raw(
    kernel: Chosen,
    rule: LeafRule,
    start: Start,
    rows: &mut [u64; MAX_N],
    stop: &AtomicBool,
) -> Option<Raw> {
    match rule {
        LeafRule::Weight(_) | LeafRule::Orbit8 => raw_of(kernel, start, rows, Tally::default, stop),
        LeafRule::Side { b1 } => {
            let classify = || SideClassifier::new(start.n, b1 as usize);
            raw_of(kernel, start, rows, classify, stop)
        }
    }
}

/// [`count_raw`] with the leaf `make` gives.
fn raw_of<L: RawLeaf>(
    kernel: Chosen,
    start: Start,
    rows: &mut [u64; MAX_N],
    make: impl Fn() -> L,
    stop: &AtomicBool,
) -> Option<Raw> {
    let (leaf, nodes) = crate::kernel::visit(kernel, start, rows, make, stop)?;
    let (solutions, orbits) = leaf.raw();
    Some(Raw {
        solutions,
        orbits,
        nodes,
    })
}

impl Plan {
    /// Counts subtask `id` alone on `kernel` (with fundamental solutions when `unique`): what
    /// every executor does for each subtask, for cross-checks of kernels and devices. A
    /// kernel this CPU (or, for the quadrant engine, the engine) does not have is refused, and
    /// so is an id past the end.
    ///
    /// ```
    /// use nqueens::{EngineChoice, Kernel, Plan};
    /// let plan = Plan::new(8, EngineChoice::D4, None, Some(2)).unwrap();
    /// let total: u128 = (0..plan.len())
    ///     .map(|id| plan.count_subtask(id, true, Kernel::Scalar).unwrap().total)
    ///     .sum();
    /// assert_eq!(total, 92);
    /// assert!(plan.count_subtask(plan.len(), true, Kernel::Scalar).is_err());
    /// ```
    pub fn count_subtask(&self, id: usize, unique: bool, kernel: Kernel) -> Result<Found, Error> {
        let subtasks = self.len();
        if id >= subtasks {
            return Err(Error::NoSuchSubtask { id, subtasks });
        }
        let choice = match kernel {
            Kernel::Scalar => KernelChoice::Scalar,
            Kernel::Avx2 => KernelChoice::Avx2,
            Kernel::Avx512 => KernelChoice::Avx512,
        };
        let kernels = Kernels::resolve(self, choice)?;
        let never = AtomicBool::new(false);
        count(
            self,
            id,
            unique,
            kernels,
            (&never, &crate::parallel::NO_SPARE),
        )?
        .ok_or(Error::Interrupted)
    }

    /// Calls `visit(columns, weight)` for every solution subtask `id` counts (0-based
    /// columns) with the number of solutions it stands for: slower than counting, for
    /// cross-checks of the symmetry rules. The quadrant engine pairs half-boards and has no
    /// boards to show: refused, like an id past the end.
    ///
    /// ```
    /// use nqueens::{EngineChoice, Plan};
    /// let plan = Plan::new(8, EngineChoice::D4, None, Some(2)).unwrap();
    /// let mut total = 0;
    /// for id in 0..plan.len() {
    ///     plan.for_each_counted(id, |_q, weight| total += weight as u32).unwrap();
    /// }
    /// assert_eq!(total, 92);
    /// let quadrant = Plan::new(8, EngineChoice::Quadrant, None, None).unwrap();
    /// assert!(quadrant.for_each_counted(0, |_, _| {}).is_err());
    /// ```
    pub fn for_each_counted(&self, id: usize, visit: impl FnMut(&[u8], u8)) -> Result<(), Error> {
        let subtasks = self.len();
        let rows = self.rows().ok_or(Error::NoBoards(self.engine()))?;
        if id >= subtasks {
            return Err(Error::NoSuchSubtask { id, subtasks });
        }
        for_each_counted(rows, id, visit);
        Ok(())
    }
}

/// [`Plan::for_each_counted`] on a row plan.
fn for_each_counted(plan: &Rows, id: usize, visit: impl FnMut(&[u8], u8)) {
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
    let (frame, start, mut rows) = plan.begin(id);
    let n = start.n;
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
    crate::kernel::depth_first(Chosen::portable(), start, &mut rows, &mut leaf, &never);
}
