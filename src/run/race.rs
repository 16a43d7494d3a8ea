//! `--device auto`'s race, run ([`crate::race`] says when and why): the CPU counts its
//! calibration shard into the run's ledger (saved like any other subtasks), the GPUs count
//! theirs against the CPU's time, and the run goes on with the winner's plan and what it
//! has counted.

use super::counting::Counting;
use super::hooks::Hooks;
use super::ledger::Ledger;
use super::request::RunRequest;
use crate::device::DeviceChoice;
use crate::error::Error;
use crate::execute::{self, Executed, Executor, Job};
use crate::found::Found;
use crate::parallel::lock;
use crate::plan::Plan;
use crate::race::{DeviceRace, CALIBRATION_SHARDS};
use crate::resolved::Rival;
use crate::shard::Shard;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// How often the GPUs' calibration looks at its deadline and the stop flag.
const DEADLINE_LOOK: Duration = Duration::from_millis(5);

/// Races `counting` (the CPU's plan) against `rival` (the GPUs'), records the choice in the
/// run's checkpoint, and hands on the winner's run with its calibration shard counted.
/// A stop during the race ends in [`Error::Interrupted`], with the CPU's finished subtasks
/// saved: a resumed run counts them on the CPU.
pub(super) fn settle(
    mut counting: Counting,
    rival: Rival,
    request: &RunRequest,
    hooks: &Hooks<'_>,
    stop: &AtomicBool,
) -> Result<Counting, Error> {
    let unique = request.options.unique;
    let cpu_ids = calibration_ids(&counting.plan);
    let started = Instant::now();
    let job = (&counting.plan, &cpu_ids[..], unique);
    let executor = &*counting.executor;
    let executed = counting
        .ledger
        .execute(executor, job, hooks, stop, request.save_every)?;
    let cpu_time = started.elapsed();
    counting.executed = counting.executed + executed;
    // the GPUs have lost once they take longer than the CPU did, unless forced to win
    let deadline = (rival.forced != Some(DeviceChoice::Gpu)).then_some(cpu_time);
    let gpu = execute::open(&rival.plan, &rival.resolved, rival.plan.len(), stop).map(|executor| {
        let ids = calibration_ids(&rival.plan);
        let timed = timed(&*executor, (&rival.plan, &ids, unique), deadline, stop);
        (executor, timed)
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let (executor, (found, gpu_time, gpu_executed)) = match gpu {
        Ok(gpu) => gpu,
        Err(e) if rival.forced == Some(DeviceChoice::Gpu) => return Err(e),
        Err(e) => {
            // a GPU that cannot open: the CPU goes on, and says why
            counting.notes.push(format!(
                "device auto: the GPU could not open ({e}): counted on the CPU"
            ));
            return Ok(counting);
        }
    };
    let finished = match gpu_executed {
        Ok(executed) => Some(executed),
        Err(Error::Interrupted) => None,
        Err(e) if rival.forced == Some(DeviceChoice::Gpu) => return Err(e),
        Err(e) => {
            counting.notes.push(format!(
                "device auto: the GPU failed in the race ({e}): counted on the CPU"
            ));
            None
        }
    };
    let race = DeviceRace::decide(
        CALIBRATION_SHARDS,
        cpu_time,
        gpu_time,
        finished.is_some(),
        rival.forced,
    );
    match (race.chose, finished) {
        (DeviceChoice::Gpu, Some(gpu_executed)) => {
            let identity = request.identity(&rival.plan);
            let mut ledger = counting.ledger.switch(identity, &found)?;
            record(&mut ledger, race, hooks);
            Ok(Counting {
                plan: rival.plan,
                resolved: rival.resolved,
                executor,
                ledger,
                executed: counting.executed + gpu_executed,
                notes: counting.notes,
            })
        }
        _ => {
            record(&mut counting.ledger, race, hooks);
            Ok(counting)
        }
    }
}

/// Tells the caller what the race measured and chose, and records the choice in `ledger` and
/// its checkpoint; a save that fails is reported
/// as any failed save is, and the next save (which carries the choice) tries again: the
/// subtasks counted are not lost to a full disk.
fn record(ledger: &mut Ledger, race: DeviceRace, hooks: &Hooks<'_>) {
    if let Some(decided) = hooks.on_race {
        decided(&race);
    }
    if let (Err(e), Some(report)) = (ledger.record_choice(race), hooks.on_save_error) {
        report(&e);
    }
}

/// The ids of stride shard 0 of [`CALIBRATION_SHARDS`] of `plan`: what each side of a race
/// counts.
fn calibration_ids(plan: &Plan) -> Vec<usize> {
    let shard = Shard::new(0, CALIBRATION_SHARDS).expect("shard 0 of a positive count exists");
    shard.ids(plan.len()).collect()
}

/// Counts `ids` of `plan` on `executor`, stopped at `deadline` (or by `stop`): what each
/// subtask found, the time taken, and how the execution ended ([`Error::Interrupted`] when
/// it was stopped).
fn timed(
    executor: &dyn Executor,
    (plan, ids, unique): (&Plan, &[usize], bool),
    deadline: Option<Duration>,
    stop: &AtomicBool,
) -> (Vec<(usize, Found)>, Duration, Result<Executed, Error>) {
    let cut = AtomicBool::new(false);
    let found = Mutex::new(Vec::with_capacity(ids.len()));
    let started = Instant::now();
    let (executed, elapsed) = std::thread::scope(|scope| {
        let (finished, wait) = mpsc::channel::<()>();
        let cut = &cut;
        scope.spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) = wait.recv_timeout(DEADLINE_LOOK) {
                let late = deadline.is_some_and(|d| started.elapsed() >= d);
                if late || stop.load(Ordering::Relaxed) {
                    cut.store(true, Ordering::Relaxed);
                    return;
                }
            }
        });
        let executed = executor.execute(Job {
            plan,
            ids,
            unique,
            cancel: cut,
            done: &|id, f| lock(&found).push((id, f)),
        });
        let elapsed = started.elapsed();
        drop(finished);
        (executed, elapsed)
    });
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    (found, elapsed, executed)
}
