//! Cutting plan subtasks into GPU items, and what an item is. Pure host code: it runs and is
//! tested without a GPU.
//!
//! A subtask with more rows left than an item may have is cut by placing queens on its next
//! rows on the host, depth-first, in the order the CPU kernels take them; each placement that
//! leaves the next row a free square becomes an item. The host's placements are search nodes
//! like the kernel's, so a subtask's nodes are the host's plus its items'.

use crate::board::{Attacks, MAX_N};
use crate::kernel::{Chosen, Start};
use crate::plan::{Frame, LeafRule, Rows};
use crate::subtask::{count_raw, Raw};
use std::sync::atomic::AtomicBool;

/// How an item's solutions are counted on the GPU: which kernel runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Each solution is counted as found (the host weighs them by the frame's rule).
    Plain = 0,
    /// Full-symmetry tie frames: each solution is classified on its whole board.
    Ties = 1,
}

/// Whether the GPU counts subtask `id`, and with which kernel. The CPU keeps the mirror and
/// plain frames with `--unique` (it canonicalises their solutions one by one) and subtasks
/// with fewer than two rows left (nothing for a kernel to do).
pub(crate) fn kind_of(plan: &Rows, id: usize, unique: bool) -> Option<Kind> {
    if plan.n() < plan.depth() + 2 {
        return None;
    }
    match plan.frame_of(id).rule {
        LeafRule::Weight(_) if unique => None,
        LeafRule::Weight(_) | LeafRule::Orbit8 => Some(Kind::Plain),
        LeafRule::Side { .. } => Some(Kind::Ties),
    }
}

/// The most rows an item may leave a kernel: what the kernels' per-lane workgroup memory is
/// sized for at most (a device with less workgroup memory takes fewer, see
/// [`workgroup_bytes`](super::dispatch::workgroup_bytes)).
pub(crate) const MAX_ITEM_ROWS: usize = 16;

/// The rows an item leaves on an `n`×`n` board, at most `most`: items of tens of thousands
/// to a few hundred thousand nodes on average, by the d4 plan's subtree sizes
/// (docs/benchmarks.md, "The GPU code's choices"), so that a large count's dispatch holds
/// millions of them, each lane's last item ends within
/// tens of milliseconds, and the host cuts them far faster than a GPU counts them.
pub(crate) fn item_rows(n: usize, most: usize) -> usize {
    let rows = match n {
        0..=20 => n.saturating_sub(5).clamp(2, 13),
        21..=22 => 14,
        23..=24 => 15,
        _ => 16,
    };
    rows.min(most)
}

/// What the kernel counted for one item: solutions (of orbit 8 for tie frames), tie
/// solutions of orbit 4 and 2, and nodes; `None` when it gave the item up (its node count
/// reached the limit), which the host then counts on the CPU.
pub(crate) type ItemCount = Option<[u32; 4]>;

/// A count the kernel gave ([`ItemCount`]'s words) in the CPU's terms.
pub(crate) fn as_raw([solutions, orbit4, orbit2, nodes]: [u32; 4]) -> Raw {
    Raw {
        solutions: solutions.into(),
        orbits: [orbit4.into(), orbit2.into()],
        nodes: nodes.into(),
    }
}

/// One item: the state of its first open row and where it came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Item {
    /// Occupied columns, right-down and left-down diagonals (trimmed to the board), and the
    /// free squares of the item's first open row (never empty).
    pub state: [u32; 4],
    /// `frame << 8 | row`: the frame and the item's first open row.
    pub at: u32,
    /// Columns of rows `0..row`, a byte each (tie frames only; zero otherwise).
    pub prefix: [u32; 8],
}

impl Item {
    /// The item's first open row.
    pub fn row(&self) -> usize {
        (self.at & 0xFF) as usize
    }

    /// The item's frame in `plan` (the plan it was cut from), where its search starts, and
    /// its queens as one-hot rows (tie frames only): what a CPU kernel starts from when it
    /// counts the item instead.
    pub fn begin<'p>(&self, plan: &'p Rows) -> (&'p Frame, Start<'p>, [u64; MAX_N]) {
        let [cols, right, left, _] = self.state;
        let mut rows = [0u64; MAX_N];
        for (r, row) in rows.iter_mut().enumerate().take(self.row()) {
            *row = 1 << (self.prefix[r / 4] >> (r % 4 * 8) & 0xFF);
        }
        let frame = &plan.frames()[(self.at >> 8) as usize];
        let start = Start {
            n: plan.n(),
            masks: &frame.masks,
            row: self.row(),
            attacks: Attacks {
                cols: cols.into(),
                right_down: right.into(),
                left_down: left.into(),
            },
        };
        (frame, start, rows)
    }

    /// The item counted on the CPU by `kernel` (of `plan`, the plan it was cut from), as the
    /// GPU's kernel counts it; `None` when `stop` was set first.
    pub fn count_on_cpu(&self, plan: &Rows, kernel: Chosen, stop: &AtomicBool) -> Option<Raw> {
        let (frame, start, mut rows) = self.begin(plan);
        count_raw(kernel, frame.rule, start, &mut rows, stop)
    }
}

/// A subtask being cut into items. Resumable: the items come out one at a time, so a large
/// subtask can fill several dispatches.
pub(crate) struct Cut<'p> {
    frame: &'p Frame,
    frame_index: u32,
    n: usize,
    kind: Kind,
    /// The subtask's first open row, and the row its items start on.
    first: usize,
    item_row: usize,
    /// Columns of the rows placed so far (the subtask's prefix, then the host's).
    columns: [u8; MAX_N],
    /// Per row being cut: the squares left to try, and the attacks on it.
    free: [u64; MAX_N],
    seen: [Attacks; MAX_N],
    /// The row being cut; `None` once the subtask is cut up.
    row: Option<usize>,
    /// Queens the host placed: search nodes of the subtask.
    host_nodes: u64,
}

impl<'p> Cut<'p> {
    /// Starts cutting subtask `id` of `plan`, one the GPU takes as `kind` ([`kind_of`]), into
    /// items of at most `most_rows` rows.
    pub fn new(plan: &'p Rows, id: usize, kind: Kind, most_rows: usize) -> Cut<'p> {
        let n = plan.n();
        let (frame, start, _) = plan.begin(id);
        let (first, attacks) = (start.row, start.attacks);
        debug_assert!(first + 2 <= n, "kind_of leaves such subtasks to the CPU");
        let mut columns = [0u8; MAX_N];
        columns[..first].copy_from_slice(&plan.subtask(id).prefix[..first]);
        let mut free = [0; MAX_N];
        let mut seen = [Attacks::default(); MAX_N];
        free[first] = frame.masks.free(first, attacks);
        seen[first] = attacks;
        Cut {
            frame,
            frame_index: u32::from(plan.subtask(id).frame),
            n,
            kind,
            first,
            // at most n - 2: an item has two rows or more
            item_row: (n - item_rows(n, most_rows)).max(first),
            columns,
            free,
            seen,
            row: Some(first),
            host_nodes: 0,
        }
    }

    /// The next item, or `None` when the subtask is cut up.
    pub fn next_item(&mut self) -> Option<Item> {
        loop {
            let row = self.row?;
            let free = self.free[row];
            if row == self.item_row || free == 0 {
                self.row = (row > self.first).then(|| row - 1);
                if row == self.item_row && free != 0 {
                    return Some(self.item(row, free));
                }
                continue;
            }
            // the lowest free square first, as the CPU kernels take them
            let bit = free & free.wrapping_neg();
            self.free[row] = free ^ bit;
            self.host_nodes += 1;
            self.columns[row] = bit.trailing_zeros() as u8;
            let below = self.seen[row].place(bit);
            self.seen[row + 1] = below;
            self.free[row + 1] = self.frame.masks.free(row + 1, below);
            self.row = Some(row + 1);
        }
    }

    fn item(&self, row: usize, free: u64) -> Item {
        let seen = self.seen[row];
        let mut prefix = [0u32; 8];
        if self.kind == Kind::Ties {
            for (r, &c) in self.columns[..row].iter().enumerate() {
                prefix[r / 4] |= u32::from(c) << (r % 4 * 8);
            }
        }
        Item {
            state: [
                seen.cols as u32,
                (seen.right_down & crate::board::full_mask(self.n)) as u32,
                seen.left_down as u32,
                free as u32,
            ],
            at: self.frame_index << 8 | row as u32,
            prefix,
        }
    }

    /// Queens the host placed so far (search nodes of the subtask).
    pub fn host_nodes(&self) -> u64 {
        self.host_nodes
    }

    /// Whether every item of the subtask has come out.
    pub fn is_done(&self) -> bool {
        self.row.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineChoice;
    use crate::kernel::Chosen;
    use crate::plan::Plan;
    use crate::subtask::{count_raw, Raw};
    use std::sync::atomic::AtomicBool;

    /// What the portable kernel counts from `start`.
    fn counted(rule: LeafRule, start: Start, rows: &mut [u64; MAX_N]) -> Raw {
        let stop = AtomicBool::new(false);
        count_raw(Chosen::portable(), rule, start, rows, &stop).unwrap()
    }

    /// Counts every item of a subtask on the CPU, as the kernels would, and adds the host's
    /// nodes: the subtask's own count.
    fn through_items(plan: &Rows, id: usize, kind: Kind) -> (Raw, usize) {
        let mut cut = Cut::new(plan, id, kind, MAX_ITEM_ROWS);
        let mut raw = Raw::default();
        let mut items = 0;
        while let Some(item) = cut.next_item() {
            assert_ne!(item.state[3], 0, "an item has a free square");
            let (frame, start, mut rows) = item.begin(plan);
            if kind == Kind::Plain {
                // plain items carry no prefix: the count does not look at the board
                rows = [0; MAX_N];
            }
            raw.add(counted(frame.rule, start, &mut rows));
            items += 1;
        }
        assert!(cut.is_done());
        raw.add(Raw {
            nodes: cut.host_nodes(),
            ..Raw::default()
        });
        (raw, items)
    }

    #[test]
    fn items_add_up_to_their_subtask_for_every_rule() {
        let mut cut_up = 0;
        for engine in [EngineChoice::Mirror, EngineChoice::D4] {
            for (n, depth) in [(8, 1), (11, 2), (13, 2), (16, 3), (19, 5)] {
                let plan = Plan::new(n, engine, None, Some(depth)).unwrap();
                let plan = plan.rows().unwrap();
                // the larger boards: a sample of their subtasks
                let step = (plan.len() / 60).max(1);
                for id in (0..plan.len()).step_by(step) {
                    let Some(kind) = kind_of(plan, id, false) else {
                        continue;
                    };
                    let (frame, start, mut rows) = plan.begin(id);
                    let whole = counted(frame.rule, start, &mut rows);
                    let (parts, items) = through_items(plan, id, kind);
                    assert_eq!(parts, whole, "{engine:?} n={n} id={id}");
                    cut_up += usize::from(items > 1);
                }
            }
        }
        assert!(
            cut_up > 100,
            "only {cut_up} subtasks were cut into several items"
        );
    }

    #[test]
    fn a_subtask_may_have_no_item() {
        // a subtask whose rows die out before its items' row: nodes, and nothing for a kernel
        let mut seen = 0;
        for (n, depth) in [(8, 2), (9, 2), (10, 3), (12, 3)] {
            let plan = Plan::new(n, EngineChoice::D4, None, Some(depth)).unwrap();
            let plan = plan.rows().unwrap();
            for id in 0..plan.len() {
                let kind = kind_of(plan, id, false).unwrap();
                let mut cut = Cut::new(plan, id, kind, 11);
                if cut.next_item().is_some() {
                    continue;
                }
                let (frame, start, mut rows) = plan.begin(id);
                let whole = counted(frame.rule, start, &mut rows);
                let nodes = cut.host_nodes();
                assert_eq!(
                    whole,
                    Raw {
                        nodes,
                        ..Raw::default()
                    },
                    "n={n} id={id}"
                );
                seen += usize::from(nodes > 0);
            }
        }
        assert!(seen > 0, "no subtask with nodes and no item");
    }

    #[test]
    fn item_rows_fit_the_kernels() {
        for n in 2..=32 {
            for most in 2..=MAX_ITEM_ROWS {
                let rows = item_rows(n, most);
                assert!((2..=most).contains(&rows) && rows <= n, "n={n}");
            }
        }
    }
}
