//! A count as asked for ([`RunRequest`]), and the checks that tie it to the checkpoint it
//! resumes.

use crate::checkpoint::{Checkpoint, RunIdentity};
use crate::engine::{Engine, EngineChoice};
use crate::error::Error;
use crate::options::CountOptions;
use crate::plan::Plan;
use crate::race::DeviceRace;
use crate::resolved::{Context, Resolved};
use crate::shard::Shard;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What to count, as asked for: validated by [`run`](crate::run()) before any work, then
/// resolved against the board, the machine and its checkpoint.
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunRequest, Shard};
/// // the two shards of a run add up to the whole
/// let shard = |i| RunRequest { shard: Shard::new(i, 2).unwrap(), ..RunRequest::new(10, CountOptions::default(), None) };
/// let total: u128 = (0..2).map(|i| run(&shard(i), &Hooks::default()).unwrap().counts.total).sum();
/// assert_eq!(total, 724);
/// ```
#[derive(Clone, Debug)]
pub struct RunRequest {
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

impl RunRequest {
    /// The whole board (or the completions of `prefix`), in one shard, without checkpoint.
    ///
    /// ```
    /// use nqueens::{run, Hooks, RunRequest};
    /// let request = RunRequest::new(8, nqueens::CountOptions::default(), None);
    /// assert_eq!(run(&request, &Hooks::default()).unwrap().counts.total, 92);
    /// ```
    pub fn new(n: usize, options: CountOptions, prefix: Option<Vec<usize>>) -> RunRequest {
        RunRequest {
            n,
            options,
            prefix,
            shard: Shard::WHOLE,
            checkpoint: None,
            save_every: Duration::from_secs(60),
        }
    }

    /// Stage 1, the plan and how it is counted ([`crate::resolved::resolve`]), resuming the
    /// run `checkpoint` holds. A checkpoint of another N is refused; a resumed run is cut
    /// into subtasks as the run that wrote its checkpoint was.
    /// [`Error::Interrupted`] when `stop` is set before it is done.
    pub(super) fn resolve(
        &self,
        checkpoint: Option<&Checkpoint>,
        stop: &AtomicBool,
    ) -> Result<(Plan, Resolved), Error> {
        let saved = checkpoint.and_then(|file| Some((file.saved_run()?, file.choice())));
        self.resolve_resuming(saved, stop)
    }

    /// [`RunRequest::resolve`] for a run resuming `resumed` (and what its race chose).
    fn resolve_resuming(
        &self,
        resumed: Option<(&RunIdentity, Option<DeviceRace>)>,
        stop: &AtomicBool,
    ) -> Result<(Plan, Resolved), Error> {
        let (n, prefix) = (self.n, self.prefix.as_deref());
        let new_run = Context {
            resumed: None,
            raced: None,
            sharded: self.shard.count > 1,
        };
        let (Some((saved, choice)), Some(path)) = (resumed, &self.checkpoint) else {
            return crate::resolved::resolve(n, prefix, &self.options, new_run, stop);
        };
        self.refuse_another_run(saved, path)?;
        let context = Context {
            resumed: Some(saved),
            raced: choice.map(|race| race.chose),
            ..new_run
        };
        match crate::resolved::resolve(n, prefix, &self.options, context, stop) {
            // auto took the file's engine: a usage error a new run would not meet is that
            // engine refusing this run's flags (a split depth, a kernel), so the file is
            // another run's, not the user's mistake
            Err(e)
                if e.is_usage()
                    && self.options.engine == EngineChoice::Auto
                    && crate::resolved::resolve(n, prefix, &self.options, new_run, stop)
                        .is_ok() =>
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

    /// The identity of this request's run of `plan`: what its checkpoint and shard record
    /// carry.
    pub(super) fn identity(&self, plan: &Plan) -> RunIdentity {
        RunIdentity {
            n: plan.n(),
            engine: plan.engine(),
            split_depth: plan.depth(),
            plan_subtasks: plan.len(),
            plan_digest: plan.digest(),
            shard: self.shard,
            unique: self.options.unique,
            prefix: self.prefix.clone(),
        }
    }

    /// The plan [`run`](crate::run()) would count with this request, its checkpoint read as the run
    /// would read it (not locked: a run may hold it), and refused as the run would refuse
    /// it, with the notes the run would give on how it was chosen (an engine taken for want
    /// of memory, the threads that fit): what `--dry-run` shows.
    ///
    /// ```
    /// use nqueens::{CountOptions, EngineChoice, RunRequest};
    /// let d4 = CountOptions { engine: EngineChoice::D4, ..CountOptions::default() };
    /// let (plan, notes) = RunRequest::new(16, d4, None).plan().unwrap();
    /// assert_eq!(plan.engine().name(), "d4");
    /// assert!(notes.is_empty());
    /// ```
    pub fn plan(&self) -> Result<(Plan, Vec<String>), Error> {
        let saved = match &self.checkpoint {
            Some(path) => Checkpoint::saved_run_at(path)?,
            None => None,
        };
        let never = AtomicBool::new(false);
        let resumed = saved.as_ref().map(|(run, choice)| (run, *choice));
        let (plan, resolved) = self.resolve_resuming(resumed, &never)?;
        Ok((plan, resolved.notes))
    }

    /// Refuses, before any plan is built, a checkpoint written by a run this one cannot be:
    /// another N, or another engine than the one asked for. (Every other difference is found
    /// when its finished subtasks are loaded; a run's units count alike on any device.)
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
