//! A GPU's books: the subtasks it has taken, how many of their items are still out, and
//! what the counted ones found. A subtask is handed in once it is cut up and every one of
//! its items is counted: whole, once, with the CPU's numbers.

use crate::subtask::Raw;

/// A subtask taken and not yet handed in.
#[derive(Debug)]
struct Taken {
    id: usize,
    raw: Raw,
    /// Items dispatched and not yet counted.
    out: usize,
    /// Whether every item of it has been cut.
    cut: bool,
}

/// The subtasks a GPU holds, by slot (what each item carries to name its subtask).
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    slots: Vec<Option<Taken>>,
    /// The empty slots: a dispatch opens tens of thousands of subtasks, and looking for an
    /// empty slot among them would make cutting quadratic.
    free: Vec<u32>,
}

impl Ledger {
    /// Opens subtask `id`; returns its slot.
    pub fn open(&mut self, id: usize) -> u32 {
        let taken = Taken {
            id,
            raw: Raw::default(),
            out: 0,
            cut: false,
        };
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(taken);
                slot
            }
            None => {
                self.slots.push(Some(taken));
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// One more item of the subtask in `slot` is out.
    pub fn sent(&mut self, slot: u32) {
        self.taken(slot).out += 1;
    }

    /// Every item of the subtask in `slot` is cut, and the host placed `host_nodes` queens
    /// cutting them. Returns the subtask (its id and count) if that finishes it: a subtask
    /// none of whose placements left an item.
    pub fn cut(&mut self, slot: u32, host_nodes: u64) -> Option<(usize, Raw)> {
        let taken = self.taken(slot);
        taken.cut = true;
        taken.raw.add(Raw {
            nodes: host_nodes,
            ..Raw::default()
        });
        self.hand_in(slot)
    }

    /// An item of the subtask in `slot` counted `raw`. Returns the subtask (its id and
    /// count) if that was its last item.
    pub fn counted(&mut self, slot: u32, raw: Raw) -> Option<(usize, Raw)> {
        let taken = self.taken(slot);
        taken.raw.add(raw);
        taken.out -= 1;
        self.hand_in(slot)
    }

    /// The subtasks taken and not yet handed in (a dropped GPU's, for the CPU to count).
    pub fn open_ids(&self) -> impl Iterator<Item = usize> + '_ {
        self.slots.iter().flatten().map(|taken| taken.id)
    }

    fn hand_in(&mut self, slot: u32) -> Option<(usize, Raw)> {
        let done = matches!(&self.slots[slot as usize], Some(t) if t.cut && t.out == 0);
        done.then(|| {
            let taken = self.slots[slot as usize].take().expect("checked above");
            self.free.push(slot);
            (taken.id, taken.raw)
        })
    }

    fn taken(&mut self, slot: u32) -> &mut Taken {
        self.slots[slot as usize]
            .as_mut()
            .expect("an item names a subtask that is taken")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LeafRule;

    #[test]
    fn a_subtask_is_handed_in_once_cut_up_and_counted() {
        let mut ledger = Ledger::default();
        let a = ledger.open(7);
        let b = ledger.open(9);
        ledger.sent(a);
        ledger.sent(a);
        assert_eq!(
            ledger.cut(b, 3),
            Some((
                9,
                Raw {
                    nodes: 3,
                    ..Raw::default()
                }
            ))
        );
        let part = |s, n| Raw {
            solutions: s,
            orbits: [0, 0],
            nodes: n,
        };
        assert_eq!(ledger.counted(a, part(1, 10)), None);
        assert_eq!(ledger.cut(a, 5), None);
        assert_eq!(ledger.counted(a, part(2, 20)), Some((7, part(3, 35))));
        // the slots are reused
        assert_eq!(ledger.open(11), a);
    }

    #[test]
    fn open_subtasks_keep_their_slots_and_handed_in_ones_free_theirs() {
        let mut ledger = Ledger::default();
        let slots: Vec<u32> = (0..1000).map(|id| ledger.open(id)).collect();
        let mut distinct = slots.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), slots.len());
        // every other subtask handed in (cut up, no item out): its slot is reused, the
        // others' are not
        for &slot in slots.iter().step_by(2) {
            assert!(ledger.cut(slot, 0).is_some());
        }
        let reused: Vec<u32> = (1000..1500).map(|id| ledger.open(id)).collect();
        let mut freed: Vec<u32> = slots.iter().copied().step_by(2).collect();
        let mut got = reused.clone();
        freed.sort_unstable();
        got.sort_unstable();
        assert_eq!(got, freed);
        // each slot names its own subtask when handed in
        for (id, &slot) in (1000..1500).zip(&reused) {
            assert_eq!(ledger.cut(slot, 0).map(|(i, _)| i), Some(id));
        }
        assert_eq!(ledger.cut(slots[1], 0).map(|(i, _)| i), Some(1));
        assert_eq!(ledger.open(2000), slots[1]);
    }

    /// A subtask whose items' 32-bit counts add up past 2^32 (and, weighed, past 2^35) is
    /// exact: a million items of 4,097 solutions and 4,000,000,000 nodes each.
    #[test]
    fn counts_past_32_bits_add_up_exactly() {
        let mut ledger = Ledger::default();
        let slot = ledger.open(0);
        let items = 1u64 << 20;
        for _ in 0..items {
            ledger.sent(slot);
        }
        assert_eq!(ledger.cut(slot, 1), None);
        let mut whole = None;
        for _ in 0..items {
            let raw = Raw {
                solutions: 4097,
                orbits: [1, 2],
                nodes: 4_000_000_000,
            };
            whole = ledger.counted(slot, raw).or(whole);
        }
        let (_, raw) = whole.expect("handed in after its last item");
        assert_eq!(raw.solutions, 4097 << 20);
        assert_eq!(raw.nodes, 4_000_000_000 * items + 1);
        let found = raw.weigh(LeafRule::Side { b1: 2 });
        assert_eq!(
            found.total,
            8 * (4097u128 << 20) + 4 * (1 << 20) + 2 * (2 << 20)
        );
        assert!(found.total > 1 << 35);
    }
}
