//! The run pipeline, the one path of every count: open the checkpoint, resolve the request,
//! load what is resumed, execute while saving, finish.
//!
//! [`count()`], [`count_completions()`] and [`count_subtasks()`] are runs of a whole plan
//! (or of ids cut by hand) without a checkpoint; `nqueens count` turns its flags into a
//! [`RunRequest`] and calls [`run`].

mod collect;
mod counting;
mod estimate;
mod hooks;
mod ledger;
mod open;
mod outcome;
mod race;
mod request;

pub use estimate::Estimate;
pub use hooks::{Hooks, Progress};
pub use outcome::RunOutcome;
pub use request::RunRequest;

use crate::checkpoint::Checkpoint;
use crate::counts::Counts;
use crate::error::Error;
use crate::execute::Job;
use crate::found::Found;
use crate::options::CountOptions;
use crate::parallel::lock;
use crate::plan::Plan;
use collect::collect;
use counting::Counting;
use ledger::Ledger;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Runs the pipeline. On cancellation the checkpoint (if any) is saved and the result is
/// [`Error::Interrupted`] ([`Error::InterruptedUnsaved`] when that save failed).
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunRequest};
/// let request = RunRequest::new(8, CountOptions { unique: true, ..CountOptions::default() }, None);
/// let outcome = run(&request, &Hooks::default()).unwrap();
/// assert_eq!((outcome.counts.total, outcome.counts.unique), (92, Some(12)));
/// ```
pub fn run(request: &RunRequest, hooks: &Hooks<'_>) -> Result<RunOutcome, Error> {
    let never = AtomicBool::new(false);
    let stop = hooks.cancel.unwrap_or(&never);
    // the checkpoint is locked and read first: its run decides how a resumed run is cut
    let path = request.checkpoint.as_deref();
    let checkpoint = path.map(Checkpoint::open).transpose()?;
    let (plan, resolved) = request.resolve(checkpoint.as_ref(), stop)?;
    if stop.load(Ordering::Relaxed) {
        // stopped before anything was counted: the checkpoint stays as it was
        return Err(Error::Interrupted);
    }
    if let Some(planned) = hooks.on_plan {
        resolved.notes.iter().for_each(|note| planned(note));
    }
    let identity = request.identity(&plan);
    let shown_path = path.map(|p| p.display().to_string()).unwrap_or_default();
    let ledger = Ledger::resume(checkpoint, shown_path, identity)?;
    if let Some(progress) = hooks.progress {
        progress(ledger.resumed(), ledger.len());
    }
    // the time counts from here: opening builds the quadrant engine's tables
    let start = Instant::now();
    let (counting, rival) = Counting::open(plan, resolved, ledger, stop)?;
    let counting = match rival {
        Some(rival) => race::settle(counting, *rival, request, hooks, stop)?,
        None => counting,
    };
    let outcome = counting.finish(request, hooks, stop, start);
    crate::stages::report();
    outcome
}

/// Counts the subtasks `ids` of `plan` (execute and collect only: no shard, no checkpoint)
/// and gives what each found, in the order of `ids`: what `merge --verify` recounts.
pub(crate) fn recount(
    plan: &Plan,
    ids: &[usize],
    options: &CountOptions,
) -> Result<(Counts, Vec<Found>), Error> {
    let start = Instant::now();
    let never = AtomicBool::new(false);
    let resolved = crate::resolved::for_plan(plan, options)?;
    let executor = open::open(plan, &resolved, ids.len(), &never)?;
    let found: Mutex<Vec<(usize, Found)>> = Mutex::new(Vec::with_capacity(ids.len()));
    let executed = executor.execute(Job {
        plan,
        ids,
        unique: options.unique,
        cancel: &never,
        done: &|id, f| lock(&found).push((id, f)),
    })?;
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    let sum: Found = found.iter().map(|&(_, f)| f).sum();
    found.sort_unstable_by_key(|&(id, _)| id);
    let by_id = |id: usize| found[found.partition_point(|&(i, _)| i < id)].1;
    let each = ids.iter().map(|&id| by_id(id)).collect();
    let counts = collect(
        plan,
        options,
        sum,
        sum.nodes,
        ids.len(),
        (executor.facts(), executed, &resolved.notes),
        start.elapsed(),
    );
    Ok((counts, each))
}

/// Counts the solutions of the N-Queens problem on an `n`×`n` board.
///
/// ```
/// use nqueens::{count, CountOptions};
/// let opts = CountOptions { unique: true, ..CountOptions::default() };
/// let c = count(8, &opts).unwrap();
/// assert_eq!((c.total, c.unique), (92, Some(12)));
/// assert!(count(33, &opts).is_err());
/// ```
pub fn count(n: usize, opts: &CountOptions) -> Result<Counts, Error> {
    let request = RunRequest::new(n, opts.clone(), None);
    Ok(run(&request, &Hooks::default())?.counts)
}

/// Counts the completions of the first rows `prefix` (0-based columns), without symmetry.
///
/// ```
/// use nqueens::{count_completions, CountOptions};
/// // 8x8: four solutions have their first queen in the corner, one of them "1 5 ..."
/// let opts = CountOptions::default();
/// assert_eq!(count_completions(8, &[0], &opts).unwrap().total, 4);
/// assert_eq!(count_completions(8, &[0, 4], &opts).unwrap().total, 1);
/// assert!(count_completions(8, &[0, 1], &CountOptions::default()).is_err());
/// ```
pub fn count_completions(n: usize, prefix: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    let request = RunRequest::new(n, opts.clone(), Some(prefix.to_vec()));
    Ok(run(&request, &Hooks::default())?.counts)
}

/// Counts the subtasks `ids` of `plan`: a slice of a plan cut by hand (shards cut it by
/// stride, see [`RunRequest::shard`]).
///
/// ```
/// use nqueens::{EngineChoice, Plan};
/// use nqueens::{count_subtasks, CountOptions};
/// let plan = Plan::new(8, EngineChoice::Mirror, None, Some(2)).unwrap();
/// let (evens, odds): (Vec<usize>, Vec<usize>) = (0..plan.len()).partition(|id| id % 2 == 0);
/// let opts = CountOptions::default();
/// let total = count_subtasks(&plan, &evens, &opts).unwrap().total
///     + count_subtasks(&plan, &odds, &opts).unwrap().total;
/// assert_eq!(total, 92);
/// ```
pub fn count_subtasks(plan: &Plan, ids: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    Ok(crate::run::recount(plan, ids, opts)?.0)
}
