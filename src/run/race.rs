//! `--device auto`'s race, run ([`crate::race`] says when and why): on the run's one plan,
//! the CPU counts a calibration shard into the run's ledger (saved like any other subtasks),
//! the GPUs count another against the CPU's time into the same ledger, and the run goes on
//! on the winner with both shards counted (the loser's as far as it got).

use super::counting::Counting;
use super::hooks::Hooks;
use super::ledger::Ledger;
use super::open::open;
use super::request::RunRequest;
use crate::device::DeviceChoice;
use crate::error::Error;
use crate::plan::Plan;
use crate::race::{DeviceRace, CALIBRATION_SHARDS};
use crate::resolved::Rival;
use crate::shard::Shard;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often the GPUs' calibration looks at its deadline and the stop flag.
const DEADLINE_LOOK: Duration = Duration::from_millis(5);

/// Races the CPU (`counting`'s executor) against `rival` (the GPUs) on `counting`'s plan,
/// records the choice in the run's checkpoint, and hands on the winner's run. A stop during
/// the race ends in [`Error::Interrupted`], with every finished subtask saved: a resumed run
/// counts the rest on the CPU.
pub(super) fn settle(
    mut counting: Counting,
    rival: Rival,
    request: &RunRequest,
    hooks: &Hooks<'_>,
    stop: &AtomicBool,
) -> Result<Counting, Error> {
    let unique = request.options.unique;
    let [cpu_ids, gpu_ids] = [0, 1].map(|index| calibration_ids(&counting.plan, index));
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
    let plan = &counting.plan;
    let executor = match open(plan, &rival.resolved, plan.len(), stop) {
        Ok(executor) => executor,
        Err(e) if must_win(&rival, &e) => return Err(e),
        Err(_) if stop.load(Ordering::Relaxed) => return Err(Error::Interrupted),
        Err(e) => {
            // a GPU that cannot open: the CPU goes on, and says why
            counting.notes.push(format!(
                "device auto: the GPU could not open ({e}): counted on the CPU"
            ));
            return Ok(counting);
        }
    };
    let job = (plan, &gpu_ids[..], unique);
    let (gpu_executed, gpu_time) = timed(deadline, stop, |cut| {
        counting
            .ledger
            .execute(&*executor, job, hooks, cut, request.save_every)
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    let mut failed = false;
    let finished = match gpu_executed {
        Ok(executed) => Some(executed),
        Err(Error::Interrupted) => None,
        Err(e) if must_win(&rival, &e) => return Err(e),
        Err(e) => {
            counting.notes.push(format!(
                "device auto: the GPU failed in the race ({e}): counted on the CPU"
            ));
            failed = true;
            None
        }
    };
    // a GPU that failed is not chosen, whatever NQUEENS_RACE_WINNER says
    let forced = rival.forced.filter(|_| !failed);
    let race = DeviceRace::decide(
        CALIBRATION_SHARDS,
        cpu_time,
        gpu_time,
        finished.is_some(),
        forced,
    );
    record(&mut counting.ledger, race, hooks);
    if let Some(gpu_executed) = finished {
        counting.executed = counting.executed + gpu_executed;
    }
    match (race.chose, finished) {
        (DeviceChoice::Gpu, Some(_)) => {
            let cpu = (counting.resolved, counting.executor);
            Ok(Counting {
                resolved: rival.resolved,
                executor,
                fallback: Some(cpu),
                ..counting
            })
        }
        _ => Ok(counting),
    }
}

/// Whether the GPUs' failure `e` ends a race `rival` that they must win
/// (`NQUEENS_RACE_WINNER=gpu`): a GPU that fails does, a GPU whose buffers do not fit the
/// address space does not (the CPU counts on, as in any race).
fn must_win(rival: &Rival, e: &Error) -> bool {
    rival.forced == Some(DeviceChoice::Gpu) && !matches!(e, Error::NoRoom(_))
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

/// The ids of stride shard `index` of [`CALIBRATION_SHARDS`] of `plan`: what one side of a
/// race counts (the CPU shard 0, the GPUs shard 1: alike by construction, both kept).
fn calibration_ids(plan: &Plan, index: usize) -> Vec<usize> {
    let shard = Shard::new(index, CALIBRATION_SHARDS).expect("a calibration shard exists");
    shard.ids(plan.len()).collect()
}

/// Runs `count` with a flag set at `deadline` (or when `stop` is): how it ended, and the
/// time it took.
fn timed<T>(
    deadline: Option<Duration>,
    stop: &AtomicBool,
    count: impl FnOnce(&AtomicBool) -> T,
) -> (T, Duration) {
    // a stop that came first cuts it before it starts
    let cut = AtomicBool::new(stop.load(Ordering::Relaxed));
    let started = Instant::now();
    std::thread::scope(|scope| {
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
        let ended = count(cut);
        let elapsed = started.elapsed();
        drop(finished);
        (ended, elapsed)
    })
}
