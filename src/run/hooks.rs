//! What a caller hooks into a run: cancellation, progress, and the reports of its saves.

use crate::error::Error;
use crate::race::DeviceRace;
use std::sync::atomic::AtomicBool;

/// Called once before the search with (finished, of) for the shard (finished > 0 after a
/// resume), then after each finished subtask, from the thread that finished it: calls from
/// two threads may arrive in either order.
///
/// A callback type; [`Hooks`]' example passes one.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// Hooks into a run: cancellation and reports while it runs.
///
/// ```
/// use nqueens::{run, CountOptions, Error, Hooks, RunRequest};
/// use std::sync::atomic::AtomicBool;
/// let request = RunRequest::new(12, CountOptions::default(), None);
/// // a run asked to stop before it starts counts nothing and says so
/// let stop = AtomicBool::new(true);
/// let hooks = Hooks { cancel: Some(&stop), ..Hooks::default() };
/// assert!(matches!(run(&request, &hooks), Err(Error::Interrupted)));
/// let seen = std::sync::Mutex::new(Vec::new());
/// let progress = |done: usize, of: usize| seen.lock().unwrap().push((done, of));
/// let hooks = Hooks { progress: Some(&progress), ..Hooks::default() };
/// let outcome = run(&request, &hooks).unwrap();
/// // reports come from the worker threads, in any order: the furthest says all is done
/// let seen = seen.into_inner().unwrap();
/// assert_eq!(seen.iter().max(), Some(&(outcome.counts.subtasks, outcome.counts.subtasks)));
/// ```
#[derive(Default, Clone, Copy)]
pub struct Hooks<'a> {
    /// Set to stop: workers abandon their subtasks within about a millisecond, the
    /// checkpoint is saved, and the run ends with [`Error::Interrupted`].
    pub cancel: Option<&'a AtomicBool>,
    /// Progress reports.
    pub progress: Option<Progress<'a>>,
    /// Called with the error of a save that failed during the run (the save is tried again
    /// at the next interval).
    pub on_save_error: Option<&'a (dyn Fn(&Error) + Sync)>,
    /// Called once a stop was asked for and the checkpoint saved what was finished by then
    /// (runs with a checkpoint only), before the workers are waited for: a program that must
    /// end at once may end here, losing nothing but the subtasks in flight.
    pub on_stop_saved: Option<&'a (dyn Fn() + Sync)>,
    /// Called once `--device auto`'s race is decided, with what it measured and chose,
    /// before the rest is counted: a run stopped later can still say it.
    pub on_race: Option<&'a (dyn Fn(&DeviceRace) + Sync)>,
    /// Called once the plan is made, before anything is counted, with each note on how it
    /// was chosen (an engine taken for want of memory, the threads that fit): a run of
    /// minutes can say them at its start. They are in the run's counts too.
    pub on_plan: Option<&'a (dyn Fn(&str) + Sync)>,
}

impl Hooks<'_> {
    /// Runs `f` where no run of this process is writing its checkpoint at this moment, the
    /// saves held off while it runs (`None`, `f` not run, where one is: a save is never
    /// waited for, it may hang on a slow disk): a program that must end at once (a stop
    /// before anything new was counted, with nothing to save) ends in `f`, between two
    /// saves, never in the middle of one; where a save was under way, the run's own stop
    /// (which saves, then ends) is left to end it.
    ///
    /// ```
    /// use nqueens::Hooks;
    /// assert_eq!(Hooks::between_saves(|| 2 + 2), Some(4));
    /// ```
    pub fn between_saves<T>(f: impl FnOnce() -> T) -> Option<T> {
        crate::checkpoint::between_saves(f)
    }
}
