//! The `nqueens` command: parse arguments, run the library, print data on stdout.

#[macro_use]
mod output;
mod cli;
mod count;
mod messages;
mod pages;
mod progress;
mod scale;
mod signals;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command, EstimateArgs, ListArgs, MergeArgs, ScaleArgs, ScaleFormat};
use messages::{clap_exit, report_error, EXIT_USAGE};
use nqueens::Error;
use nqueens::Lister;
use output::{lock, stdout};
use scale::{export as scale_out, plot};
use signals::{exit_on_signal, interrupt_flag, interrupted_code, say_interrupted};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    signals::catch_early();
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
    if matches!(
        cli.command,
        Command::Devices | Command::Completions { .. } | Command::Man { .. }
    ) {
        // nothing to save: a stop signal ends them at once, as it ends every command
        exit_on_signal()?;
    }
    match cli.command {
        Command::Count(args) => count::count(&args),
        Command::List(args) => list(&args),
        Command::Merge(args) => merge(&args),
        Command::Scale(args) => scale(&args),
        Command::Estimate(args) => estimate(&args),
        Command::Devices => {
            let mut out = stdout();
            for a in nqueens::gpu_adapters()? {
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
    let stop = interrupt_flag(
        Some("nqueens: interrupted again: ended at once".into()),
        None,
    )?;
    let asked = args
        .threads(crate::cli::var)?
        .unwrap_or_else(|| scale::default_threads(num_cpus::get()));
    let (threads, added) = scale::thread_list(&asked);
    if added {
        say!("nqueens: scale: adding a 1-thread run, the baseline of every speedup");
    }
    if let Some(path) = &args.plot {
        plot::check_writable(path)?;
    }
    let options = args.options(crate::cli::var)?;
    let report = scale::measure(
        args.n,
        &options,
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

fn estimate(args: &EstimateArgs) -> Result<ExitCode> {
    // nothing to save: a stop ends it at once
    exit_on_signal()?;
    let request = args.request(crate::cli::var)?;
    let said = std::sync::Mutex::new(Vec::new());
    let say_note = |line: &str| {
        say!("nqueens: note: {line}");
        lock(&said).push(line.to_string());
    };
    let hooks = nqueens::Hooks {
        on_plan: Some(&say_note),
        ..Default::default()
    };
    let estimate = request.estimate(args.seconds, args.seed, &hooks)?;
    let mut out = stdout();
    if args.json {
        writeln!(out, "{}", estimate.to_json())?;
    } else {
        write!(out, "{}", estimate.to_text())?;
    }
    out.flush()?;
    // the plan's notes were said as it was made
    let said = lock(&said);
    for note in estimate.notes.iter().filter(|&n| !said.contains(n)) {
        say!("nqueens: note: {note}");
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
        partial: args.partial,
    };
    let merged = nqueens::merge(&records, &options)?;
    if let Some(k) = args.verify {
        let opts = nqueens::CountOptions {
            threads: args.search.threads(crate::cli::var)?,
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
    if let Some(missing) = &merged.missing_shards {
        let of = records
            .first()
            .and_then(|(_, r)| r.shard)
            .map_or(1, |s| s.count);
        say!(
            "nqueens: merge: the sum of {} of {of} shards, not the total: missing {}",
            records.len(),
            shard_ranges(missing)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Inclusive ranges of shard indices as a person reads them (`1, 4-6, 9`), the first few.
fn shard_ranges(ranges: &[[usize; 2]]) -> String {
    const NAMED: usize = 8;
    let mut named: Vec<String> = ranges
        .iter()
        .take(NAMED)
        .map(|&[from, to]| match to - from {
            0 => from.to_string(),
            _ => format!("{from}-{to}"),
        })
        .collect();
    if ranges.len() > NAMED {
        named.push(format!("and {} more ranges", ranges.len() - NAMED));
    }
    named.join(", ")
}

fn list(args: &ListArgs) -> Result<ExitCode> {
    exit_on_signal()?;
    let opts = args.options(crate::cli::var)?;
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
