//! A unit's count on one thread: its halves joined a part at a time, the sliced one loaded
//! into the sieve and the other counted against it, on the CPU's loops or a device.

use super::half::{Halves, Kept};
use super::pair_kernel::PairKernel;
use super::pattern::{Pattern, Shift};
use super::sieve::{Counted, PairDevice, Sieve};
use super::units::{Unit, NO_MIDDLE};
use super::{east_shift, PartSizes};
use crate::error::Error;
use crate::found::Found;
use std::sync::atomic::{AtomicBool, Ordering};

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
}

/// A unit counted with a device that counts some of its sieves later ([`Counted::Later`]):
/// what is counted, and the device's tickets for the rest, whose disjoint pairs count
/// `weight` solutions each.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    pub found: Found,
    pub weight: u64,
    pub tickets: Vec<u64>,
}

impl Pending {
    /// The unit's count, given each ticket's disjoint pairs.
    pub fn finish(self, mut disjoint: impl FnMut(u64) -> u64) -> Found {
        let later: u128 = (self.tickets.iter())
            .map(|&t| u128::from(disjoint(t)))
            .sum();
        Found {
            total: self.found.total + later * u128::from(self.weight),
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
    /// two parts, not its halves. `None` when `stop` was set first.
    pub(super) fn count(
        &mut self,
        n: usize,
        unit: Unit,
        halves: &Halves,
        (pairs, parts): (PairKernel, PartSizes),
        device: Option<&dyn PairDevice>,
        stop: &AtomicBool,
    ) -> Result<Option<Pairs>, Error> {
        let short = |_| crate::memory::memory_short("a unit's half-board patterns");
        let all = (1u64 << n) - 1;
        let (avoid, free_rows) = if unit.middle_row == NO_MIDDLE {
            (Pattern::default(), all)
        } else {
            let row = usize::from(unit.middle_row);
            (Pattern::queen(n, row, n / 2), all & !(1 << row))
        };
        let east_rows = u64::from(unit.east_rows);
        let east_avoid = Shift::west(east_shift(n)).apply(avoid);
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
                .parts(n, (free_rows & !east_rows, avoid), pairs, kept_west)
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
                    // the sieve takes about 64 bytes a sliced pattern, hence the parts
                    let sieve = &mut self.sieve;
                    let disjoint = match device {
                        Some(device) => {
                            let takes = ((&others[..], shift), device.takes());
                            let loaded = sieve.load_for_device(pairs, sliced, takes);
                            loaded.map_err(short)?;
                            sieve.count_disjoint_by(pairs, others, stop, device)?
                        }
                        None => {
                            sieve.load(pairs, sliced, (others, shift)).map_err(short)?;
                            let counted = sieve.count_disjoint_on(pairs, others, stop);
                            counted
                                .map_err(short)?
                                .map_or(Counted::Stopped, Counted::Now)
                        }
                    };
                    match disjoint {
                        Counted::Now(disjoint) => counted.disjoint += disjoint,
                        Counted::Later(ticket) => counted.tickets.push(ticket),
                        Counted::Stopped => return Ok(None),
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
}
