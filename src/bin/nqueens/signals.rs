//! The signal contract: SIGINT, SIGTERM and SIGHUP stop a run (which saves its checkpoint)
//! or end a command with nothing to save at once; a second signal ends the process; the exit
//! code says which signal it was (130, or 129 for SIGHUP).

use crate::output::lock;
use anyhow::Result;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Exit code after an interruption (SIGINT/SIGTERM).
pub const EXIT_INTERRUPTED: u8 = 130;

/// The exit code of a run stopped by SIGHUP (a closed terminal or ssh session): 128 + 1.
const EXIT_HANGUP: u8 = 129;

/// The exit code of the signal that stopped the run: SIGHUP's, or SIGINT's and SIGTERM's.
pub fn interrupted_code() -> u8 {
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

/// Set by a stop signal from [`catch_early`] on: one that came before a command installed
/// its own handling is acted on as soon as it does.
static EARLY: std::sync::LazyLock<Arc<AtomicBool>> = std::sync::LazyLock::new(Arc::default);

/// Catches the stop signals from the first line of `main` on, before the arguments are
/// read: until a command installs its own handling, a signal is only noted, then acted on
/// ([`interrupt_flag`], [`exit_on_signal`]). One that arrives before `main` (the runtime's
/// start, well under a millisecond after exec) takes the system's default action.
pub fn catch_early() {
    #[cfg(unix)]
    for (signal, code) in STOP_SIGNALS {
        // registering a flag fails only for signals that cannot be caught; these can
        let _ = signal_hook::flag::register(signal, EARLY.clone());
        if code == EXIT_HANGUP {
            let _ = signal_hook::flag::register(signal, HANGUP.clone());
        }
    }
}

/// Whether a stop signal came before the command's own handling.
fn came_early() -> bool {
    EARLY.load(std::sync::atomic::Ordering::SeqCst)
}

/// A flag set by the first SIGINT, SIGTERM or SIGHUP; a second one ends the process at once,
/// saying `again` (it ended silently before: a user could not tell whether the save after
/// the first was made).
/// `None`: the caller ends the process at the first signal itself ([`exit_on_signal`]), and
/// no thread waits for a second. `first` is called at the first signal, once the flag is
/// set (and may end the process: a run with nothing to save yet).
pub fn interrupt_flag(
    again: Option<String>,
    first: Option<FirstSignal>,
) -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    #[cfg(unix)]
    {
        for (signal, _) in STOP_SIGNALS {
            signal_hook::flag::register(signal, flag.clone())?;
        }
        let early = came_early();
        if early {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        if let Some(again) = again {
            let mut signals = signal_hook::iterator::Signals::new(STOP_SIGNALS.map(|(s, _)| s))?;
            std::thread::spawn(move || {
                // the first is the run's to act on (and `first`'s); the second ends the process
                let mut seen = usize::from(early);
                if early {
                    first.iter().for_each(|f| f());
                }
                for _ in signals.forever() {
                    seen += 1;
                    if seen == 1 {
                        first.iter().for_each(|f| f());
                        continue;
                    }
                    say_interrupted(&again);
                    std::process::exit(interrupted_code().into());
                }
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (again, first);
    Ok(flag)
}

/// What [`interrupt_flag`] calls at the first stop signal.
pub type FirstSignal = Box<dyn Fn() + Send>;

/// Says `message` once per process: the thread that handles a signal and the run that saw
/// the stop may both get here, and whichever is second waits until the first has written it
/// (so the process cannot end between the two with nothing said).
pub fn say_interrupted(message: &str) {
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
pub fn exit_on_signal() -> Result<()> {
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
        if came_early() {
            say_interrupted("nqueens: interrupted");
            std::process::exit(interrupted_code().into());
        }
    }
    Ok(())
}
