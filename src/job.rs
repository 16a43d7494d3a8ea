//! A long count: one shard of a plan, resumed from and saved to a checkpoint, cancellable,
//! reporting progress. `nqueens count` runs every count through here.
//!
//! Workers hand each finished subtask to an inbox behind a lock and wake nobody. Without a
//! checkpoint nothing else runs; with one, a saver thread wakes every save interval, moves the
//! inbox into the finished set and saves it (a failed save is reported and tried again at the
//! next interval). The checkpoint is opened, locked and written once before any counting, so
//! a file that cannot be written fails the run at once instead of after the work.

use crate::checkpoint::{Checkpoint, DoneSet, Part, RunIdentity};
use crate::count::{count_subtasks, share, CountOptions, Counts};
use crate::error::Error;
use crate::parallel::Control;
use crate::search::Found;
use crate::shard::Shard;
use crate::split::Plan;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Called once before the search with (finished, of) for the shard (finished > 0 after a
/// resume), then after each finished subtask.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Called when a checkpoint save fails during the run; the save is tried again later.
pub type SaveFailed<'a> = &'a (dyn Fn(&Error) + Sync);

/// What to run.
pub struct JobSpec<'a> {
    /// The subtasks.
    pub plan: &'a Plan,
    /// Threads, kernel, `unique`.
    pub opts: &'a CountOptions,
    /// The prefix the plan was built from (part of the run's identity).
    pub prefix: Option<Vec<usize>>,
    /// The slice of the plan to count.
    pub shard: Shard,
    /// Where to save finished subtasks, and resume from when it exists.
    pub checkpoint: Option<PathBuf>,
    /// Time between checkpoint saves.
    pub save_every: Duration,
    /// Set to stop between subtasks; the checkpoint is saved before returning.
    pub cancel: Option<&'a AtomicBool>,
    /// Progress reports.
    pub progress: Option<Progress<'a>>,
    /// Reports of failed saves during the run.
    pub on_save_error: Option<SaveFailed<'a>>,
}

/// What a finished job found.
#[derive(Clone, Debug)]
pub struct JobOutcome {
    /// Totals over the whole shard, resumed subtasks included (`searched_nodes`: this run's).
    pub counts: Counts,
    /// Subtasks taken from the checkpoint instead of searched.
    pub resumed_subtasks: usize,
    /// The shard counted.
    pub shard: Shard,
    /// The run's identity (what shard results and checkpoints carry).
    pub identity: RunIdentity,
    /// What each subtask of the shard found, in shard order (id `shard.global(k)` at `k`).
    pub parts: Vec<Part>,
    /// The last save failed after every subtask was counted: the counts are whole, the file
    /// is older than them.
    pub save_error: Option<Error>,
}

impl JobSpec<'_> {
    /// The identity a checkpoint of this job must carry.
    pub fn identity(&self) -> RunIdentity {
        RunIdentity {
            n: self.plan.n(),
            engine: self.plan.engine().name().into(),
            split_depth: self.plan.depth(),
            plan_subtasks: self.plan.len(),
            plan_digest: self.plan.digest(),
            shard: self.shard,
            unique: self.opts.unique,
            prefix: self.prefix.clone(),
        }
    }
}

/// Runs the job. On cancellation the checkpoint (if any) is saved and the result is
/// [`Error::Interrupted`] (or the save's error when that save failed).
pub fn run_job(spec: &JobSpec<'_>) -> Result<JobOutcome, Error> {
    let identity = spec.identity();
    let shard = spec.shard;
    let shard_len = shard.len(spec.plan.len());
    let checkpoint = spec
        .checkpoint
        .as_deref()
        .map(Checkpoint::open)
        .transpose()?;
    let mut done = match &checkpoint {
        Some(file) => file.load(&identity)?,
        None => None,
    }
    .unwrap_or_else(|| DoneSet::new(shard_len));
    if let Some(file) = &checkpoint {
        // fail fast: a file that cannot be written is found before the work, not after it
        file.save(&identity, &done)?;
    }
    let resumed = done.len();
    let todo: Vec<usize> = (0..shard_len)
        .filter(|&k| !done.contains(k))
        .map(|k| shard.global(k))
        .collect();
    if let Some(progress) = spec.progress {
        progress(resumed, shard_len);
    }
    let finished = AtomicUsize::new(resumed);
    let inbox: Mutex<Vec<(usize, Part)>> = Mutex::new(Vec::new());
    let on_done = |id: usize, found: Found| {
        lock(&inbox).push((shard.local(id), Part::of(&found)));
        if let Some(progress) = spec.progress {
            progress(finished.fetch_add(1, Ordering::Relaxed) + 1, shard_len);
        }
    };
    let control = Control {
        cancel: spec.cancel,
        on_done: Some(&on_done),
    };
    let start = Instant::now();
    let result = match &checkpoint {
        None => count_subtasks(spec.plan, &todo, spec.opts, control),
        Some(file) => std::thread::scope(|scope| {
            let (stop, stopped) = mpsc::channel::<()>();
            let (inbox, done, identity) = (&inbox, &mut done, &identity);
            let saver = scope.spawn(move || {
                // wakes once per interval, whatever the number of subtasks finished
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(spec.save_every)
                {
                    drain(inbox, done);
                    if let Err(e) = file.save(identity, done) {
                        if let Some(report) = spec.on_save_error {
                            report(&e);
                        }
                    }
                }
            });
            let result = count_subtasks(spec.plan, &todo, spec.opts, control);
            drop(stop);
            saver.join().expect("the checkpoint saver does not panic");
            result
        }),
    };
    drain(&inbox, &mut done);
    let saved = match &checkpoint {
        Some(file) => file.save(&identity, &done),
        None => Ok(()),
    };
    let ran = match result {
        Err(Error::Interrupted) => return Err(saved.err().unwrap_or(Error::Interrupted)),
        other => other?,
    };
    let sum = done.sum();
    let counts = Counts {
        total: sum.total,
        unique: spec.opts.unique.then_some(sum.unique),
        nodes: sum.nodes,
        searched_nodes: ran.searched_nodes,
        subtasks: shard_len,
        largest_subtask_share: share(sum.max_subtask_nodes, sum.nodes),
        elapsed: start.elapsed(),
        ..ran
    };
    debug_assert!(done.is_complete());
    Ok(JobOutcome {
        counts,
        resumed_subtasks: resumed,
        shard,
        identity,
        parts: done.parts().iter().map(|p| p.unwrap_or_default()).collect(),
        save_error: saved.err(),
    })
}

/// Moves the finished subtasks waiting in `inbox` into `done`.
fn drain(inbox: &Mutex<Vec<(usize, Part)>>, done: &mut DoneSet) {
    for (k, part) in lock(inbox).drain(..) {
        done.insert(k, part);
    }
}

/// The inbox's lock; a worker that panicked while holding it left nothing half-written.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
