//! The quadrant engine: a meet-in-the-middle count that does not search the board row by row.
//!
//! Every solution has one queen per row, so it is fixed by which rows have their queen in the
//! east half of the columns (`E`) and by the queens of each half. A *unit* is one such row set:
//! its east half-patterns (queens on rows `E`, one on every east column) and west
//! half-patterns (the other rows and columns) are built from tables of quarter placements
//! (`quarter.rs`), and the solutions of the unit are the pairs that share no diagonal, counted
//! bit-sliced ([`sieve`]).
//!
//! Odd boards have a middle column: its queen's row is part of the unit, and both halves
//! avoid its diagonals. Symmetry: turning the board upside down maps a unit to the reversed
//! row set; the left-right mirror swaps the halves (`E` and the other rows). Only the least of
//! each class of units is counted, weighted by the size of the class.
//!
//! A unit is worked out from its id, never listed ([`units`]): the ids are in a fixed order
//! (middle row, then `E` as a number), so shards, checkpoints and `--verify` work as with
//! the other engines, and the plan of any N takes no memory.

mod by_rows;
mod cache;
mod cells;
mod half;
mod join;
mod pair_kernel;
mod pattern;
mod pivots;
mod quarter;
mod sieve;
mod sizes_file;
mod units;
mod work;

pub(crate) use pair_kernel::PairKernel;

use crate::error::Error;
use crate::found::Found;
use crate::memory::{Budget, Bytes};
use crate::parallel::{lock, Spare, Workers, NO_SPARE};
use crate::stages::{time, Stage};
use cache::{Books, RowSets};
use half::{Halves, Table};
use pattern::{Packed, Pattern, Region, Stored};
use quarter::Quarter;
pub(crate) use sieve::PairDevice;
// what the GPU's pair count takes
#[cfg(feature = "gpu")]
pub(crate) use cells::{pattern_words, Joinable, Quarters};
#[cfg(feature = "gpu")]
pub(crate) use sieve::{Made, PairWork, Upload, DENSE_WORDS, ENTRY_BYTES};
#[cfg(feature = "gpu")]
pub(crate) use sieve::{Signing, NARROW_WORDS, RAW_WORDS, SUBSET_BITS};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use units::{Ids, Unit};
pub(crate) use work::Pending;
use work::{Pairs, PartSizes, Work};

/// The largest board the quadrant engine takes. Every width holds to N = 32 (ids, diagonal
/// masks, packed quarters, counts); the bound is the cost, which grows 7 to 15 times a board:
/// N = 28 about a million core-hours, N = 29 ten times as many, past what a cluster spends.
pub const QUADRANT_MAX_N: usize = 28;

/// The largest south table kept whole (N = 18's takes 15 MiB, N = 19's 40): larger ones are
/// built a row set at a time as units ask for them.
const WHOLE_SOUTH_MAX: u64 = 24 << 20;

/// The most patterns of a unit's halves held at once, a thread: a part of the sliced half
/// (2^22, 64 MiB and about 250 MiB of sieve) and one of the other half (2^23, 128 MiB and as
/// much again sorted). Only the longest units, from N = 24, are cut (N = 23's halves are
/// shorter). A longer sliced part has more blocks, which more pivots tell apart, and the
/// other half is ordered again for fewer parts: with 2^22 rather than 2^20, the unit 2600151
/// of N = 26 took 0.6 times as long, a shard of N = 24 0.9 times. Where the memory is short,
/// less ([`PartSizes::within`]).
const MOST_HELD: PartSizes = PartSizes {
    sliced: 1 << 22,
    other: 1 << 23,
};

/// The largest north table always kept whole (N = 20 and 21's take 64.5 MB, N = 22 and 23's
/// 551 MB). The north rows change from unit to unit, so a larger one is kept whole only for a
/// run of many units, where it fits (see [`TablePlan::new`]); a short run builds two row sets
/// for each unit instead.
const WHOLE_NORTH_MAX: u64 = 128 << 20;

/// How the tables of a board are kept, and the bytes that takes at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TablePlan {
    whole_north: bool,
    whole_south: bool,
    bytes: u64,
}

impl TablePlan {
    /// The tables of an `n`×`n` board for a run of `units` units: each whole when it takes at
    /// most `whole_max` bytes (north, south; the north one packed), else its recent row sets
    /// (and those in use: a few more per thread, not counted here). A larger north table is
    /// kept whole all the same for a run of many units (a quarter as many as its row sets),
    /// where the whole tables fit `memory_limit`, and both are for `devices_join` (a GPU
    /// joins halves from the whole tables it holds). `None` when `stop` was set first.
    fn new(
        n: usize,
        (units, devices_join): (usize, bool),
        whole_max: [u64; 2],
        memory_limit: u64,
        stop: &AtomicBool,
    ) -> Option<TablePlan> {
        let [north_region, south_region] = regions(n);
        let north = table_bytes::<Packed>(north_region, stop)?;
        let south = table_bytes::<Pattern>(south_region, stop)?;
        let for_devices = devices_join && north.whole + south.whole <= memory_limit;
        let whole_south = south.whole <= whole_max[1] || for_devices;
        let south_bytes = south.kept(whole_south);
        // a unit builds the two largest kinds of row set: measured at N = 22 (2 threads,
        // Zen 5) against the whole table, shards of 173, 345 and 690 units took 0.94, 0.97
        // and 1.05 times as long on demand, so past 2^h / 4 units the whole table pays
        let whole_pays = units.saturating_mul(4) >= 1 << north_region.rows;
        let whole_north = north.whole <= whole_max[0]
            || (whole_pays && north.whole + south_bytes <= memory_limit)
            || for_devices;
        Some(TablePlan {
            whole_north,
            whole_south,
            bytes: north.kept(whole_north) + south_bytes,
        })
    }
}

/// The bytes a table takes whole, and as its recent row sets.
struct TableBytes {
    whole: u64,
    recent: u64,
}

impl TableBytes {
    /// The bytes it takes kept whole, or as its recent row sets.
    fn kept(&self, whole: bool) -> u64 {
        if whole {
            self.whole
        } else {
            self.recent
        }
    }
}

/// What the table of `region`, its placements stored as `P`, takes.
fn table_bytes<P>(region: Region, stop: &AtomicBool) -> Option<TableBytes> {
    let whole = quarter::table_bytes::<P>(region, stop)?;
    let recent = cache::RECENT as u64 * quarter::largest_row_set_bytes::<P>(region, stop)?;
    Some(TableBytes { whole, recent })
}

/// What the engine's data took: `--stats` and JSON report it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Memory {
    /// The most bytes the quarter tables held at once (0 when they did not fit and halves
    /// are searched, or before they are built).
    pub tables: u64,
}

/// The units of one board and, once prepared, the tables that build their halves.
#[derive(Debug)]
pub struct Layout {
    n: usize,
    ids: Ids,
    halves: OnceLock<Halves>,
    /// The largest north and south tables kept whole.
    whole_max: [u64; 2],
    /// The most patterns of a unit's halves held at once, and what [`Layout::prepare`]
    /// took of that for the memory it had.
    parts: PartSizes,
    held: OnceLock<PartSizes>,
    /// Held while the tables are built: one build at a time, which a stop can abandon.
    building: Mutex<()>,
    books: Arc<Books>,
    /// Whether a device joins halves ([`Layout::keep_tables_whole_for_devices`]).
    devices_join: AtomicBool,
}

thread_local! {
    /// Per-thread buffers, reused from unit to unit.
    static WORK: RefCell<Work> = RefCell::new(Work::default());
}

impl Layout {
    /// The units of an `n`×`n` board, `n` from 1 to [`QUADRANT_MAX_N`].
    pub(crate) fn new(n: usize) -> Layout {
        assert!(
            (1..=QUADRANT_MAX_N).contains(&n),
            "quadrant layout for n = {n}"
        );
        Layout {
            n,
            ids: Ids::new(n),
            halves: OnceLock::new(),
            whole_max: [WHOLE_NORTH_MAX, WHOLE_SOUTH_MAX],
            parts: MOST_HELD,
            held: OnceLock::new(),
            building: Mutex::new(()),
            books: Arc::default(),
            devices_join: AtomicBool::new(false),
        }
    }

    /// Number of unit ids (on even boards about half of them count nothing: see [`units`]).
    pub fn len(&self) -> usize {
        self.ids.len() as usize
    }

    /// The unit with id `id`.
    fn unit(&self, id: usize) -> Unit {
        self.ids.unit(id as u64)
    }

    /// Whether unit `id` counts nothing: its row sets are counted under another id.
    pub(crate) fn counts_nothing(&self, id: usize) -> bool {
        self.unit(id).weight == 0
    }

    /// Feeds the unit numbering to a plan digest.
    pub(crate) fn digest(&self, h: &mut crc32fast::Hasher) {
        units::digest(&self.ids, h);
    }

    /// Keeps both quarter tables whole where they fit the memory limit, when
    /// [`Layout::prepare`] builds them: a GPU over a bus joins the other side of each unit
    /// from the whole tables it holds (N = 19 to 21's south tables, 40 MiB and more, are
    /// otherwise built a row set at a time).
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub(crate) fn keep_tables_whole_for_devices(&self) {
        self.devices_join.store(true, Ordering::Relaxed);
    }

    /// Builds the quarter tables for a run of `ids` unit ids when they fit in `memory_limit`
    /// bytes (otherwise halves are searched, slower but in little memory), and sizes the
    /// parts of a unit's halves for `counters` threads counting beside them. Later calls keep
    /// what the first decided. Built by `workers`; `None` when `stop` was set first: nothing
    /// is kept, a later call builds again.
    pub(crate) fn prepare(
        &self,
        memory_limit: Budget,
        ids: usize,
        (workers, counters): (&Workers, usize),
        stop: &AtomicBool,
    ) -> Result<Option<()>, Error> {
        let _one_build = lock(&self.building);
        if self.halves.get().is_some() {
            return Ok(Some(()));
        }
        // about half an even board's ids count nothing (see `units`)
        let units = if self.n.is_multiple_of(2) {
            ids / 2
        } else {
            ids
        };
        let devices_join = self.devices_join.load(Ordering::Relaxed);
        let for_units = (units, devices_join);
        let Some(plan) =
            TablePlan::new(self.n, for_units, self.whole_max, memory_limit.bytes, stop)
        else {
            return Ok(None);
        };
        let [north_region, south_region] = regions(self.n);
        let halves = if plan.bytes > memory_limit.bytes {
            Halves::Search { memory_limit }
        } else {
            let Some(north) = self.table(north_region, plan.whole_north, workers, stop)? else {
                return Ok(None);
            };
            let Some(south) = self.table(south_region, plan.whole_south, workers, stop)? else {
                return Ok(None);
            };
            Halves::Tables { north, south }
        };
        // the counting threads take the other half of the memory (see `memory::Room`)
        let _ = self
            .held
            .set(self.parts.within(memory_limit.bytes, counters));
        let _ = self.halves.set(halves);
        Ok(Some(()))
    }

    /// The table of `region`: built now by `workers` and on the books when `whole`, else
    /// built a row set at a time as units ask. `None` when `stop` was set first.
    fn table<P: Stored>(
        &self,
        region: Region,
        whole: bool,
        workers: &Workers,
        stop: &AtomicBool,
    ) -> Result<Option<Table<P>>, Error> {
        if !whole {
            return Ok(Some(Table::OnDemand(RowSets::new(
                region,
                self.books.clone(),
            ))));
        }
        let Some(quarter) = Quarter::build_within(region, u64::MAX, workers, stop)? else {
            return Ok(None);
        };
        self.books.add(quarter.bytes());
        Ok(Some(Table::Whole(quarter)))
    }

    /// What the engine's data takes.
    pub fn memory(&self) -> Memory {
        Memory {
            tables: self.books.peak(),
        }
    }

    /// One line when the tables did not fit the memory limit and halves are searched.
    pub(crate) fn note(&self) -> Option<String> {
        match self.halves.get() {
            Some(&Halves::Search { memory_limit }) => Some(over_limit_note(
                self.n,
                memory_limit,
                "each unit's halves are searched instead (slower)",
            )),
            _ => None,
        }
    }

    /// Counts unit `id` on the pair loops `pairs`; `None` when `stop` was set first, an error
    /// when its memory cannot be had. The tables are built on first use if
    /// [`Layout::prepare`] was not called.
    #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
    pub fn count_unit(
        &self,
        id: usize,
        pairs: PairKernel,
        stop: &AtomicBool,
    ) -> Result<Option<Found>, Error> {
        self.count_unit_helped(id, pairs, (stop, &NO_SPARE))
    }

    /// [`Layout::count_unit`] with its pair counts split over the threads `spare` lends
    /// while it counts.
    pub(crate) fn count_unit_helped(
        &self,
        id: usize,
        pairs: PairKernel,
        (stop, spare): (&AtomicBool, &Spare),
    ) -> Result<Option<Found>, Error> {
        let counted = self.count_unit_on(id, (pairs, None, spare), stop)?;
        Ok(counted.map(|unit| unit.finish(|_| unreachable!("no device, no tickets"))))
    }

    /// [`Layout::count_unit`] with each loaded sieve's pairs counted by `device` where
    /// there is one ([`PairDevice`]: a GPU, which may count some later), else on the CPU's
    /// loops `pairs` and the threads `spare` lends.
    pub(crate) fn count_unit_on(
        &self,
        id: usize,
        (pairs, device, spare): (PairKernel, Option<&dyn PairDevice>, &Spare),
        stop: &AtomicBool,
    ) -> Result<Option<Pending>, Error> {
        let unit = self.unit(id);
        if unit.weight == 0 {
            return Ok(Some(Pending::default()));
        }
        // built here on first use, by this thread alone (it fails only short of memory)
        if self.halves.get().is_none()
            && self
                .prepare(
                    Budget::asked(u64::MAX),
                    self.len(),
                    (&Workers::this_thread(), 1),
                    stop,
                )?
                .is_none()
        {
            return Ok(None);
        }
        let halves = self.halves.get().expect("prepared above");
        WORK.with(|work| {
            let work = &mut *work.borrow_mut();
            let limits = (pairs, *self.held.get().expect("prepared above"));
            let count = || work.count(self.n, unit, halves, limits, (device, spare), stop);
            let Some(Pairs {
                disjoint,
                patterns,
                tickets,
                patterns_of,
            }) = time(Stage::Unit, count)?
            else {
                return Ok(None);
            };
            let nodes = u128::from(patterns);
            let found = Found {
                total: u128::from(disjoint) * u128::from(unit.weight),
                unique: 0,
                nodes,
                max_subtask_nodes: nodes,
            };
            let weight = unit.weight.into();
            Ok(Some(Pending {
                found,
                weight,
                tickets,
                patterns_of,
            }))
        })
    }
}

impl Layout {
    /// Counts unit `id` by a row-by-row search restricted to it on the row kernel `kernel`,
    /// without the tables, joins or sieve: a check of [`Layout::count_unit`] that cannot
    /// confirm a fault of theirs, in one search. `None` when `stop` was set first.
    #[cfg(test)]
    pub(crate) fn count_unit_by_rows(
        &self,
        id: usize,
        kernel: crate::kernel::Chosen,
        stop: &AtomicBool,
    ) -> Option<Found> {
        by_rows::search(self.n, self.unit(id), kernel, stop)
    }

    /// `Layout::count_unit_by_rows` for each of `ids` on `workers`, in the order of
    /// `ids`, each unit's search split over the workers ([`by_rows`]).
    pub(crate) fn recount_by_rows(
        &self,
        ids: &[usize],
        kernel: crate::kernel::Chosen,
        workers: &Workers,
    ) -> Result<Vec<Found>, Error> {
        let units: Vec<Unit> = ids.iter().map(|&id| self.unit(id)).collect();
        by_rows::recount(self.n, &units, kernel, workers)
    }
}

/// The north-west and south-west quarters of an `n`×`n` board (the middle row, if any, goes
/// south; the middle column belongs to no quarter): the east ones are theirs moved east.
fn regions(n: usize) -> [Region; 2] {
    let half = n / 2;
    let quarter = |row0, rows| Region {
        n,
        row0,
        rows,
        col0: 0,
        cols: half,
    };
    [quarter(0, half), quarter(half, n - half)]
}

/// One line saying that the tables of an `n`×`n` board do not fit `budget`, and what is done
/// instead.
pub(crate) fn over_limit_note(n: usize, budget: Budget, instead: &str) -> String {
    format!(
        "the quadrant engine's tables for N = {n} take {}, over {}: {instead}",
        Bytes(tables_bytes(n)),
        budget.describe(),
    )
}

/// Bytes the quarter tables of an `n`×`n` board take at the least (each table whole when it
/// is small, else its recent row sets; a run of many units keeps a large north table whole
/// where that fits its memory limit): counted, not built, once per shape of quarter and
/// process.
pub fn tables_bytes(n: usize) -> u64 {
    let never = AtomicBool::new(false);
    tables_bytes_until(n, &never).expect("never stopped")
}

/// [`tables_bytes`], or `None` when `stop` was set first (the first count of N = 27's quarters
/// takes seconds).
pub(crate) fn tables_bytes_until(n: usize, stop: &AtomicBool) -> Option<u64> {
    let least = TablePlan::new(n, (0, false), [WHOLE_NORTH_MAX, WHOLE_SOUTH_MAX], 0, stop)?;
    Some(least.bytes)
}

/// One line saying that the memory limit `asked` was held to `limit` bytes, for a count whose
/// tables of an `n`×`n` board fit the one and not the other; `None` otherwise.
pub(crate) fn held_limit_note(n: usize, asked: Option<u64>, limit: u64) -> Option<String> {
    let asked = asked.filter(|&asked| asked > limit)?;
    let tables = tables_bytes(n);
    (tables > limit && tables <= asked).then(|| {
        format!(
            "the memory limit of {} is held to {}: half what this process's address-space or cgroup limit leaves beside its threads, past which an allocation would end it",
            Bytes(asked),
            Bytes(limit)
        )
    })
}

/// Checks that the quadrant engine takes an `n`×`n` board.
pub(crate) fn check_n(n: usize) -> Result<(), Error> {
    if n > QUADRANT_MAX_N {
        return Err(Error::EngineTooLarge {
            engine: crate::engine::Engine::Quadrant,
            n,
            max: QUADRANT_MAX_N,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::work::{LEAST_SLICED, OTHER_BYTES, SLICED_BYTES};
    use super::*;
    use crate::kernel::{Chosen, KernelChoice};

    fn total(n: usize, memory_limit: u64) -> u128 {
        total_with(Layout::new(n), memory_limit)
    }

    fn total_with(layout: Layout, memory_limit: u64) -> u128 {
        let stop = AtomicBool::new(false);
        layout
            .prepare(
                Budget::asked(memory_limit),
                layout.len(),
                (&Workers::this_thread(), 1),
                &stop,
            )
            .unwrap()
            .unwrap();
        (0..layout.len())
            .map(|id| {
                layout
                    .count_unit(id, PairKernel::Scalar, &stop)
                    .unwrap()
                    .unwrap()
                    .total
            })
            .sum()
    }

    /// The solutions of an `n`×`n` board by the plainest row search: the reference.
    fn row_search(n: usize, row: usize, (cols, left, right): (u64, u64, u64)) -> u128 {
        if row == n {
            return 1;
        }
        (0..n)
            .map(|c| 1u64 << c)
            .filter(|bit| (cols | left | right) & bit == 0)
            .map(|bit| {
                let next = (cols | bit, (left | bit) << 1, (right | bit) >> 1);
                row_search(n, row + 1, next)
            })
            .sum()
    }

    #[test]
    fn small_boards_with_and_without_tables() {
        for n in 1..=12 {
            let want = row_search(n, 0, (0, 0, 0));
            assert_eq!(total(n, u64::MAX), want, "n = {n}, tables");
            assert_eq!(total(n, 0), want, "n = {n}, search");
        }
    }

    #[test]
    fn tables_built_a_row_set_at_a_time_count_as_whole_ones() {
        for n in 4..=13 {
            let want = row_search(n, 0, (0, 0, 0));
            for whole_max in [[0, 0], [0, u64::MAX], [u64::MAX, 0]] {
                let layout = Layout {
                    whole_max,
                    ..Layout::new(n)
                };
                assert_eq!(total_with(layout, u64::MAX), want, "n = {n}, {whole_max:?}");
            }
        }
    }

    #[test]
    fn halves_sliced_a_part_at_a_time_count_as_whole_ones() {
        for n in 10..=14 {
            let want = row_search(n, 0, (0, 0, 0));
            // parts of a block and a bit, and of less than a block, the other half whole or
            // in parts of its own
            for (sliced, other) in [(300, usize::MAX), (100, 100), (300, 1000), (7, 50)] {
                let layout = Layout {
                    parts: PartSizes { sliced, other },
                    ..Layout::new(n)
                };
                assert_eq!(
                    total_with(layout, u64::MAX),
                    want,
                    "n = {n}, {sliced}, {other}"
                );
            }
        }
    }

    #[test]
    fn parts_shrink_to_the_memory_the_threads_have() {
        let most = MOST_HELD;
        assert_eq!(most.within(u64::MAX, 64), most);
        let each = |sliced: usize| sliced as u64 * SLICED_BYTES + most.other as u64 * OTHER_BYTES;
        assert_eq!(most.within(each(1 << 22), 1).sliced, 1 << 22);
        assert_eq!(most.within(each(1 << 22) - 1, 1).sliced, 1 << 21);
        assert_eq!(most.within(2 * each(1 << 21), 2).sliced, 1 << 21);
        // never below the least, whatever the memory; a smaller most stays as it is
        assert_eq!(most.within(1 << 30, 16).sliced, LEAST_SLICED);
        let small = PartSizes {
            sliced: 300,
            other: 1000,
        };
        assert_eq!(small.within(0, 4), small);
    }

    #[test]
    fn a_stopped_build_keeps_nothing_and_a_later_one_builds() {
        let layout = Layout::new(12);
        let stopped = AtomicBool::new(true);
        let workers = Workers::new(2, false).unwrap();
        assert_eq!(
            layout
                .prepare(
                    Budget::asked(u64::MAX),
                    layout.len(),
                    (&workers, 2),
                    &stopped
                )
                .unwrap(),
            None
        );
        assert_eq!(layout.memory().tables, 0);
        assert_eq!(count_stopped(&layout), None);
        let go = AtomicBool::new(false);
        assert_eq!(
            layout
                .prepare(Budget::asked(u64::MAX), layout.len(), (&workers, 2), &go)
                .unwrap(),
            Some(())
        );
        assert!(layout.memory().tables > 0);
    }

    /// A unit counted with the stop flag set: nothing.
    fn count_stopped(layout: &Layout) -> Option<Found> {
        layout
            .count_unit(0, PairKernel::Scalar, &AtomicBool::new(true))
            .unwrap()
    }

    /// The pair count from the tables against the row search restricted to the unit.
    fn agree_by_rows(layout: &Layout, id: usize) {
        let never = AtomicBool::new(false);
        let rows = layout.count_unit_by_rows(id, Chosen::portable(), &never);
        let pairs = layout.count_unit(id, PairKernel::best(), &never).unwrap();
        let best = Chosen::resolve(KernelChoice::Auto).unwrap();
        let fast_rows = layout.count_unit_by_rows(id, best, &never);
        let (rows, pairs) = (rows.unwrap().total, pairs.unwrap().total);
        assert_eq!(
            rows,
            pairs,
            "n = {} unit {id} {:?}",
            layout.n,
            layout.unit(id)
        );
        assert_eq!(fast_rows.unwrap().total, rows, "n = {} unit {id}", layout.n);
    }

    #[test]
    fn every_unit_counts_alike_by_rows_to_12() {
        for n in 1..=12 {
            let layout = Layout::new(n);
            for id in 0..layout.len() {
                agree_by_rows(&layout, id);
            }
        }
    }

    /// Random units of N = 16..18 (a second on two threads with the tests' optimisation).
    #[test]
    fn random_units_count_alike_by_rows_16_to_18() {
        let mut next = crate::kernel::xorshift(0x9E37_79B9_7F4A_7C15);
        for n in 16..=18 {
            let layout = Layout::new(n);
            let mut counted = 0;
            while counted < 24 {
                let id = (next() % layout.len() as u64) as usize;
                if !layout.counts_nothing(id) {
                    agree_by_rows(&layout, id);
                    counted += 1;
                }
            }
        }
    }

    use super::sieve::{Made, PairWork};
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;

    /// A device on the CPU that takes words and joins the other side where it is handed
    /// cells, counting each sieve from the work it is handed (as a GPU over a bus is), and
    /// declines every `declines`th sieve.
    struct Joiner {
        declines: usize,
        taken: Cell<usize>,
        joined: Cell<usize>,
        sent: Cell<usize>,
        counted: RefCell<HashMap<u64, (u64, u64)>>,
    }

    impl PairDevice for Joiner {
        fn takes(&self) -> Made {
            Made::Words
        }

        fn take(&self, work: &PairWork) -> Result<Option<u64>, Error> {
            let ticket = self.taken.get() as u64;
            self.taken.set(self.taken.get() + 1);
            if self.declines > 0 && (ticket as usize).is_multiple_of(self.declines) {
                return Ok(None);
            }
            let clashes: u64 = (0..work.len()).map(|i| u64::from(work.clashes_of(i))).sum();
            let joins = work.signing.as_ref().is_some_and(|s| s.cells().is_some());
            let (visited, patterns) = match work.visited {
                Some(visited) => (visited, 0),
                None => work.visited_as_signed(),
            };
            let patterns = if joins { patterns } else { 0 };
            self.joined.set(self.joined.get() + usize::from(joins));
            self.sent.set(self.sent.get() + usize::from(!joins));
            let counted = (visited - clashes, patterns);
            self.counted.borrow_mut().insert(ticket, counted);
            Ok(Some(ticket))
        }
    }

    /// Units counted with a device that joins their east halves from the cells (declining
    /// some sieves, which are then joined and counted here) count as on the CPU alone, their
    /// nodes too.
    #[test]
    fn units_joined_by_a_device_count_as_on_the_cpu() {
        let never = AtomicBool::new(false);
        let pairs = PairKernel::best();
        let (mut joined, mut sent) = (0, 0);
        for (n, step) in [(8, 1), (11, 1), (12, 3), (13, 7), (16, 401)] {
            let layout = Layout::new(n);
            for declines in [0, 3] {
                let device = Joiner {
                    declines,
                    taken: Cell::new(0),
                    joined: Cell::new(0),
                    sent: Cell::new(0),
                    counted: RefCell::default(),
                };
                for id in (0..layout.len()).step_by(step) {
                    let cpu = layout.count_unit(id, pairs, &never).unwrap().unwrap();
                    let on = layout.count_unit_on(id, (pairs, Some(&device), &NO_SPARE), &never);
                    let pending = on.unwrap().unwrap();
                    let counted = device.counted.borrow();
                    let got = pending.finish(|t| counted[&t]);
                    assert_eq!(got, cpu, "n = {n}, unit {id}, declining every {declines}");
                }
                joined += device.joined.get();
                sent += device.sent.get();
            }
        }
        // halves joined by the device, and halves too short for it sent as they are
        assert!(joined > 0 && sent > 0, "{joined} joined, {sent} sent");
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn new_example() {
        use crate::quadrant::Layout;
        // 8x8: 70 row sets of four rows, 35 with the highest row west, 23 up to the
        // board's symmetries
        assert_eq!(Layout::new(8).len(), 35);
    }
}
