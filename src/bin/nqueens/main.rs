//! The `nqueens` command: parse arguments, run the library, print data on stdout.

mod cli;
mod progress;
mod scale;

use anyhow::Result;
use clap::Parser;
use cli::{Cli, Command, CountArgs, ListArgs, MergeArgs, ScaleArgs, ScaleFormat};
use nqueens::export::count::{plain_line, stats_line, CountRecord};
use nqueens::Error;
use nqueens::Lister;
use nqueens::Shard;
use nqueens::{run as run_count, Hooks, RunRequest};
use progress::Progress;
use scale::{export as scale_out, plot};
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Exit code for usage errors (clap's own code too).
const EXIT_USAGE: u8 = 2;
/// Exit code after an interruption (SIGINT/SIGTERM).
const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a run stopped by SIGHUP (a closed terminal or ssh session): 128 + 1.
const EXIT_HANGUP: u8 = 129;

/// The exit code of the signal that stopped the run: SIGHUP's, or SIGINT's and SIGTERM's.
fn interrupted_code() -> u8 {
    if HANGUP.load(std::sync::atomic::Ordering::Relaxed) {
        EXIT_HANGUP
    } else {
        EXIT_INTERRUPTED
    }
}

/// The signals that stop a run, and the exit code each ends it with.
#[cfg(unix)]
const STOP_SIGNALS: [(i32, u8); 3] = [
    (signal_hook::consts::SIGINT, EXIT_INTERRUPTED),
    (signal_hook::consts::SIGTERM, EXIT_INTERRUPTED),
    (signal_hook::consts::SIGHUP, EXIT_HANGUP),
];

/// Set by SIGHUP, which stops a run as SIGTERM does, with its own exit code.
static HANGUP: std::sync::LazyLock<Arc<AtomicBool>> = std::sync::LazyLock::new(Arc::default);

/// Locks `m`, taking its data even if a thread panicked holding it (the same rule as the
/// library's): a message or a line of progress is never lost to a poisoned lock.
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Writes one line on stderr. A stderr that cannot take it (full, closed) is ignored: a
/// message must never take the program down.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(io::stderr(), $($arg)*);
    }};
}

/// Standard output, whose write errors say what could not be written (`cannot write to
/// standard output: No space left on device`); a closed pipe keeps its kind (a quiet end).
fn stdout() -> impl Write {
    struct Named(io::StdoutLock<'static>);
    fn named(e: io::Error) -> io::Error {
        io::Error::new(e.kind(), format!("cannot write to standard output: {e}"))
    }
    impl Write for Named {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.write(buf).map_err(named)
        }

        fn flush(&mut self) -> io::Result<()> {
            self.0.flush().map_err(named)
        }
    }
    Named(io::stdout().lock())
}

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
    // a value that came from NQUEENS_THREADS (not from -t) is named by the variable
    let bad_value = strings(ContextKind::InvalidValue);
    let from_env = std::env::var("NQUEENS_THREADS").ok().filter(|v| {
        let on_the_line = std::env::args()
            .skip(1)
            .any(|a| a.starts_with("-t") || a.starts_with("--threads"));
        !on_the_line && bad_value.as_deref() == Some(v.as_str())
    });
    if let (Some(value), Some(why)) = (
        from_env,
        line.split_once("': ").map(|(_, why)| why.to_string()),
    ) {
        line = format!("invalid value '{value}' for the variable NQUEENS_THREADS: {why}");
    }
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
fn report_error(e: &anyhow::Error) -> ExitCode {
    if let Some(io) = e.downcast_ref::<io::Error>() {
        if io.kind() == io::ErrorKind::BrokenPipe {
            return ExitCode::SUCCESS;
        }
    }
    match e.downcast_ref::<Error>() {
        Some(Error::Interrupted) => say_interrupted("nqueens: interrupted"),
        Some(e @ Error::InterruptedUnsaved { .. }) => say_interrupted(&format!("nqueens: {e}")),
        Some(lib) => say!("nqueens: {}", cli::error_line(lib)),
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
            // generated into memory first: clap_complete panics when its writer fails
            let mut script = Vec::new();
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "nqueens", &mut script);
            stdout().write_all(&script)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { command } => {
            // from the same definitions as --help: the pages cannot drift from the program
            let mut cmd = <Cli as clap::CommandFactory>::command();
            cmd.build();
            let cmd = match command {
                None => cmd,
                Some(name) => {
                    let ours = |c: &&clap::Command| c.get_name() != "help";
                    let Some(sub) = cmd.find_subcommand(&name).filter(ours) else {
                        let names: Vec<&str> = cmd
                            .get_subcommands()
                            .filter(ours)
                            .map(|c| c.get_name())
                            .collect();
                        say!(
                            "nqueens: man: no command '{name}': one of {}",
                            names.join(", ")
                        );
                        return Ok(ExitCode::from(EXIT_USAGE));
                    };
                    let page = format!("nqueens-{}", sub.get_name());
                    sub.clone()
                        .display_name(page)
                        .bin_name(format!("nqueens {name}"))
                }
            };
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            stdout().write_all(&page)?;
            Ok(ExitCode::SUCCESS)
        }
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

/// A flag set by the first SIGINT, SIGTERM or SIGHUP; a second one ends the process at once,
/// saying `again` (it ended silently before: a user could not tell whether the save after
/// the first was made).
/// `None`: the caller ends the process at the first signal itself ([`exit_on_signal`]), and
/// no thread waits for a second.
fn interrupt_flag(again: Option<String>) -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    {
        for (signal, code) in STOP_SIGNALS {
            if code == EXIT_HANGUP {
                signal_hook::flag::register(signal, HANGUP.clone())?;
            }
            signal_hook::flag::register(signal, flag.clone())?;
        }
        if let Some(again) = again {
            let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS.map(|(s, _)| s))?;
            std::thread::spawn(move || {
                // the first is the run's to act on; the second ends the process
                if signals.forever().nth(1).is_some() {
                    say_interrupted(&again);
                    std::process::exit(interrupted_code().into());
                }
            });
        }
    }
    #[cfg(not(unix))]
    let _ = again;
    Ok(flag)
}

/// Says `message` once per process: the thread that handles a signal and the run that saw
/// the stop may both get here, and whichever is second waits until the first has written it
/// (so the process cannot end between the two with nothing said).
fn say_interrupted(message: &str) {
    static SAID: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut said = lock(&SAID);
    if !*said {
        say!("{message}");
        *said = true;
    }
}

/// For commands with nothing to save: the first SIGINT, SIGTERM or SIGHUP (also one the
/// shell had set to be ignored, as for a background job) ends the process at once with the
/// message and exit code of the signal contract.
fn exit_on_signal() -> Result<()> {
    #[cfg(unix)]
    {
        let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS.map(|(s, _)| s))?;
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                say_interrupted("nqueens: interrupted");
                let code = STOP_SIGNALS.iter().find(|(s, _)| *s == signal).map(|s| s.1);
                std::process::exit(code.unwrap_or(EXIT_INTERRUPTED).into());
            }
        });
    }
    Ok(())
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
    let prefix = match &args.prefix {
        Some(p) => Some(cli::parse_prefix(p, args.n).map_err(Error::BadPrefix)?),
        None => None,
    };
    // one shard of one is the whole count: no shard identity, no shard note
    let chosen_shard = match args.shard {
        Some(s) => Some(s),
        None => Shard::from_env(|name| std::env::var(name).ok())?,
    }
    .filter(|s| s.count > 1);
    let request = RunRequest {
        shard: chosen_shard.unwrap_or(Shard::WHOLE),
        checkpoint: args.checkpoint.clone(),
        save_every: Duration::from_secs_f64(args.checkpoint_every),
        ..RunRequest::new(args.n, args.options(), prefix)
    };
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
