//! The `--progress` bar on stderr (indicatif), fed once per finished subtask.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `--progress`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgressMode {
    /// Only on a terminal, once the run has lasted about a second.
    Auto,
    /// Never.
    Never,
    /// Always: a redrawn bar on a terminal, a line per second elsewhere.
    Always,
}

/// How long a run goes before `auto` shows the bar.
const AUTO_DELAY: Duration = Duration::from_secs(1);

/// A progress bar over the subtasks of a run.
pub struct Progress {
    bar: ProgressBar,
    /// `auto` mode: not drawn until the run has lasted [`AUTO_DELAY`].
    revealed: AtomicBool,
    /// Whether the first report (the subtasks a resumed run starts with) came.
    started: AtomicBool,
}

impl Progress {
    /// A bar over `len` subtasks, or `None` when `mode` says not to show one.
    pub fn new(mode: ProgressMode, len: usize) -> Option<Progress> {
        let terminal = io::stderr().is_terminal();
        let target = match (mode, terminal) {
            (ProgressMode::Never, _) | (ProgressMode::Auto, false) => return None,
            (ProgressMode::Auto, true) => ProgressDrawTarget::hidden(),
            (ProgressMode::Always, true) => ProgressDrawTarget::stderr(),
            (ProgressMode::Always, false) => {
                ProgressDrawTarget::term_like_with_hz(Box::new(LineTerm), 1)
            }
        };
        let bar = ProgressBar::with_draw_target(Some(len as u64), target);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} subtasks {percent}% eta {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        Some(Progress {
            bar,
            revealed: AtomicBool::new(mode == ProgressMode::Always),
            started: AtomicBool::new(false),
        })
    }

    /// Records that `done` subtasks are finished. The first report is where the run starts
    /// (after a resume, what the checkpoint held): the rate and ETA count from there.
    pub fn update(&self, done: usize) {
        if !self.started.swap(true, Ordering::Relaxed) {
            self.bar.set_position(done as u64);
            self.bar.reset_eta();
            return;
        }
        if !self.revealed.load(Ordering::Relaxed)
            && self.bar.elapsed() >= AUTO_DELAY
            && !self.revealed.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        self.bar.set_position(done as u64);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A draw target for a stderr that is not a terminal: each redraw becomes one plain line.
#[derive(Debug)]
struct LineTerm;

impl TermLike for LineTerm {
    fn width(&self) -> u16 {
        80
    }
    fn move_cursor_up(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> io::Result<()> {
        writeln!(io::stderr(), "{}", s.trim_end())
    }
    fn write_str(&self, s: &str) -> io::Result<()> {
        if s.trim().is_empty() {
            return Ok(());
        }
        writeln!(io::stderr(), "{}", s.trim_end())
    }
    fn clear_line(&self) -> io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        io::stderr().flush()
    }
}
