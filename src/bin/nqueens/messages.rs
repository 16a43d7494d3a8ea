//! One line for each way a command fails, and its exit code: clap's parse errors (help and
//! version printed as clap prints them), and the library's errors in the command line's
//! words (2 for a usage error, 1 for a failure, the signal's code for an interruption).

use crate::output::stdout;
use crate::signals::{interrupted_code, say_interrupted};
use nqueens::Error;
use std::io::{self, Write};
use std::process::ExitCode;

/// Exit code for usage errors (clap's own code too).
pub const EXIT_USAGE: u8 = 2;

/// Prints help and version as clap does; any other parse error as one line, exit 2.
pub fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            if e.use_stderr() {
                let _ = e.print();
                return ExitCode::from(EXIT_USAGE);
            }
            // help and version are the program's output: a stdout that cannot take them fails
            let text = e.render().to_string();
            let mut out = stdout();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => report_error(&e.into()),
            }
        }
        _ => {
            say!("nqueens: {}", usage_line(&e));
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// One line for a parse error: clap's first line, what is allowed, and what was missing.
fn usage_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let strings = |kind| match e.get(kind) {
        Some(ContextValue::Strings(list)) => Some(list.join(", ")),
        Some(ContextValue::String(one)) => Some(one.clone()),
        _ => None,
    };
    let text = e.to_string();
    let first = text.lines().next().unwrap_or("invalid arguments");
    let mut line = first.strip_prefix("error: ").unwrap_or(first).to_string();
    if e.kind() == ErrorKind::MissingRequiredArgument {
        if let Some(missing) = strings(ContextKind::InvalidArg) {
            line = format!("missing required argument {missing}");
        }
    }
    if let Some(valid) = strings(ContextKind::ValidValue).filter(|v| !v.is_empty()) {
        line.push_str(&format!("; allowed values: {valid}"));
    }
    if let Some(similar) = strings(ContextKind::SuggestedArg) {
        line.push_str(&format!("; did you mean {similar}?"));
    }
    if let Some(sub) = strings(ContextKind::SuggestedSubcommand) {
        line.push_str(&format!("; did you mean {sub}?"));
    }
    line
}

/// Maps an error to its message and exit code; a closed stdout is a quiet success.
pub fn report_error(e: &anyhow::Error) -> ExitCode {
    if let Some(io) = e.downcast_ref::<io::Error>() {
        if io.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
    }
    match e.downcast_ref::<Error>() {
        Some(Error::Interrupted) => say_interrupted("nqueens: interrupted"),
        Some(e @ Error::InterruptedUnsaved { .. }) => say_interrupted(&format!("nqueens: {e}")),
        Some(lib) => say!("nqueens: {}", error_line(lib)),
        None => say!("nqueens: {e:#}"),
    }
    match e.downcast_ref::<Error>() {
        Some(Error::Interrupted | Error::InterruptedUnsaved { .. }) => {
            ExitCode::from(interrupted_code())
        }
        Some(e) if e.is_usage() => ExitCode::from(EXIT_USAGE),
        _ => ExitCode::FAILURE,
    }
}

/// The message for a library error, in the command line's words: a request that failed
/// because of a flag names the flag and the value that would work; other errors speak for
/// themselves.
pub fn error_line(e: &nqueens::Error) -> String {
    use nqueens::Error as E;
    match e {
        E::KernelUnavailable { kernel, why, usable } => {
            format!("--kernel {kernel}: {why}; use --kernel {usable}")
        }
        E::ZeroThreads | E::TooManyThreads { .. } => format!("--threads: {e}"),
        E::BadSplitDepth { .. } | E::TooManySubtasks { .. } => format!("--split-depth: {e}"),
        E::EngineWithPrefix(engine) => format!(
            "--engine {}: a --prefix is counted without symmetry; use --engine auto",
            engine.name()
        ),
        E::EngineTooSmall { engine, n, min } => format!(
            "--engine {} needs N of at least {min}, got {n}; use --engine auto or mirror",
            engine.name()
        ),
        E::EngineTooLarge { engine, n, max } => format!(
            "--engine {} takes N up to {max}, got {n}: a count past it would cost ten million core-hours or more (--engine d4 takes it, slower still)",
            engine.name()
        ),
        E::TotalsOnly(engine) => format!(
            "--engine {} counts totals only, not fundamental solutions (--unique); use --engine auto, d4 or mirror",
            engine.name()
        ),
        E::NoSplitDepth(engine) => format!(
            "--engine {} is not split by rows: it takes no split depth (--split-depth)",
            engine.name()
        ),
        E::BadShard(why) => format!("--shard: {why}"),
        E::NoSuchGpu { index, found } => format!(
            "--gpus {index}: this machine has {found} GPU adapter(s), numbered from 0; nqueens devices lists them"
        ),
        E::GpusOnCpu => "--gpus names GPUs for a count on the CPU only; use --device auto, gpu or gpu-only".into(),
        _ => e.to_string(),
    }
}
