//! The `nqueens` command: parse arguments, run the library, print data on stdout.

mod cli;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command, CountArgs, ListArgs};
use nqueens::list::Lister;
use nqueens::report::{plain_line, stats_line, CountRecord};
use nqueens::Error;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

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
        Some(_) => ExitCode::from(EXIT_USAGE),
        None => ExitCode::FAILURE,
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Count(args) => count(&args),
        Command::List(args) => list(&args),
    }
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
    let opts = args.options();
    let prefix = match &args.prefix {
        Some(p) => Some(cli::parse_prefix(p, args.n).map_err(Error::BadPrefix)?),
        None => None,
    };
    let counts = match &prefix {
        Some(p) => nqueens::count_completions(args.n, p, &opts)?,
        None => nqueens::count(args.n, &opts)?,
    };
    let mut out = io::stdout().lock();
    if args.json {
        writeln!(out, "{}", CountRecord::new(&counts).to_json())?;
    } else {
        writeln!(out, "{}", plain_line(counts.total, counts.unique))?;
    }
    out.flush()?;
    if args.stats {
        eprintln!("{}", stats_line(&counts));
    }
    Ok(ExitCode::SUCCESS)
}
