//! What a run has finished, and its checkpoint: the subtasks resumed, the ones left to count,
//! and the saves while they are counted.
//!
//! Finished subtasks go to an inbox behind a lock and wake nobody. Without a checkpoint
//! nothing else runs; with one, a saver thread wakes every save interval, moves the inbox
//! into the finished set and saves it (a failed save is reported and tried again at the
//! next interval). The checkpoint is written once before any counting, so a file that cannot
//! be written fails the run at once instead of after the work.

use super::hooks::Hooks;
use crate::checkpoint::{Checkpoint, DoneSet, Part, RunIdentity};
use crate::error::Error;
use crate::execute::{Executed, Executor, Job};
use crate::found::Found;
use crate::memory::memory_short;
use crate::parallel::lock;
use crate::plan::Plan;
use crate::race::DeviceRace;
use crate::shard::Shard;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How often the checkpoint saver looks at the stop flag between saves.
const STOP_LOOK: Duration = Duration::from_millis(10);

/// The finished subtasks of one shard of a run, and the checkpoint that keeps them.
pub(super) struct Ledger {
    checkpoint: Option<Checkpoint>,
    /// The checkpoint as the caller named it, for messages.
    shown_path: String,
    identity: RunIdentity,
    shard: Shard,
    /// What each position of the shard found, where it is finished.
    done: DoneSet,
    /// Positions taken from the checkpoint.
    resumed: usize,
    /// Nodes searched by this run (resumed subtasks left out).
    searched_nodes: u128,
    /// The last save failed after every subtask was counted.
    save_error: Option<Error>,
    /// What this run's race chose, or the resumed run's, when it raced.
    race: Option<DeviceRace>,
    /// Whether [`Ledger::race`] is this run's (not the resumed run's).
    raced_here: bool,
}

impl Ledger {
    /// The finished subtasks `checkpoint` holds for the run `identity` (none without one),
    /// saved back at once: a file that cannot be written fails here, before the work.
    pub(super) fn resume(
        checkpoint: Option<Checkpoint>,
        shown_path: String,
        identity: RunIdentity,
    ) -> Result<Ledger, Error> {
        let shard = identity.shard;
        let shard_len = shard.len(identity.plan_subtasks);
        let done = match &checkpoint {
            Some(file) => file.load(&identity)?,
            None => None,
        }
        .map_or_else(|| DoneSet::within_memory(shard_len), Ok)?;
        if let Some(file) = &checkpoint {
            file.save(&identity, &done).map_err(|e| Error::Checkpoint {
                path: shown_path.clone(),
                reason: format!(
                    "{}; nothing was counted: free space (or name another file) and run the same command",
                    file.left_as_it_was(e, shard_len)
                ),
            })?;
        }
        let race = checkpoint.as_ref().and_then(Checkpoint::choice);
        Ok(Ledger {
            resumed: done.len(),
            checkpoint,
            shown_path,
            identity,
            shard,
            done,
            searched_nodes: 0,
            save_error: None,
            race,
            raced_here: false,
        })
    }

    /// The run whose subtasks these are.
    pub(super) fn identity(&self) -> &RunIdentity {
        &self.identity
    }

    /// What the race of this run chose, when it raced (this run's, or the resumed run's).
    pub(super) fn choice(&self) -> Option<DeviceRace> {
        self.race
    }

    /// Records what this run's race chose: in the checkpoint (saved at once, and by every
    /// later save: a resumed run counts where it chose), and in the run's counts. A failed
    /// save is the caller's to report; the next save tries again.
    pub(super) fn record_choice(&mut self, race: DeviceRace) -> Result<(), Error> {
        self.race = Some(race);
        self.raced_here = true;
        match &self.checkpoint {
            Some(file) => {
                file.record_choice(race);
                file.save(&self.identity, &self.done)
            }
            None => Ok(()),
        }
    }

    /// What this run's own race chose, when it raced (a resumed run's race is said when the
    /// run is resolved).
    pub(super) fn choice_made_here(&self) -> Option<DeviceRace> {
        self.race.filter(|_| self.raced_here)
    }

    /// The shard's subtasks.
    pub(super) fn len(&self) -> usize {
        self.done.parts().len()
    }

    /// Subtasks taken from the checkpoint instead of searched.
    pub(super) fn resumed(&self) -> usize {
        self.resumed
    }

    /// The plan ids of the subtasks left to count.
    pub(super) fn todo(&self) -> Result<Vec<usize>, Error> {
        let mut todo: Vec<usize> = Vec::new();
        todo.try_reserve_exact(self.len() - self.resumed)
            .map_err(|_| memory_short("the run's list of subtasks"))?;
        let shard = self.shard;
        todo.extend(
            (0..self.len())
                .filter(|&k| !self.done.contains(k))
                .map(|k| shard.global(k)),
        );
        Ok(todo)
    }

    /// Counts the subtasks `ids` of `plan` on `executor`, saving what is finished every
    /// `save_every` and once as soon as `cancel` is set, then once at the end. A stop ends
    /// in [`Error::Interrupted`] (or [`Error::InterruptedUnsaved`] when that save failed).
    /// `why` a run failed, saying where its finished subtasks are kept.
    fn saved_in(&self, why: String) -> String {
        format!(
            "{why}; the finished subtasks are saved in {}",
            self.shown_path
        )
    }

    pub(super) fn execute(
        &mut self,
        executor: &dyn Executor,
        (plan, ids, unique): (&Plan, &[usize], bool),
        hooks: &Hooks<'_>,
        cancel: &AtomicBool,
        save_every: Duration,
    ) -> Result<Executed, Error> {
        let shard_len = self.len();
        let finished = AtomicUsize::new(self.done.len());
        let mut inbox = Inbox::default();
        if self.checkpoint.is_none() {
            // drained only at the end: room for every part now rather than a failed growth later
            inbox
                .parts
                .try_reserve_exact(ids.len())
                .map_err(|_| memory_short("the run's results"))?;
        }
        let inbox = Mutex::new(inbox);
        let shard = self.shard;
        let on_done = |id: usize, found: Found| {
            let mut inbox = lock(&inbox);
            inbox.parts.push((shard.local(id), Part::of(&found)));
            inbox.searched_nodes += found.nodes;
            drop(inbox);
            if let Some(progress) = hooks.progress {
                progress(finished.fetch_add(1, Ordering::Relaxed) + 1, shard_len);
            }
        };
        let job = Job {
            plan,
            ids,
            unique,
            cancel,
            done: &on_done,
        };
        let (identity, done) = (&self.identity, &mut self.done);
        let executed = match &self.checkpoint {
            None => executor.execute(job),
            Some(file) => std::thread::scope(|scope| {
                let (stop, stopped) = mpsc::channel::<()>();
                let saver = scope.spawn(|| {
                    save_while_running(
                        file,
                        (identity, &inbox, done),
                        stopped,
                        hooks,
                        cancel,
                        save_every,
                    )
                });
                let executed = executor.execute(job);
                drop(stop);
                saver.join().expect("the checkpoint saver does not panic");
                executed
            }),
        };
        drain(&inbox, &mut self.done);
        self.searched_nodes += lock(&inbox).searched_nodes;
        let saved = match &self.checkpoint {
            Some(file) => file.save(&self.identity, &self.done),
            None => Ok(()),
        };
        match executed {
            // a subtask's failure (memory short) after the save that kept the others' work
            Err(Error::Failed(why)) if self.checkpoint.is_some() && saved.is_ok() => {
                Err(Error::Failed(self.saved_in(why)))
            }
            Err(Error::NoRoom(why)) if self.checkpoint.is_some() && saved.is_ok() => {
                Err(Error::NoRoom(self.saved_in(why)))
            }
            Err(Error::Interrupted) => Err(match (saved, &self.checkpoint) {
                (Err(e), Some(file)) => Error::InterruptedUnsaved {
                    path: self.shown_path.clone(),
                    reason: format!(
                        "{}: free space and run the same command to resume",
                        file.left_as_it_was(e, shard_len)
                    ),
                },
                _ => Error::Interrupted,
            }),
            other => {
                let executed = other?;
                debug_assert!(ids.iter().all(|&id| self.done.contains(shard.local(id))));
                self.save_error = saved.err();
                Ok(executed)
            }
        }
    }

    /// What the shard's subtasks found together.
    pub(super) fn sum(&self) -> Found {
        self.done.sum()
    }

    /// Nodes searched by this run (resumed subtasks left out).
    pub(super) fn searched_nodes(&self) -> u128 {
        self.searched_nodes
    }

    /// What each subtask of the shard found, in shard order, and the error of a last save
    /// that failed after every subtask was counted.
    pub(super) fn finish(self) -> (Vec<Part>, Option<Error>) {
        let parts = self.done.parts().iter().map(|p| p.unwrap_or_default());
        (parts.collect(), self.save_error)
    }
}

/// The saver thread: saves once per interval, whatever the number of subtasks finished, and
/// once as soon as a stop is asked for, until `stopped` says the workers are done.
fn save_while_running(
    file: &Checkpoint,
    (identity, inbox, done): (&RunIdentity, &Mutex<Inbox>, &mut DoneSet),
    stopped: mpsc::Receiver<()>,
    hooks: &Hooks<'_>,
    cancel: &AtomicBool,
    save_every: Duration,
) {
    let mut save = || {
        drain(inbox, done);
        file.save(identity, done)
    };
    let mut last = Instant::now();
    let mut stop_saved = false;
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(STOP_LOOK.min(save_every))
    {
        if !stop_saved && cancel.load(Ordering::Relaxed) {
            stop_saved = true;
            // not reported when it fails: the save after the workers leave is the last try,
            // and the run's error says what the file holds
            if let (Ok(()), Some(saved)) = (save(), hooks.on_stop_saved) {
                saved();
            }
        } else if last.elapsed() >= save_every {
            if let (Err(e), Some(report)) = (save(), hooks.on_save_error) {
                report(&e);
            }
            last = Instant::now();
        }
    }
}

/// Finished subtasks on their way to the finished set.
#[derive(Default)]
struct Inbox {
    /// (position in the shard, what it found), not yet in the finished set.
    parts: Vec<(usize, Part)>,
    /// Nodes searched by this run so far (resumed subtasks left out).
    searched_nodes: u128,
}

/// Moves the finished subtasks waiting in `inbox` into `done`.
fn drain(inbox: &Mutex<Inbox>, done: &mut DoneSet) {
    for (k, part) in lock(inbox).parts.drain(..) {
        done.insert(k, part);
    }
}
