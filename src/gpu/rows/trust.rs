//! The row search's known answer ([`crate::gpu::trust`]): when a device opens, it counts
//! the items of a small board whose answer the CPU knows, each invocation taking several
//! items in turn (the persistent loop a miscounting driver gets wrong), and every item's
//! count is held against the CPU's ([`known_answer`], which [`crate::gpu::open`] runs).
//! Debian 12's own lavapipe (Mesa 22.3) gave `count 15 --device gpu` 2259548, 2261900 and
//! 2155368 for 2279184.

use super::dispatch::{RowGpu, DROPPED};
use super::items::{as_raw, kind_of, Cut, Item, ItemCount, Kind};
use crate::engine::EngineChoice;
use crate::error::Error;
use crate::gpu::device::Device;
use crate::gpu::trust::miscounted;
use crate::kernel::Chosen;
use crate::plan::Plan;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The board of the check: its d4 plan cuts into about 16,000 items (73,712 solutions,
/// about a million nodes), a few milliseconds for the CPU to count again.
const CHECK_N: usize = 13;

/// Items each invocation of the check counts in turn.
const ITEMS_PER_INVOCATION: usize = 8;

/// The known-answer check: the check's items counted on `device`, each invocation taking
/// several in turn, and by the CPU; an error naming the adapter and its driver where any
/// item's count differs.
pub(crate) fn known_answer(device: &Arc<Device>) -> Result<(), Error> {
    let gpu = RowGpu::on(device);
    let (plan, batch) = items(|kind| gpu.item_rows(kind))?;
    let frames = gpu.frames(plan.rows().expect("a row plan"))?;
    let items = [&batch[0][..], &batch[1][..]];
    let flight = gpu.launch(plan.n(), &frames, items, DROPPED, ITEMS_PER_INVOCATION)?;
    let counts = flight.wait(device)?;
    match differing(&plan, &batch, &counts) {
        (0, _) => Ok(()),
        (differ, items) => Err(miscounted(
            device,
            &format!("{differ} of {items} items of N = {CHECK_N} differ from the CPU's count"),
        )),
    }
}

/// The check's plan and its items of each kind, cut for a device whose items of a kind
/// leave at most `item_rows(kind)` rows.
fn items(item_rows: impl Fn(Kind) -> usize) -> Result<(Plan, [Vec<Item>; 2]), Error> {
    let plan = Plan::new(CHECK_N, EngineChoice::D4, None, None)?;
    let rows = plan.rows().expect("a row plan");
    let mut batch: [Vec<Item>; 2] = [Vec::new(), Vec::new()];
    for id in 0..rows.len() {
        let Some(kind) = kind_of(rows, id, false) else {
            continue;
        };
        let mut cut = Cut::new(rows, id, kind, item_rows(kind));
        while let Some(item) = cut.next_item() {
            batch[kind as usize].push(item);
        }
    }
    Ok((plan, batch))
}

/// How many of the items of `batch` (of `plan`) the device's `counts` give otherwise than
/// the CPU, and of how many.
fn differing(plan: &Plan, batch: &[Vec<Item>; 2], counts: &[Vec<ItemCount>; 2]) -> (usize, usize) {
    let rows = plan.rows().expect("a row plan");
    let never = AtomicBool::new(false);
    let (mut differ, mut items) = (0, 0);
    for kind in [Kind::Plain, Kind::Ties] {
        let counts = &counts[kind as usize];
        for (k, item) in batch[kind as usize].iter().enumerate() {
            let want = item.count_on_cpu(rows, Chosen::portable(), &never);
            let got = counts.get(k).copied().flatten().map(as_raw);
            items += 1;
            differ += usize::from(got != want);
        }
    }
    (differ, items)
}
