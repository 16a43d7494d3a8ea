//! The last stage of a run: its counts, from the sum of its subtasks and the facts of its
//! executor.

use crate::counts::Counts;
use crate::execute::{Executed, Facts};
use crate::found::Found;
use crate::options::CountOptions;
use crate::plan::Plan;
use std::time::Duration;

/// The counts of a run, from the sum of its subtasks and the facts of its executor.
pub(super) fn collect(
    plan: &Plan,
    options: &CountOptions,
    sum: Found,
    searched_nodes: u128,
    subtasks: usize,
    (facts, executed, notes): (Facts, Executed, &[String]),
    elapsed: Duration,
) -> Counts {
    let layout = plan.quadrant_layout();
    let notes = notes.iter().chain(&facts.notes).cloned();
    let notes = notes.chain(layout.and_then(|l| l.note()));
    Counts {
        n: plan.n(),
        total: sum.total,
        unique: options.unique.then_some(sum.unique),
        nodes: sum.nodes,
        searched_nodes,
        subtasks,
        largest_subtask_share: share(sum.max_subtask_nodes, sum.nodes),
        split_depth: plan.depth(),
        engine: plan.engine(),
        kernel: facts.kernel,
        threads: facts.threads,
        device: facts.device,
        gpu_subtasks: executed.gpu_subtasks,
        gpu_items: executed.gpu_items,
        gpu_dispatches: executed.gpu_dispatches,
        gpu_given_up: executed.gpu_items_given_up,
        plan_digest: plan.digest(),
        tables_bytes: layout.map(|layout| layout.memory().tables),
        elapsed,
        peak_memory: peak_memory(),
        notes: notes.collect(),
        device_choice: None,
    }
}

/// The process's peak resident set (`VmHWM`), on Linux.
pub(super) fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// `part / whole`, 0 when there is no whole.
fn share(part: u128, whole: u128) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
