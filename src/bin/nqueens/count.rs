//! `nqueens count`: the run with the program's hooks (signals, progress bar, save errors
//! said once), its result on stdout and its notes on stderr; `--dry-run`'s plan line.

use crate::cli::CountArgs;
use crate::output::{lock, stdout};
use crate::progress::Progress;
use crate::signals::{exit_on_signal, interrupt_flag, interrupted_code, say_interrupted};
use anyhow::Result;
use nqueens::export::count::{plain_line, stats_line, CountRecord};
use nqueens::{run, DeviceRace, Error, Hooks, RunRequest};
use std::io::Write;
use std::process::ExitCode;

/// Runs `nqueens count` with `args`; the exit code says how it ended.
pub fn count(args: &CountArgs) -> Result<ExitCode> {
    // signals first: a SIGTERM while threads start or the plan is built is not lost. With
    // nothing to save (no checkpoint, or a dry run) the first one ends the process at once;
    // otherwise it stops the run, which saves, and a second one ends the process
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
    let cancel = interrupt_flag(again)?;
    let request = args.request(|name| std::env::var(name).ok())?;
    let chosen_shard = Some(request.shard).filter(|s| s.count > 1);
    if args.dry_run {
        // a signal has ended it at once (N = 27's plan takes seconds)
        return dry_run(&request);
    }
    let bar = Progress::new(args.progress);
    let report = |done: usize, of: usize| {
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
        Some(path) => format!(
            "nqueens: interrupted; finished subtasks are saved in {}: run the same command to resume",
            path.display()
        ),
        None => "nqueens: interrupted".into(),
    };
    // Stopped, a run waits for its workers to leave their subtasks: microseconds each, but
    // thousands of threads on a few cores take longer than the contract's 100 ms. So the
    // process ends as soon as nothing is left to save: at once without a checkpoint, and
    // right after the save that follows the stop with one.
    // what the race measured, said as soon as it is decided (a stop may come before the end)
    let raced = std::sync::Mutex::new(None);
    let on_race = |race: &DeviceRace| {
        let line = race.describe();
        say!("nqueens: note: {line}");
        *lock(&raced) = Some(line);
    };
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
    };
    let outcome = run(&request, &hooks);
    if let Some(bar) = &bar {
        bar.finish();
    }
    let outcome = match outcome {
        Err(Error::Interrupted) => {
            // stopped while the plan was made, before the checkpoint's first save
            let unsaved = args.checkpoint.as_ref().is_some_and(|p| !p.exists());
            if unsaved {
                say_interrupted("nqueens: interrupted before the count began: nothing to save");
            } else {
                say_interrupted(&interrupted);
            }
            return Ok(ExitCode::from(interrupted_code()));
        }
        Err(e @ Error::InterruptedUnsaved { .. }) => {
            say_interrupted(&format!("nqueens: {e}"));
            return Ok(ExitCode::from(interrupted_code()));
        }
        other => other?,
    };
    let counts = &outcome.counts;
    let mut out = stdout();
    if args.json {
        let record = CountRecord::from_run(&outcome, chosen_shard.is_some());
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
    let said = lock(&raced).take();
    for note in counts.notes.iter().filter(|&n| Some(n) != said.as_ref()) {
        say!("nqueens: note: {note}");
    }
    if args.stats {
        say!("{}", stats_line(counts));
    }
    Ok(ExitCode::SUCCESS)
}

/// `count --dry-run`: what the count would run, from the same resolution as the count itself.
fn dry_run(request: &RunRequest) -> Result<ExitCode> {
    let plan = request.plan()?;
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
    Ok(ExitCode::SUCCESS)
}
