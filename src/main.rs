//! The `nqueens` command: parse arguments, run the library, print data on stdout.

mod cli;
mod progress;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command, CountArgs, ListArgs, MergeArgs, ScaleArgs, ScaleFormat};
use nqueens::job::{run_job, JobSpec};
use nqueens::list::Lister;
use nqueens::report::{plain_line, stats_line, CountRecord};
use nqueens::shard::Shard;
use nqueens::Error;
use progress::Progress;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Exit code for usage errors (clap's own code too).
const EXIT_USAGE: u8 = 2;
/// Exit code after an interruption (SIGINT/SIGTERM).
const EXIT_INTERRUPTED: u8 = 130;

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

/// Prints help and version as clap does; any other parse error as one line, exit 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 })
        }
        _ => {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or("invalid arguments");
            let line = line.strip_prefix("error: ").unwrap_or(line);
            eprintln!("nqueens: {line}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Maps an error to its message and exit code; a closed stdout is a quiet success.
fn report_error(e: &anyhow::Error) -> ExitCode {
    if let Some(io) = e.downcast_ref::<io::Error>() {
        if io.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
    }
    eprintln!("nqueens: {e:#}");
    match e.downcast_ref::<Error>() {
        Some(Error::Interrupted) => ExitCode::from(EXIT_INTERRUPTED),
        Some(e) if e.is_usage() => ExitCode::from(EXIT_USAGE),
        _ => ExitCode::FAILURE,
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Count(args) => count(&args),
        Command::List(args) => list(&args),
        Command::Merge(args) => merge(&args),
        Command::Scale(args) => scale(&args),
        Command::Completions { shell } => {
            // generated into memory first: clap_complete panics when its writer fails
            let mut script = Vec::new();
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "nqueens", &mut script);
            io::stdout().lock().write_all(&script)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn scale(args: &ScaleArgs) -> Result<ExitCode> {
    use nqueens::scale;
    let threads = args
        .threads
        .clone()
        .unwrap_or_else(|| scale::default_threads(num_cpus::get()));
    let report = scale::measure(
        args.n,
        &args.options(),
        &threads,
        args.repeat as usize,
        |t, run, secs| {
            eprintln!("threads={t} run={run} {secs:.3}s");
        },
    )?;
    if let Some(path) = &args.plot {
        let svg = scale::plot_svg(&report)?;
        std::fs::write(path, svg)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let text = match args.format {
        ScaleFormat::Table => scale::to_table(&report.rows),
        ScaleFormat::Csv => scale::to_csv(&report.rows),
        ScaleFormat::Json => scale::to_json(&report),
        ScaleFormat::Md => scale::to_markdown(&report.rows),
    };
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn merge(args: &MergeArgs) -> Result<ExitCode> {
    let mut records = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        let text = if name == "-" {
            io::read_to_string(io::stdin())?
        } else {
            std::fs::read_to_string(path)
                .map_err(|e| Error::Merge(format!("{name}: cannot read: {e}")))?
        };
        records.extend(nqueens::merge::parse_records(&name, &text)?);
    }
    let merged = nqueens::merge::merge(&records)?;
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", merged.to_json())?;
    } else {
        let number = |s: &str| s.parse::<u128>().expect("merge checked every count");
        writeln!(
            out,
            "{}",
            plain_line(number(&merged.total), merged.unique.as_deref().map(number))
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// A flag set by the first SIGINT or SIGTERM; a second one ends the process at once.
fn interrupt_flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            signal,
            EXIT_INTERRUPTED as i32,
            flag.clone(),
        )?;
        signal_hook::flag::register(signal, flag.clone())?;
    }
    Ok(flag)
}

fn list(args: &ListArgs) -> Result<ExitCode> {
    let opts = args.options();
    let lister = Lister::new(args.n, &opts)?;
    let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
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
    let mut opts = args.options();
    let prefix = match &args.prefix {
        Some(p) => Some(cli::parse_prefix(p, args.n).map_err(Error::BadPrefix)?),
        None => None,
    };
    let chosen_shard = match args.shard {
        Some(s) => Some(s),
        None => Shard::from_env(|name| std::env::var(name).ok())?,
    };
    if opts.split_depth.is_none() {
        // a resumed run cuts its subtasks as the run that wrote the checkpoint did
        opts.split_depth = args
            .checkpoint
            .as_deref()
            .and_then(nqueens::checkpoint::split_depth_of);
    }
    let plan = opts.plan(args.n, prefix.as_deref())?;
    let shard = chosen_shard.unwrap_or(Shard::WHOLE);
    let cancel = interrupt_flag()?;
    let bar = Progress::new(args.progress, shard.len(plan.len()));
    let report = |done: usize, _of: usize| {
        if let Some(bar) = &bar {
            bar.update(done);
        }
    };
    let spec = JobSpec {
        plan: &plan,
        opts: &opts,
        prefix,
        shard,
        checkpoint: args.checkpoint.clone(),
        save_every: Duration::from_secs_f64(args.checkpoint_every),
        cancel: Some(&cancel),
        progress: Some(&report),
    };
    let outcome = run_job(&spec);
    if let Some(bar) = &bar {
        bar.finish();
    }
    let outcome = match outcome {
        Err(Error::Interrupted) => {
            let saved = match &args.checkpoint {
                Some(path) => format!(
                    "; finished subtasks are saved in {}: run the same command to resume",
                    path.display()
                ),
                None => String::new(),
            };
            eprintln!("nqueens: interrupted{saved}");
            return Ok(ExitCode::from(EXIT_INTERRUPTED));
        }
        other => other?,
    };
    let counts = &outcome.counts;
    let mut out = io::stdout().lock();
    if args.json {
        let record = CountRecord::from_job(&outcome, plan.len(), chosen_shard.is_some());
        writeln!(out, "{}", record.to_json())?;
    } else {
        writeln!(out, "{}", plain_line(counts.total, counts.unique))?;
    }
    out.flush()?;
    if args.stats {
        eprintln!("{}", stats_line(counts));
    }
    Ok(ExitCode::SUCCESS)
}
