//! The `--progress` bar on stderr (indicatif), fed once per finished subtask.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use std::io::{self, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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
    /// Whether the bar shows once the run has lasted [`AUTO_DELAY`] (`auto`) or from the
    /// first finished subtask (`always`).
    delayed: bool,
    /// Where the bar is drawn once revealed (hidden until then).
    target: Mutex<Option<ProgressDrawTarget>>,
    /// Whether the first report (the subtasks a resumed run starts with) came.
    started: AtomicBool,
}

impl Progress {
    /// A bar over the subtasks of a run (their number comes with the first report), or
    /// `None` when `mode` says not to show one.
    pub fn new(mode: ProgressMode) -> Option<Progress> {
        let terminal = io::stderr().is_terminal();
        let target = match (mode, terminal) {
            (ProgressMode::Never, _) | (ProgressMode::Auto, false) => return None,
            (_, true) => ProgressDrawTarget::stderr(),
            (ProgressMode::Always, false) => {
                ProgressDrawTarget::term_like_with_hz(Box::new(LineTerm::default()), 1)
            }
        };
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {pos}/{len} subtasks {percent}% eta {eta}",
            )
            .expect("the template is valid")
            .progress_chars("=> "),
        );
        Some(Progress {
            bar,
            delayed: mode == ProgressMode::Auto,
            target: Mutex::new(Some(target)),
            started: AtomicBool::new(false),
        })
    }

    /// Records that `done` of `of` subtasks are finished. The first report is where the run
    /// starts (after a resume, what the checkpoint held): it is not drawn, and the rate and
    /// ETA count from there.
    pub fn update(&self, done: usize, of: usize) {
        if !self.started.swap(true, Ordering::Relaxed) {
            self.bar.set_length(of as u64);
            self.bar.set_position(done as u64);
            self.bar.reset_eta();
            return;
        }
        if !self.delayed || self.bar.elapsed() >= AUTO_DELAY {
            let mut target = crate::lock(&self.target);
            if let Some(target) = target.take() {
                self.bar.set_draw_target(target);
            }
        }
        // a race that chose the GPU goes on with another plan, of another length
        if self.bar.length() != Some(of as u64) {
            self.bar.set_length(of as u64);
            self.bar.reset_eta();
        }
        self.bar.set_position(done as u64);
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A draw target for a stderr that is not a terminal: a redraw becomes one plain line, at
/// most one a second.
#[derive(Debug, Default)]
struct LineTerm {
    last: Mutex<Option<Instant>>,
}

impl LineTerm {
    /// Writes `s` as a line unless a line went out less than a second ago.
    fn line(&self, s: &str) -> io::Result<()> {
        let mut last = crate::lock(&self.last);
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return Ok(());
        }
        *last = Some(Instant::now());
        writeln!(io::stderr(), "{}", s.trim_end())
    }
}

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
        self.line(s)
    }
    fn write_str(&self, s: &str) -> io::Result<()> {
        if s.trim().is_empty() {
            return Ok(());
        }
        self.line(s)
    }
    fn clear_line(&self) -> io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> io::Result<()> {
        io::stderr().flush()
    }
}
