//! A long count: one shard of a plan, resumed from and saved to a checkpoint, cancellable,
//! reporting progress. `nqueens count` runs every count through here.

use crate::checkpoint::{self, DoneSet, RunIdentity};
use crate::count::{count_subtasks, CountOptions, Counts};
use crate::error::Error;
use crate::parallel::Control;
use crate::search::Found;
use crate::shard::Shard;
use crate::split::Plan;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Called after each finished subtask with (finished, of) for the shard.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

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
}

/// What a finished job found.
#[derive(Clone, Debug)]
pub struct JobOutcome {
    /// Totals over the whole shard, resumed subtasks included.
    pub counts: Counts,
    /// Subtasks taken from the checkpoint instead of searched.
    pub resumed_subtasks: usize,
    /// The shard counted.
    pub shard: Shard,
}

impl JobSpec<'_> {
    /// The identity a checkpoint of this job must carry.
    pub fn identity(&self) -> RunIdentity {
        RunIdentity {
            n: self.plan.n(),
            engine: self.plan.engine().name().into(),
            split_depth: self.plan.depth(),
            plan_subtasks: self.plan.len(),
            shard: self.shard,
            unique: self.opts.unique,
            prefix: self.prefix.clone(),
        }
    }
}

/// Runs the job. On cancellation the checkpoint (if any) is saved and the result is
/// [`Error::Interrupted`].
pub fn run_job(spec: &JobSpec<'_>) -> Result<JobOutcome, Error> {
    let identity = spec.identity();
    let shard = spec.shard;
    let shard_len = shard.len(spec.plan.len());
    let mut done = match &spec.checkpoint {
        Some(path) => checkpoint::load(path, &identity)?.unwrap_or_default(),
        None => DoneSet::default(),
    };
    let resumed = done.len();
    let todo: Vec<usize> = (0..shard_len)
        .filter(|&k| !done.contains(k))
        .map(|k| shard.global(k))
        .collect();
    let finished = AtomicUsize::new(resumed);
    let start = Instant::now();
    let (tx, rx) = mpsc::channel::<(usize, Found)>();

    let (result, saved) = std::thread::scope(|scope| {
        let identity = &identity;
        let saver = scope.spawn(move || -> Result<DoneSet, Error> {
            let mut last_save = Instant::now();
            let mut failure = None;
            loop {
                match rx.recv_timeout(spec.save_every) {
                    Ok((id, found)) => done.insert(shard.local(id), found),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                if let Some(path) = &spec.checkpoint {
                    if last_save.elapsed() >= spec.save_every {
                        if let Err(e) = checkpoint::save(path, identity, &done) {
                            failure.get_or_insert(e);
                        }
                        last_save = Instant::now();
                    }
                }
            }
            if let Some(path) = &spec.checkpoint {
                checkpoint::save(path, identity, &done)?;
            }
            failure.map_or(Ok(done), Err)
        });
        let result = {
            let tx = tx;
            let on_done = move |id: usize, found: Found| {
                // the saver outlives the workers: a send can only fail if it died, and then
                // its own error is what gets reported
                let _ = tx.send((id, found));
                if let Some(progress) = spec.progress {
                    progress(finished.fetch_add(1, Ordering::Relaxed) + 1, shard_len);
                }
            };
            let control = Control {
                cancel: spec.cancel,
                on_done: Some(&on_done),
            };
            count_subtasks(spec.plan, &todo, spec.opts, control)
        };
        (
            result,
            saver.join().expect("the checkpoint saver does not panic"),
        )
    });
    let done = saved?;
    let mut counts = result?;
    let found = done.sum();
    counts.total = found.total;
    counts.unique = spec.opts.unique.then_some(found.unique);
    counts.nodes = found.nodes;
    counts.largest_subtask_share = crate::count::share(found.max_subtask_nodes, found.nodes);
    counts.subtasks = shard_len;
    counts.elapsed = start.elapsed();
    Ok(JobOutcome {
        counts,
        resumed_subtasks: resumed,
        shard,
    })
}
