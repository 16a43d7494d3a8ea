//! Where the program writes: standard output, whose write errors say what failed; standard
//! error, one line at a time, never failing the program; and the lock both are taken under.

use std::io::{self, Write};

/// Writes one line on stderr. A stderr that cannot take it (full, closed) is ignored: a
/// message must never take the program down.
macro_rules! say {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = writeln!(::std::io::stderr(), $($arg)*);
    }};
}

/// Locks `m`, taking its data even if a thread panicked holding it (the same rule as the
/// library's): a message or a line of progress is never lost to a poisoned lock.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Standard output, whose write errors say what could not be written (`cannot write to
/// standard output: No space left on device`); a closed pipe keeps its kind (a quiet end).
pub fn stdout() -> impl Write {
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
