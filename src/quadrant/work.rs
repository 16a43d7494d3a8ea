//! A unit's count on one thread: its halves joined a part at a time, the sliced one loaded
//! into the sieve and the other counted against it, on the CPU's loops or a device.

use super::cells::{Joinable, LEAST_JOINED};
use super::half::{Halves, Kept};
use super::pair_kernel::PairKernel;
use super::pattern::{Pattern, Shift};
use super::sieve::{Counted, Made, OtherSide, PairDevice, Sieve};
use super::units::{Unit, NO_MIDDLE};
use crate::error::Error;
use crate::found::Found;
use crate::parallel::Spare;
use std::sync::atomic::{AtomicBool, Ordering};

/// The least sliced part [`PartSizes::within`] gives (2^20: a thread holds about 350 MB).
pub(super) const LEAST_SLICED: usize = 1 << 20;

/// Bytes a thread holds for each pattern of its sliced part (the part, its sorted copy and
/// the sieve's tables), and for each of its other part (the part and its ordered copy).
pub(super) const SLICED_BYTES: u64 = 80;
pub(super) const OTHER_BYTES: u64 = 32;

/// The most patterns of a unit's halves held at once: a part of the half that is sliced,
/// and one of the other half.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PartSizes {
    pub sliced: usize,
    pub other: usize,
}

impl PartSizes {
    /// The longest sliced part, down to [`LEAST_SLICED`] (or `self`'s, if less), for which
    /// `threads` threads hold at most `bytes` in all.
    pub fn within(self, bytes: u64, threads: usize) -> PartSizes {
        let holds = |sliced: usize| {
            (sliced as u64 * SLICED_BYTES + self.other as u64 * OTHER_BYTES) * threads as u64
        };
        let mut sliced = self.sliced;
        while sliced > LEAST_SLICED && holds(sliced) > bytes {
            sliced /= 2;
        }
        PartSizes { sliced, ..self }
    }
}

/// How far east of the west half the east half lies: it is built in the west half's
/// columns, moved west this far.
pub(super) fn east_shift(n: usize) -> usize {
    n - n / 2
}

/// The error of a unit whose half-board patterns found no memory.
fn short<E>(_: E) -> Error {
    crate::memory::memory_short("a unit's half-board patterns")
}

#[derive(Default)]
pub(super) struct Work {
    /// A part of the east half, and one of the west half.
    east: Vec<Pattern>,
    west: Vec<Pattern>,
    sieve: Sieve,
    /// The south placements the last unit's east and west halves could hold.
    kept: [Kept; 2],
}

/// A unit's count of disjoint pairs and the patterns of its two halves.
#[derive(Default)]
pub(super) struct Pairs {
    pub disjoint: u64,
    pub patterns: u64,
    /// Sieves a device counts later, by its tickets.
    pub tickets: Vec<u64>,
    /// The ticket of a sieve whose other side the device joined, which counts that side's
    /// patterns too (not in `patterns`).
    pub patterns_of: Option<u64>,
}

/// A unit counted with a device that counts some of its sieves later ([`Counted::Later`]):
/// what is counted, and the device's tickets for the rest, whose disjoint pairs count
/// `weight` solutions each.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    pub found: Found,
    pub weight: u64,
    pub tickets: Vec<u64>,
    /// The ticket whose sieve's other side the device joined: its patterns are nodes of
    /// the unit too.
    pub patterns_of: Option<u64>,
}

impl Pending {
    /// The unit's count, given each ticket's disjoint pairs and the patterns of the other
    /// side its device joined (0 where it did not).
    pub fn finish(self, mut counted: impl FnMut(u64) -> (u64, u64)) -> Found {
        let mut later = 0u128;
        let mut nodes = self.found.nodes;
        for &t in &self.tickets {
            let (disjoint, patterns) = counted(t);
            later += u128::from(disjoint);
            if self.patterns_of == Some(t) {
                nodes += u128::from(patterns);
            }
        }
        Found {
            total: self.found.total + later * u128::from(self.weight),
            nodes,
            max_subtask_nodes: nodes,
            ..self.found
        }
    }
}

impl Work {
    /// Counts the pairs of `unit`'s halves (the east one built in the west columns, moved
    /// west by [`east_shift`], both avoiding the middle column's queen) that share no
    /// diagonal, on the loops `pairs`. Each half is built a part at a time: for each part of
    /// the east half (at most `parts.other` patterns), the west half's parts (at most
    /// `parts.sliced`) are built, sliced and counted against it in turn, so a unit holds
    /// two parts, not its halves; where `device` is over a bus and holds the tables, it
    /// joins the longer half itself (`count_joined`); without a device, the threads `spare`
    /// lends share each part's pairs. `None` when `stop` was set first.
    pub(super) fn count(
        &mut self,
        n: usize,
        unit: Unit,
        halves: &Halves,
        (pairs, parts): (PairKernel, PartSizes),
        (device, spare): (Option<&dyn PairDevice>, &Spare),
        stop: &AtomicBool,
    ) -> Result<Option<Pairs>, Error> {
        let all = (1u64 << n) - 1;
        let (avoid, free_rows) = if unit.middle_row == NO_MIDDLE {
            (Pattern::default(), all)
        } else {
            let row = usize::from(unit.middle_row);
            (Pattern::queen(n, row, n / 2), all & !(1 << row))
        };
        let east_rows = u64::from(unit.east_rows);
        let east_avoid = Shift::west(east_shift(n)).apply(avoid);
        let west_rows = free_rows & !east_rows;
        if let Some(device) = device.filter(|d| d.takes() == Made::Words) {
            let rows = (halves, [east_rows, west_rows], [east_avoid, avoid]);
            if let Some(counted) = self.count_on_bus(n, rows, (pairs, parts), device, stop) {
                return counted;
            }
        }
        let [kept_east, kept_west] = &mut self.kept;
        // a half's parts are dropped once it is built: its row sets go back to the
        // tables' recent ones, which may let them go
        let mut east = Some(
            halves
                .parts(n, (east_rows, east_avoid), pairs, kept_east)
                .map_err(short)?,
        );
        let mut counted = Pairs::default();
        let mut first = true;
        while let Some(mut east_parts) = east.take() {
            self.east.clear();
            east = east_parts
                .fill(&mut self.east, parts.other)
                .map_err(short)?
                .then_some(east_parts);
            counted.patterns += self.east.len() as u64;
            // the west half again for each part of the east one: a join costs far less
            // than the pairs it is counted against
            let mut west_parts = halves
                .parts(n, (west_rows, avoid), pairs, kept_west)
                .map_err(short)?;
            self.west.clear();
            let mut west = west_parts
                .fill(&mut self.west, parts.sliced)
                .map_err(short)?
                .then_some(west_parts);
            // with both halves whole, the longer is sliced: the per-pattern cost falls on
            // the other, which is moved into its columns
            let east_sliced =
                east.is_none() && west.is_none() && first && self.east.len() >= self.west.len();
            let (sliced, others, shift) = if east_sliced {
                (&mut self.east, &mut self.west, Shift::west(east_shift(n)))
            } else {
                (&mut self.west, &mut self.east, Shift::east(east_shift(n)))
            };
            loop {
                if stop.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                if first {
                    // the west half's patterns, once
                    let west = if east_sliced { &others } else { &sliced };
                    counted.patterns += west.len() as u64;
                }
                if !sliced.is_empty() && !others.is_empty() {
                    let parts = (&sliced[..], &others[..], shift);
                    match count_parts(&mut self.sieve, parts, (pairs, device, spare), stop)? {
                        Counted::Now(disjoint) => counted.disjoint += disjoint,
                        Counted::Later(ticket) => counted.tickets.push(ticket),
                        Counted::Stopped => return Ok(None),
                        Counted::Unjoined => unreachable!("the other side came joined"),
                    }
                }
                let Some(mut west_parts) = west.take() else {
                    break;
                };
                sliced.clear();
                west = west_parts
                    .fill(sliced, parts.sliced)
                    .map_err(short)?
                    .then_some(west_parts);
            }
            first = false;
        }
        Ok(Some(counted))
    }

    /// [`Work::count`] where `device` is over a bus and holds the quarter tables: the half
    /// of more candidates joined on the device, the other sliced here; `None` where that
    /// half is too short or too long for it.
    fn count_on_bus(
        &mut self,
        n: usize,
        (halves, [east_rows, west_rows], [east_avoid, avoid]): (&Halves, [u64; 2], [Pattern; 2]),
        (pairs, parts): (PairKernel, PartSizes),
        device: &dyn PairDevice,
        stop: &AtomicBool,
    ) -> Option<Result<Option<Pairs>, Error>> {
        let quarters = halves.quarters()?;
        let [east, west] = [east_rows, west_rows].map(|r| Joinable::count(quarters, r));
        if !(LEAST_JOINED..=parts.other).contains(&east.max(west)) {
            return None;
        }
        let west_longer = west > east;
        // (the east half is built in the west columns: moved back east to meet the west)
        let ((joined, sliced), shift) = match west_longer {
            true => (
                ((west_rows, avoid), (east_rows, east_avoid)),
                Shift::west(east_shift(n)),
            ),
            false => (
                ((east_rows, east_avoid), (west_rows, avoid)),
                Shift::east(east_shift(n)),
            ),
        };
        let cells = Joinable::new(quarters, joined);
        let halves = (halves, cells, (sliced, west_longer));
        Some(self.count_joined(n, halves, (pairs, parts), (device, shift), stop))
    }

    /// [`Work::count`] where `device` joins one half itself (`cells`, moved where the
    /// other is by `shift`) from the quarter tables it holds: the other half, on `sliced`
    /// rows avoiding its diagonals (the east one, where `east_sliced`), is sliced a part at
    /// a time; the pivots are chosen on a sample of the joined one, which is joined here
    /// only where a sieve cannot go to the device, or to count its patterns where none
    /// went.
    fn count_joined(
        &mut self,
        n: usize,
        (halves, mut cells, (sliced, east_sliced)): (&Halves, Joinable, ((u64, Pattern), bool)),
        (pairs, parts): (PairKernel, PartSizes),
        (device, shift): (&dyn PairDevice, Shift),
        stop: &AtomicBool,
    ) -> Result<Option<Pairs>, Error> {
        let (sample, reckoned) = cells.sample(pairs).map_err(short)?;
        let mut counted = Pairs::default();
        let mut joined = false;
        let Work {
            east,
            west,
            sieve,
            kept,
        } = self;
        let ((part, other), kept) = match east_sliced {
            true => ((east, west), &mut kept[0]),
            false => ((west, east), &mut kept[1]),
        };
        other.clear();
        let mut parts_left = Some(halves.parts(n, sliced, pairs, kept).map_err(short)?);
        while let Some(mut sliced_parts) = parts_left.take() {
            if stop.load(Ordering::Relaxed) {
                return Ok(None);
            }
            part.clear();
            let more = sliced_parts.fill(part, parts.sliced).map_err(short)?;
            parts_left = more.then_some(sliced_parts);
            counted.patterns += part.len() as u64;
            if part.is_empty() || (joined && other.is_empty()) {
                continue;
            }
            let others = match joined {
                true => (&other[..], other.len(), shift),
                false => (&sample[..], reckoned, shift),
            };
            let loaded = sieve.load_for_device(pairs, part, (others, device.takes()));
            loaded.map_err(short)?;
            let mut disjoint = match joined {
                true => Counted::Unjoined,
                false => sieve.count_disjoint_by(pairs, OtherSide::Cells(&cells), stop, device)?,
            };
            if disjoint == Counted::Unjoined {
                if !joined {
                    cells.join(pairs, other).map_err(short)?;
                    joined = true;
                }
                let others = OtherSide::Joined(other);
                disjoint = sieve.count_disjoint_by(pairs, others, stop, device)?;
            }
            match disjoint {
                Counted::Now(disjoint) => counted.disjoint += disjoint,
                Counted::Later(ticket) => {
                    counted.tickets.push(ticket);
                    if !joined && counted.patterns_of.is_none() {
                        counted.patterns_of = Some(ticket);
                    }
                }
                Counted::Stopped => return Ok(None),
                Counted::Unjoined => unreachable!("the other side came joined"),
            }
        }
        // the joined half's patterns: counted by a ticket's device, or here
        if counted.patterns_of.is_none() {
            if !joined {
                cells.join(pairs, other).map_err(short)?;
            }
            counted.patterns += other.len() as u64;
        }
        Ok(Some(counted))
    }
}

/// The disjoint pairs of a part of the sliced half, `sliced`, and one of the other, `others`
/// (moved where `sliced` is by `shift`): loaded into `sieve` (about 64 bytes a sliced
/// pattern, hence the parts) and counted by `device`, else on the loops `pairs` and the
/// threads `spare` lends.
fn count_parts(
    sieve: &mut Sieve,
    (sliced, others, shift): (&[Pattern], &[Pattern], Shift),
    (pairs, device, spare): (PairKernel, Option<&dyn PairDevice>, &Spare),
    stop: &AtomicBool,
) -> Result<Counted, Error> {
    Ok(match device {
        Some(device) => {
            let takes = ((others, others.len(), shift), device.takes());
            sieve.load_for_device(pairs, sliced, takes).map_err(short)?;
            sieve.count_disjoint_by(pairs, OtherSide::Joined(others), stop, device)?
        }
        None => {
            sieve.load(pairs, sliced, (others, shift)).map_err(short)?;
            let counted = sieve.count_disjoint_on(pairs, others, (stop, spare));
            counted
                .map_err(short)?
                .map_or(Counted::Stopped, Counted::Now)
        }
    })
}
