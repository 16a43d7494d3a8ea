//! The `nqueens` command: parse arguments, run the library, print data on stdout.

#[macro_use]
mod output;
mod cli;
mod messages;
mod pages;
mod progress;
mod scale;
mod signals;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command, CountArgs, ListArgs, MergeArgs, ScaleArgs, ScaleFormat};
use messages::{clap_exit, report_error, EXIT_USAGE};
use nqueens::export::count::{plain_line, stats_line, CountRecord};
use nqueens::Error;
use nqueens::Lister;
use nqueens::{run as run_count, Hooks, RunRequest};
use output::{lock, stdout};
use progress::Progress;
use scale::{export as scale_out, plot};
use signals::{exit_on_signal, interrupt_flag, interrupted_code, say_interrupted};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    match run(cli) {
        Ok(code) => code,
        Err(e) => report_error(&e),
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Count(args) => count(&args),
        Command::List(args) => list(&args),
        Command::Merge(args) => merge(&args),
        Command::Scale(args) => scale(&args),
        Command::Devices => {
            let mut out = stdout();
            for a in nqueens::gpu_adapters() {
                let kind = if a.software { "software" } else { "gpu" };
                writeln!(out, "{} {kind} {}", a.index, a.name)?;
            }
            out.flush()?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Completions { shell } => {
            stdout().write_all(&pages::completions(shell))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command } => match pages::man(command.as_deref())? {
            Ok(page) => {
                stdout().write_all(&page)?;
                Ok(ExitCode::SUCCESS)
            }
            Err(refused) => {
                say!("nqueens: man: {refused}");
                Ok(ExitCode::from(EXIT_USAGE))
            }
        },
    }
}

fn scale(args: &ScaleArgs) -> Result<ExitCode> {
    // a stop ends the measurement: what was measured is printed, then the signal's exit code
    let stop = interrupt_flag(Some("nqueens: interrupted again: ended at once".into()))?;
    let asked = args
        .threads
        .clone()
        .unwrap_or_else(|| scale::default_threads(num_cpus::get()));
    let (threads, added) = scale::thread_list(&asked);
    if added {
        say!("nqueens: scale: adding a 1-thread run, the baseline of every speedup");
    }
    if let Some(path) = &args.plot {
        plot::check_writable(path)?;
    }
    let report = scale::measure(
        args.n,
        &args.options(),
        &threads,
        args.repeat,
        &stop,
        |t, run, secs| say!("threads={t} run={run} {secs:.3}s"),
    )?;
    // the table first: what was measured is printed whatever becomes of the plot
    let text = match args.format {
        ScaleFormat::Table => scale_out::to_table(&report.rows),
        ScaleFormat::Csv => scale_out::to_csv(&report.rows),
        ScaleFormat::Json => scale_out::to_json(&report),
        ScaleFormat::Md => scale_out::to_markdown(&report.rows),
    };
    let mut out = stdout();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    for line in &report.refused {
        say!("nqueens: scale: {line}");
    }
    if !report.refused.is_empty() && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Ok(ExitCode::FAILURE);
    }
    if !report.complete {
        say_interrupted(&format!(
            "nqueens: interrupted; the rows above hold the runs measured before the stop, fewer than --repeat {}",
            args.repeat
        ));
        return Ok(ExitCode::from(interrupted_code()));
    }
    if let Some(path) = &args.plot {
        plot::write(path, &plot::svg(&report)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn merge(args: &MergeArgs) -> Result<ExitCode> {
    exit_on_signal()?;
    let mut records = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        let found = if name == "-" {
            nqueens::read_records(&name, io::stdin().lock())?
        } else {
            let cannot = |e: io::Error| Error::Merge(format!("{name}: cannot read: {e}"));
            // a device or a FIFO could be read without end or block forever: files only
            if !std::fs::metadata(path).map_err(cannot)?.is_file() {
                return Err(Error::Merge(format!(
                    "{name}: is not a regular file (give - to read standard input)"
                ))
                .into());
            }
            let file = std::fs::File::open(path).map_err(cannot)?;
            nqueens::read_records(&name, io::BufReader::new(file))?
        };
        records.extend(found);
    }
    let options = nqueens::MergeOptions {
        trust_totals: args.trust_totals,
    };
    let merged = nqueens::merge(&records, &options)?;
    if let Some(k) = args.verify {
        let opts = nqueens::CountOptions {
            threads: args.search.threads,
            ..Default::default()
        };
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        nqueens::verify(&records, k as usize, &opts, seed)?;
        say!(
            "nqueens: merge: recounted up to {k} subtasks of each of {} shards: all agree",
            records.len()
        );
    }
    let mut out = stdout();
    if args.json {
        writeln!(out, "{}", merged.to_json())?;
    } else {
        match &merged.unique {
            Some(unique) => writeln!(out, "{} {unique}", merged.total)?,
            None => writeln!(out, "{}", merged.total)?,
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn list(args: &ListArgs) -> Result<ExitCode> {
    exit_on_signal()?;
    let opts = args.options();
    let lister = Lister::new(args.n, &opts)?;
    let mut out = BufWriter::with_capacity(1 << 16, stdout());
    let written = lister.write_to(&mut out)?;
    if args.total {
        // with a limit reached there may be more than were listed: count them all
        let total = if opts.limit.is_some_and(|k| written >= k) {
            let counts = nqueens::count(
                args.n,
                &nqueens::CountOptions {
                    threads: opts.threads,
                    unique: args.unique,
                    ..Default::default()
                },
            )?;
            counts.unique.unwrap_or(counts.total)
        } else {
            written as u128
        };
        writeln!(out, "{total}")?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn count(args: &CountArgs) -> Result<ExitCode> {
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
        // a signal has ended it at once (N = 23's plan takes half a second)
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
    let end_now = || {
        say_interrupted(&interrupted);
        std::process::exit(interrupted_code().into());
    };
    let hooks = Hooks {
        cancel: Some(&cancel),
        progress: Some(&report),
        on_save_error: Some(&save_failed),
        on_stop_saved: Some(&end_now),
    };
    let outcome = run_count(&request, &hooks);
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
    for note in &counts.notes {
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
