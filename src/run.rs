//! The run pipeline, the one path of every count:
//! plan → shard → resume from checkpoint → execute → collect → (the caller) report.
//!
//! [`crate::count()`] and [`crate::count_completions()`] are runs of a whole plan without a
//! checkpoint; `nqueens count` turns its flags into [`RunSettings`] and calls [`run`].
//!
//! Finished subtasks go to an inbox behind a lock and wake nobody. Without a checkpoint
//! nothing else runs; with one, a saver thread wakes every save interval, moves the inbox
//! into the finished set and saves it (a failed save is reported and tried again at the
//! next interval). The checkpoint is opened, locked and written once before any counting, so
//! a file that cannot be written fails the run at once instead of after the work.

use crate::checkpoint::{Checkpoint, DoneSet, Part, RunIdentity};
use crate::counts::Counts;
use crate::device::DeviceChoice;
use crate::engine::{Engine, EngineChoice};
use crate::error::Error;
use crate::execute::{self, Executed, Facts, Job};
use crate::found::Found;
use crate::options::CountOptions;
use crate::parallel::lock;
use crate::plan::Plan;
use crate::settings::Settings;
use crate::shard::Shard;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// Called once before the search with (finished, of) for the shard (finished > 0 after a
/// resume), then after each finished subtask, from the thread that finished it: calls from
/// two threads may arrive in either order.
///
/// A callback type; [`Hooks`]' example passes one.
pub type Progress<'a> = &'a (dyn Fn(usize, usize) + Sync);

/// How often the checkpoint saver looks at the stop flag between saves.
const STOP_LOOK: Duration = Duration::from_millis(10);

/// What to count, validated by [`run`] before any work.
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunSettings, Shard};
/// // the two shards of a run add up to the whole
/// let shard = |i| RunSettings { shard: Shard::new(i, 2).unwrap(), ..RunSettings::new(10, CountOptions::default(), None) };
/// let total: u128 = (0..2).map(|i| run(&shard(i), &Hooks::default()).unwrap().counts.total).sum();
/// assert_eq!(total, 724);
/// ```
#[derive(Clone, Debug)]
pub struct RunSettings {
    /// Board side.
    pub n: usize,
    /// Engine, kernel, device, threads, `unique`, split depth.
    pub options: CountOptions,
    /// Count the completions of these first rows (0-based columns), without symmetry.
    pub prefix: Option<Vec<usize>>,
    /// The slice of the plan to count.
    pub shard: Shard,
    /// Where to save finished subtasks, and resume from when it exists.
    pub checkpoint: Option<PathBuf>,
    /// Time between checkpoint saves.
    pub save_every: Duration,
}

impl RunSettings {
    /// The whole board (or the completions of `prefix`), in one shard, without checkpoint.
    ///
    /// ```
    /// use nqueens::{run, Hooks, RunSettings};
    /// let settings = RunSettings::new(8, nqueens::CountOptions::default(), None);
    /// assert_eq!(run(&settings, &Hooks::default()).unwrap().counts.total, 92);
    /// ```
    pub fn new(n: usize, options: CountOptions, prefix: Option<Vec<usize>>) -> RunSettings {
        RunSettings {
            n,
            options,
            prefix,
            shard: Shard::WHOLE,
            checkpoint: None,
            save_every: Duration::from_secs(60),
        }
    }

    /// Stage 1, the plan and how it is counted ([`crate::settings::resolve`]), resuming the
    /// run `checkpoint` holds. A checkpoint of another N is refused; a resumed run is cut
    /// into subtasks as the run that wrote its checkpoint was.
    /// [`Error::Interrupted`] when `stop` is set before it is done.
    fn resolve(
        &self,
        checkpoint: Option<&Checkpoint>,
        stop: &AtomicBool,
    ) -> Result<(Plan, Settings), Error> {
        self.resolve_resuming(checkpoint.and_then(Checkpoint::saved_run), stop)
    }

    /// [`RunSettings::resolve`] for a run resuming `resumed`.
    fn resolve_resuming(
        &self,
        resumed: Option<&RunIdentity>,
        stop: &AtomicBool,
    ) -> Result<(Plan, Settings), Error> {
        let (Some(saved), Some(path)) = (resumed, &self.checkpoint) else {
            return crate::settings::resolve(
                self.n,
                self.prefix.as_deref(),
                &self.options,
                None,
                stop,
            );
        };
        self.refuse_another_run(saved, path)?;
        let (n, prefix) = (self.n, self.prefix.as_deref());
        match crate::settings::resolve(n, prefix, &self.options, resumed, stop) {
            // auto took the file's engine: a usage error a new run would not meet is that
            // engine refusing this run's flags (a split depth, a kernel), so the file is
            // another run's, not the user's mistake
            Err(e)
                if e.is_usage()
                    && self.options.engine == EngineChoice::Auto
                    && crate::settings::resolve(n, prefix, &self.options, None, stop).is_ok() =>
            {
                Err(another_run(
                    saved,
                    path,
                    &format!("what engine {} does not take: {e}", saved.engine),
                ))
            }
            resolved => resolved,
        }
    }

    /// The plan [`run`] would count with these settings, its checkpoint read as the run
    /// would read it (not locked: a run may hold it), and refused as the run would refuse
    /// it: what `--dry-run` shows.
    ///
    /// ```
    /// use nqueens::{CountOptions, EngineChoice, RunSettings};
    /// let d4 = CountOptions { engine: EngineChoice::D4, ..CountOptions::default() };
    /// let plan = RunSettings::new(16, d4, None).plan().unwrap();
    /// assert_eq!(plan.engine().name(), "d4");
    /// ```
    pub fn plan(&self) -> Result<Plan, Error> {
        let saved = match &self.checkpoint {
            Some(path) => Checkpoint::saved_run_at(path)?,
            None => None,
        };
        let never = AtomicBool::new(false);
        Ok(self.resolve_resuming(saved.as_ref(), &never)?.0)
    }

    /// Refuses, before any plan is built, a checkpoint written by a run this one cannot be:
    /// another N, another engine than the one asked for, or the CPU-only quadrant engine
    /// resumed on a GPU. (Every other difference is found when its finished subtasks are
    /// loaded.)
    fn refuse_another_run(&self, saved: &RunIdentity, path: &std::path::Path) -> Result<(), Error> {
        let refuse = |asked: String| Err(another_run(saved, path, &asked));
        let options = &self.options;
        if saved.n != self.n {
            return refuse(format!("N = {}: use another file or delete it", self.n));
        }
        let engine = Engine::from(options.engine);
        if options.engine != EngineChoice::Auto
            && saved.engine != Engine::Plain
            && engine != saved.engine
        {
            return refuse(format!(
                "engine {engine}: resume it with --engine {}, or use another file",
                saved.engine
            ));
        }
        let gpu = matches!(options.device, DeviceChoice::Gpu | DeviceChoice::GpuOnly)
            || options.gpus.is_some();
        if saved.engine == Engine::Quadrant && gpu {
            return refuse(
                "a GPU, and the quadrant engine counts on the CPU only: resume it with --device auto or cpu, or use another file".into(),
            );
        }
        Ok(())
    }
}

/// The checkpoint at `path`, written by the run `saved`, refused for a run that asks for
/// `asked`.
fn another_run(saved: &RunIdentity, path: &std::path::Path, asked: &str) -> Error {
    Error::Checkpoint {
        path: path.display().to_string(),
        reason: format!(
            "belongs to another run, written by a run of N = {} with engine {} (split depth {}); this run asks for {asked}",
            saved.n, saved.engine, saved.split_depth
        ),
    }
}

/// Hooks into a run: cancellation and reports while it runs.
///
/// ```
/// use nqueens::{run, CountOptions, Error, Hooks, RunSettings};
/// use std::sync::atomic::AtomicBool;
/// let settings = RunSettings::new(12, CountOptions::default(), None);
/// // a run asked to stop before it starts counts nothing and says so
/// let stop = AtomicBool::new(true);
/// let hooks = Hooks { cancel: Some(&stop), ..Hooks::default() };
/// assert!(matches!(run(&settings, &hooks), Err(Error::Interrupted)));
/// let seen = std::sync::Mutex::new(Vec::new());
/// let progress = |done: usize, of: usize| seen.lock().unwrap().push((done, of));
/// let hooks = Hooks { progress: Some(&progress), ..Hooks::default() };
/// let outcome = run(&settings, &hooks).unwrap();
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
}

/// What a finished run found.
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunSettings, Shard};
/// let settings = RunSettings { shard: Shard::new(0, 2).unwrap(), ..RunSettings::new(8, CountOptions::default(), None) };
/// let outcome = run(&settings, &Hooks::default()).unwrap();
/// let parts: u64 = outcome.parts.iter().map(|p| p.total).sum();
/// assert_eq!(u128::from(parts), outcome.counts.total);
/// assert_eq!((outcome.resumed_subtasks, outcome.save_error), (0, None));
/// ```
#[derive(Clone, Debug)]
pub struct RunOutcome {
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

/// Runs the pipeline. On cancellation the checkpoint (if any) is saved and the result is
/// [`Error::Interrupted`] ([`Error::InterruptedUnsaved`] when that save failed).
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunSettings};
/// let settings = RunSettings::new(8, CountOptions { unique: true, ..CountOptions::default() }, None);
/// let outcome = run(&settings, &Hooks::default()).unwrap();
/// assert_eq!((outcome.counts.total, outcome.counts.unique), (92, Some(12)));
/// ```
pub fn run(settings: &RunSettings, hooks: &Hooks<'_>) -> Result<RunOutcome, Error> {
    // the checkpoint is locked and read once, first: its run decides how a resumed run is cut
    let checkpoint = settings
        .checkpoint
        .as_deref()
        .map(Checkpoint::open)
        .transpose()?;
    let never = AtomicBool::new(false);
    // set to stop: before the counting starts, nothing is saved
    let stop = hooks.cancel.unwrap_or(&never);
    let (plan, resolved) = settings.resolve(checkpoint.as_ref(), stop)?;
    if stop.load(Ordering::Relaxed) {
        // stopped before anything was counted: the checkpoint stays as it was
        return Err(Error::Interrupted);
    }
    let shard = settings.shard;
    let shard_len = shard.len(plan.len());
    let identity = RunIdentity {
        n: plan.n(),
        engine: plan.engine(),
        split_depth: plan.depth(),
        plan_subtasks: plan.len(),
        plan_digest: plan.digest(),
        shard,
        unique: settings.options.unique,
        prefix: settings.prefix.clone(),
    };
    // resume
    let mut done = match &checkpoint {
        Some(file) => file.load(&identity)?,
        None => None,
    }
    .map_or_else(|| DoneSet::within_memory(shard_len), Ok)?;
    // the checkpoint as the caller named it, for messages
    let shown_path = settings
        .checkpoint
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    if let Some(file) = &checkpoint {
        // fail fast: a file that cannot be written is found before the work, not after it
        file.save(&identity, &done).map_err(|e| Error::Checkpoint {
            path: shown_path.clone(),
            reason: format!(
                "{}; nothing was counted: free space (or name another file) and run the same command",
                file.left_as_it_was(e, shard_len)
            ),
        })?;
    }
    let resumed = done.len();
    let short = |_| crate::memory::memory_short("the run's list of subtasks");
    let mut todo: Vec<usize> = Vec::new();
    todo.try_reserve_exact(shard_len - resumed).map_err(short)?;
    todo.extend(
        (0..shard_len)
            .filter(|&k| !done.contains(k))
            .map(|k| shard.global(k)),
    );
    if let Some(progress) = hooks.progress {
        progress(resumed, shard_len);
    }
    // execute (the time counts from here: opening builds the quadrant engine's tables)
    let start = Instant::now();
    let cancel = stop;
    let executor = execute::open(&plan, &resolved, todo.len(), cancel)?;
    let finished = AtomicUsize::new(resumed);
    let mut inbox = Inbox::default();
    if checkpoint.is_none() {
        // drained only at the end: room for every part now rather than a failed growth later
        let short = |_| crate::memory::memory_short("the run's results");
        inbox.parts.try_reserve_exact(todo.len()).map_err(short)?;
    }
    let inbox = Mutex::new(inbox);
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
        plan: &plan,
        ids: &todo,
        unique: settings.options.unique,
        cancel,
        done: &on_done,
    };
    let execute = || executor.execute(job);
    let executed = match &checkpoint {
        None => execute(),
        Some(file) => std::thread::scope(|scope| {
            let (stop, stopped) = mpsc::channel::<()>();
            let (inbox, done, identity) = (&inbox, &mut done, &identity);
            let saver = scope.spawn(move || {
                // saves once per interval, whatever the number of subtasks finished, and once
                // as soon as a stop is asked for
                let save = |done: &mut DoneSet| {
                    drain(inbox, done);
                    file.save(identity, done)
                };
                let mut last = Instant::now();
                let mut stop_saved = false;
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    stopped.recv_timeout(STOP_LOOK.min(settings.save_every))
                {
                    if !stop_saved && cancel.load(Ordering::Relaxed) {
                        stop_saved = true;
                        // not reported when it fails: the save after the workers leave is the
                        // last try, and the run's error says what the file holds
                        if let (Ok(()), Some(saved)) = (save(done), hooks.on_stop_saved) {
                            saved();
                        }
                    } else if last.elapsed() >= settings.save_every {
                        if let (Err(e), Some(report)) = (save(done), hooks.on_save_error) {
                            report(&e);
                        }
                        last = Instant::now();
                    }
                }
            });
            let executed = execute();
            drop(stop);
            saver.join().expect("the checkpoint saver does not panic");
            executed
        }),
    };
    drain(&inbox, &mut done);
    let saved = match &checkpoint {
        Some(file) => file.save(&identity, &done),
        None => Ok(()),
    };
    let executed = match executed {
        // a subtask's failure (memory short) after the save that kept the others' work
        Err(Error::Failed(why)) if checkpoint.is_some() && saved.is_ok() => {
            return Err(Error::Failed(format!(
                "{why}; the finished subtasks are saved in {shown_path}"
            )))
        }
        Err(Error::Interrupted) => {
            return Err(match (saved, &checkpoint) {
                (Err(e), Some(file)) => Error::InterruptedUnsaved {
                    path: shown_path.clone(),
                    reason: format!(
                        "{}: free space and run the same command to resume",
                        file.left_as_it_was(e, shard_len)
                    ),
                },
                _ => Error::Interrupted,
            })
        }
        other => other?,
    };
    // collect
    debug_assert!(done.is_complete());
    let searched = lock(&inbox).searched_nodes;
    let counts = collect(
        &plan,
        &settings.options,
        done.sum(),
        searched,
        shard_len,
        (executor.facts(), executed, &resolved.notes),
        start.elapsed(),
    );
    Ok(RunOutcome {
        counts,
        resumed_subtasks: resumed,
        shard,
        identity,
        parts: done.parts().iter().map(|p| p.unwrap_or_default()).collect(),
        save_error: saved.err(),
    })
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
    let settings = crate::settings::for_plan(plan, options)?;
    let executor = execute::open(plan, &settings, ids.len(), &never)?;
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
        (executor.facts(), executed, &settings.notes),
        start.elapsed(),
    );
    Ok((counts, each))
}

/// Stage 5: the counts of a run, from the sum of its subtasks and the facts of its executor.
fn collect(
    plan: &Plan,
    options: &CountOptions,
    sum: Found,
    searched_nodes: u128,
    subtasks: usize,
    (facts, executed, notes): (Facts, Executed, &[String]),
    elapsed: Duration,
) -> Counts {
    let layout = plan.quadrant_layout();
    let notes = notes.iter().cloned().chain(layout.and_then(|l| l.note()));
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
        plan_digest: plan.digest(),
        tables_bytes: layout.map(|layout| layout.memory().tables),
        elapsed,
        peak_memory: peak_memory(),
        notes: notes.collect(),
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

/// The process's peak resident set (`VmHWM`), on Linux.
fn peak_memory() -> Option<u64> {
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
