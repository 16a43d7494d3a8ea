//! A run once its plan is resolved and its ledger loaded: the executor opened, the race
//! settled or not, then the rest of the subtasks counted and the counts collected.

use super::collect::collect;
use super::hooks::Hooks;
use super::ledger::Ledger;
use super::open::open;
use super::outcome::RunOutcome;
use super::request::RunRequest;
use crate::error::Error;
use crate::execute::{Executed, Executor};
use crate::plan::Plan;
use crate::resolved::{Resolved, Rival};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A run's plan, how it is counted and what it has counted so far: what the race hands on.
pub(super) struct Counting {
    pub plan: Plan,
    pub resolved: Resolved,
    pub executor: Box<dyn Executor>,
    pub ledger: Ledger,
    /// What the executions so far add to the facts.
    pub executed: Executed,
    /// Notes of the executions so far.
    pub notes: Vec<String>,
    /// Where a race chose the GPUs: the CPU's, which counts the rest should the GPUs' buffers
    /// not fit the address space.
    pub fallback: Option<(Resolved, Box<dyn Executor>)>,
}

impl Counting {
    /// Opens the executor of `plan` for the subtasks `ledger` has still to count (for the
    /// quadrant engine, its tables are built now), and hands on the rival plan that
    /// `--device auto` races against, if any.
    pub fn open(
        plan: Plan,
        mut resolved: Resolved,
        ledger: Ledger,
        stop: &AtomicBool,
    ) -> Result<(Counting, Option<Box<Rival>>), Error> {
        let rival = resolved.race.take();
        let executor = open(&plan, &resolved, ledger.len() - ledger.resumed(), stop)?;
        let counting = Counting {
            plan,
            resolved,
            executor,
            ledger,
            executed: Executed::default(),
            notes: Vec::new(),
            fallback: None,
        };
        Ok((counting, rival))
    }

    /// Counts the subtasks left, saving as it goes, and collects what the run found (its
    /// time from `start`).
    pub fn finish(
        self,
        request: &RunRequest,
        hooks: &Hooks<'_>,
        stop: &AtomicBool,
        start: Instant,
    ) -> Result<RunOutcome, Error> {
        let Counting {
            plan,
            mut resolved,
            mut executor,
            mut ledger,
            mut executed,
            mut notes,
            fallback,
        } = self;
        let unique = request.options.unique;
        let todo = ledger.todo()?;
        let job = (&plan, &todo[..], unique);
        match ledger.execute(&*executor, job, hooks, stop, request.save_every) {
            Ok(more) => executed = executed + more,
            Err(Error::NoRoom(_)) if fallback.is_some() => {
                notes.push("device auto: the GPU's buffers ran out of address space (ulimit -v): the rest counted on the CPU".into());
                (resolved, executor) = fallback.expect("a fallback, above");
                let todo = ledger.todo()?;
                let job = (&plan, &todo[..], unique);
                executed =
                    executed + ledger.execute(&*executor, job, hooks, stop, request.save_every)?;
            }
            Err(e) => return Err(e),
        }
        let device_choice = ledger.choice();
        notes.splice(0..0, resolved.notes.iter().cloned());
        notes.extend(ledger.choice_made_here().map(|race| race.describe()));
        let facts = (executor.facts(), executed, &notes[..]);
        let (sum, searched) = (ledger.sum(), ledger.searched_nodes());
        let elapsed = start.elapsed();
        let mut counts = collect(
            &plan,
            &request.options,
            sum,
            searched,
            ledger.len(),
            facts,
            elapsed,
        );
        counts.device_choice = device_choice;
        let resumed_subtasks = ledger.resumed();
        let identity = ledger.identity().clone();
        let (parts, save_error) = ledger.finish();
        Ok(RunOutcome {
            counts,
            resumed_subtasks,
            shard: request.shard,
            identity,
            parts,
            save_error,
        })
    }
}
