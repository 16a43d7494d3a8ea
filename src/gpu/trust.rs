//! A GPU earns trust before it counts: when its device opens, it counts the items of a
//! small board whose answer the CPU knows, each invocation taking several items in turn
//! (the persistent loop a miscounting driver gets wrong), and every item's count is held
//! against the CPU's. A device that differs anywhere is refused: Debian 12's own lavapipe
//! (Mesa 22.3) gave `count 15 --device gpu` 2259548, 2261900 and 2155368 for 2279184.

use super::items::{kind_of, Cut, Item, Kind};
use super::{Gpu, DROPPED, WORKGROUP};
use crate::engine::EngineChoice;
use crate::error::Error;
use crate::kernel::Chosen;
use crate::plan::Plan;
use crate::subtask::count_raw;
use std::sync::atomic::AtomicBool;

/// The board of the check: its d4 plan cuts into about 16,000 items (73,712 solutions,
/// about a million nodes), a few milliseconds for the CPU to count again.
const CHECK_N: usize = 13;

/// Items each invocation of the check counts in turn.
const ITEMS_PER_INVOCATION: usize = 8;

/// Counts the check's items on `gpu` and on the CPU; an error naming the adapter and its
/// driver where any item's count differs.
pub(super) fn earn(gpu: &Gpu) -> Result<(), Error> {
    let plan = Plan::new(CHECK_N, EngineChoice::D4, None, None)?;
    let rows = plan.rows().expect("a row plan");
    let mut batch: [Vec<Item>; 2] = [Vec::new(), Vec::new()];
    for id in 0..rows.len() {
        let Some(kind) = kind_of(rows, id, false) else {
            continue;
        };
        let mut cut = Cut::new(rows, id, kind, gpu.item_rows(kind));
        while let Some(item) = cut.next_item() {
            batch[kind as usize].push(item);
        }
    }
    let frames = gpu.frames(rows);
    let few = |items: usize| items.div_ceil(WORKGROUP * ITEMS_PER_INVOCATION).max(1) as u32;
    let flight = gpu.launch_with(CHECK_N, &frames, [&batch[0], &batch[1]], DROPPED, few);
    let counts = flight.wait(gpu)?;
    let never = AtomicBool::new(false);
    let (mut differ, mut items) = (0usize, 0usize);
    for kind in [Kind::Plain, Kind::Ties] {
        for (item, count) in batch[kind as usize].iter().zip(&counts[kind as usize]) {
            let (frame, start, mut queens) = item.begin(rows);
            let cpu = count_raw(Chosen::portable(), frame.rule, start, &mut queens, &never)
                .expect("never stopped");
            let want = [cpu.solutions, cpu.orbits[0], cpu.orbits[1], cpu.nodes];
            let got = count.map(|c| c.map(u64::from));
            items += 1;
            differ += usize::from(got != Some(want));
        }
    }
    if differ == 0 {
        return Ok(());
    }
    let info = &gpu.info;
    Err(Error::Failed(format!(
        "the GPU {} (driver {} {}) miscounted a known answer: {differ} of {items} items of N = {CHECK_N} differ from the CPU's count; it is not used",
        info.name, info.driver, info.driver_info
    )))
}
