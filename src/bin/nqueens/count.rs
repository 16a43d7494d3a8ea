//! `nqueens count`: the run with the program's hooks (signals, progress bar, save errors
//! said once), its result on stdout and its notes on stderr; `--dry-run`'s plan line.

use crate::cli::CountArgs;
use crate::output::{lock, stdout};
use crate::progress::Progress;
use crate::signals::{
    exit_on_signal, interrupt_flag, interrupted_code, say_interrupted, FirstSignal,
};
use anyhow::Result;
use nqueens::export::count::{plain_line, CountRecord};
use nqueens::{run, DeviceRace, Error, Hooks, RunOutcome, RunRequest, Shard};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

/// Runs `nqueens count` with `args`; the exit code says how it ended.
pub fn count(args: &CountArgs) -> Result<ExitCode> {
    let (cancel, finished) = stop_on_signals(args)?;
    let request = args.request(crate::cli::var)?;
    let chosen_shard = Some(request.shard).filter(|s| s.count > 1);
    if args.dry_run {
        // a signal has ended it at once (N = 27's plan takes seconds)
        return dry_run(&request);
    }
    let bar = Progress::new(args.progress);
    let report = |done: usize, of: usize| {
        finished.fetch_add(1, Ordering::SeqCst);
        if let Some(bar) = &bar {
            bar.update(done, of);
        }
    };
    // a save failing for the same reason every interval (a full disk) is said once
    let last_save_error = std::sync::Mutex::new(String::new());
    let save_failed = |e: &Error| {
        let line = e.to_string();
        let mut last = lock(&last_save_error);
        if *last != line {
            say!("nqueens: {line}; trying again at every save");
            *last = line;
        }
    };
    let interrupted = match &args.checkpoint {
        Some(path) => stopped_and_saved(path),
        None => "nqueens: interrupted".into(),
    };
    // Stopped, a run waits for its workers to leave their subtasks: microseconds each, but
    // thousands of threads on a few cores take longer than the contract's 100 ms. So the
    // process ends as soon as nothing is left to save: at once without a checkpoint, and
    // right after the save that follows the stop with one.
    // how the plan was chosen, said before the count (a shard switched to d4 for want of
    // memory runs minutes), and what the race measured as soon as it is decided (a stop may
    // come before the end): each note once
    let said = std::sync::Mutex::new(Vec::new());
    let say_note = |line: &str| {
        say!("nqueens: note: {line}");
        lock(&said).push(line.to_string());
    };
    let on_race = |race: &DeviceRace| say_note(&race.describe());
    let end_now = || {
        say_interrupted(&interrupted);
        std::process::exit(interrupted_code().into());
    };
    let hooks = Hooks {
        cancel: Some(&cancel),
        progress: Some(&report),
        on_save_error: Some(&save_failed),
        on_stop_saved: Some(&end_now),
        on_race: Some(&on_race),
        on_plan: Some(&say_note),
    };
    let outcome = run(&request, &hooks);
    if let Some(bar) = &bar {
        bar.finish();
    }
    let outcome = match outcome {
        Err(Error::Interrupted) => {
            match &args.checkpoint {
                Some(path) => say_interrupted(&stopped_before_counting(path)),
                None => say_interrupted(&interrupted),
            }
            return Ok(ExitCode::from(interrupted_code()));
        }
        Err(e @ Error::InterruptedUnsaved { .. }) => {
            say_interrupted(&format!("nqueens: {e}"));
            return Ok(ExitCode::from(interrupted_code()));
        }
        other => other?,
    };
    let said = lock(&said);
    say_outcome(args, &outcome, chosen_shard, &said)
}

/// The stop signals' handling, set first (a SIGTERM while threads start or the plan is built
/// is not lost): the run's stop flag, and the count of its progress reports. With nothing
/// to save (no checkpoint, or a dry run) the first signal ends the process at once;
/// otherwise it stops the run, which saves, and a second one ends the process.
fn stop_on_signals(args: &CountArgs) -> Result<(Arc<AtomicBool>, Arc<AtomicUsize>)> {
    let saves = args.checkpoint.is_some() && !args.dry_run;
    if !saves {
        exit_on_signal()?;
    }
    let again = args.checkpoint.as_ref().filter(|_| saves).map(|path| {
        format!(
            "nqueens: interrupted again: ended at once, without the save that follows a stop; {} holds the save before it: run the same command to resume",
            path.display()
        )
    });
    // until a subtask finishes, the checkpoint holds all there is: a stop ends the process
    // at once (planning N = 27 polls the stop only every 0.1 s or so), between two saves
    // (during one, the run's own stop saves and ends it)
    let finished = Arc::new(AtomicUsize::new(0));
    let first = args.checkpoint.clone().filter(|_| saves).map(|path| {
        let finished = finished.clone();
        Box::new(move || {
            let _ = Hooks::between_saves(|| {
                // (the first report is the resumed subtasks, before any is counted)
                if finished.load(Ordering::SeqCst) <= 1 {
                    say_interrupted(&stopped_before_counting(&path));
                    std::process::exit(interrupted_code().into());
                }
            });
        }) as FirstSignal
    });
    Ok((interrupt_flag(again, first)?, finished))
}

/// Prints what a finished run counted (stdout) and what it has to say (stderr: the shard's
/// partial total, a last save that failed, the notes not said yet (`said`), `--stats`).
fn say_outcome(
    args: &CountArgs,
    outcome: &RunOutcome,
    chosen_shard: Option<Shard>,
    said: &[String],
) -> Result<ExitCode> {
    let counts = &outcome.counts;
    let mut out = stdout();
    if args.json {
        let record = CountRecord::from_run(outcome, chosen_shard.is_some());
        writeln!(out, "{}", record.to_json())?;
    } else {
        writeln!(out, "{}", plain_line(counts.total, counts.unique))?;
    }
    out.flush()?;
    if let Some(s) = chosen_shard.filter(|_| !args.json) {
        say!("nqueens: the total of shard {s} only: count every shard with --json and add them up with nqueens merge");
    }
    if let Some(e) = &outcome.save_error {
        say!("nqueens: {e}; the total above is complete, the checkpoint is older than it");
    }
    for note in counts.notes.iter().filter(|&n| !said.contains(n)) {
        say!("nqueens: note: {note}");
    }
    if args.stats {
        say!("{}", counts.stats_line());
    }
    Ok(ExitCode::SUCCESS)
}

/// What a run with the checkpoint `path` says when stopped before it counted anything new:
/// the file holds what an earlier run saved, or nothing was saved yet.
fn stopped_before_counting(path: &std::path::Path) -> String {
    match path.exists() {
        true => stopped_and_saved(path),
        false => "nqueens: interrupted before the count began: nothing to save".into(),
    }
}

/// What a run with the checkpoint `path` says when stopped once its finished subtasks are
/// saved there.
fn stopped_and_saved(path: &std::path::Path) -> String {
    format!(
        "nqueens: interrupted; finished subtasks are saved in {}: run the same command to resume",
        path.display()
    )
}

/// `count --dry-run`: what the count would run, from the same resolution as the count itself.
fn dry_run(request: &RunRequest) -> Result<ExitCode> {
    let (plan, notes) = request.plan()?;
    let shard = request.shard;
    let mut out = stdout();
    writeln!(
        out,
        "n={} engine={} split_depth={} plan_subtasks={} plan_digest={} shard={shard} subtasks={}",
        plan.n(),
        plan.engine().name(),
        plan.depth(),
        plan.len(),
        plan.digest(),
        shard.len(plan.len()),
    )?;
    out.flush()?;
    for note in notes {
        say!("nqueens: note: {note}");
    }
    Ok(ExitCode::SUCCESS)
}
