//! Row sets of a quarter built as units ask for them, shared between threads, and dropped
//! when no recent unit used them; and the books of what the tables hold.
//!
//! Units come in id order, and neighbouring ids share their south rows (a unit's id orders
//! its east rows as a number, whose high bits are the south rows): a few recent row sets serve
//! nearly every unit, where the whole south table would take gigabytes at N = 23. The north
//! rows change from unit to unit: where the north table is kept a row set at a time (N ≥ 22),
//! a unit mostly builds its own two, milliseconds beside its count.

use super::pattern::{Region, Stored};
use super::quarter::RowSet;
use crate::parallel::lock;
use std::collections::{TryReserveError, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Row sets kept after their last use: enough for the neighbouring units of many threads
/// (a run of units sharing their south rows holds tens of units at N = 19).
pub(crate) const RECENT: usize = 16;

/// Bytes of tables alive now, and the most at any moment.
#[derive(Debug, Default)]
pub(crate) struct Books {
    live: AtomicU64,
    peak: AtomicU64,
}

impl Books {
    /// `bytes` more are alive.
    pub(crate) fn add(&self, bytes: u64) {
        let live = self.live.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(live, Ordering::Relaxed);
    }

    /// `bytes` fewer are alive.
    pub(crate) fn sub(&self, bytes: u64) {
        self.live.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The most bytes alive at once so far.
    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

/// A row set on the books while it lives.
#[derive(Debug)]
struct Booked<P> {
    set: RowSet<P>,
    books: Arc<Books>,
}

impl<P> Drop for Booked<P> {
    fn drop(&mut self) {
        self.books.sub(self.set.bytes());
    }
}

/// A row set once built, or why it could not be: every thread waiting for it sees which.
type Entry<P> = Arc<OnceLock<Result<Booked<P>, TryReserveError>>>;

/// A quarter's row sets, built on demand.
#[derive(Debug)]
pub(crate) struct RowSets<P> {
    region: Region,
    /// Most recently asked first; a row set is built once by the first thread that asks,
    /// the others wait for it.
    recent: Mutex<VecDeque<(usize, Entry<P>)>>,
    books: Arc<Books>,
}

/// A row set lent out: it stays alive while held, also if the cache lets it go meanwhile.
pub(crate) struct Lent<P>(Entry<P>);

impl<P> Lent<P> {
    pub(crate) fn set(&self) -> &RowSet<P> {
        match self.0.get() {
            Some(Ok(booked)) => &booked.set,
            _ => unreachable!("only a built row set is lent"),
        }
    }
}

impl<P: Stored> RowSets<P> {
    /// Row sets of `region`, their bytes on `books`.
    pub(crate) fn new(region: Region, books: Arc<Books>) -> RowSets<P> {
        RowSets {
            region,
            recent: Mutex::new(VecDeque::with_capacity(RECENT + 1)),
            books,
        }
    }

    /// The region the row sets cover.
    pub(crate) fn region(&self) -> Region {
        self.region
    }

    /// The placements on the board rows `rows` (clipped to the quarter); an error when the
    /// memory for them could not be had.
    pub(crate) fn get(&self, rows: u64) -> Result<Lent<P>, TryReserveError> {
        let local = self.region.local_rows(rows);
        let entry = {
            let mut recent = lock(&self.recent);
            let entry = match recent.iter().position(|(r, _)| *r == local) {
                Some(at) => recent.remove(at).expect("found").1,
                None => Entry::default(),
            };
            recent.push_front((local, entry.clone()));
            recent.truncate(RECENT);
            entry
        };
        let built = entry.get_or_init(|| {
            let set = RowSet::build(self.region, local)?;
            self.books.add(set.bytes());
            Ok(Booked {
                set,
                books: self.books.clone(),
            })
        });
        match built {
            Ok(_) => Ok(Lent(entry)),
            Err(e) => Err(e.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::quadrant::pattern::Pattern;

    #[test]
    fn row_sets_are_built_once_while_recent_and_booked_while_alive() {
        let region = Region {
            n: 12,
            row0: 6,
            rows: 6,
            col0: 0,
            cols: 6,
        };
        let books = Arc::new(Books::default());
        let sets = RowSets::<Pattern>::new(region, books.clone());
        let rows = 0b10_1101 << 6;
        let first = sets.get(rows).unwrap();
        let again = sets.get(rows).unwrap();
        assert!(Arc::ptr_eq(&first.0, &again.0), "built once");
        let built = RowSet::<Pattern>::build(region, 0b10_1101).unwrap();
        assert_eq!(first.set().cell(0b11_1100), built.cell(0b11_1100));
        assert_eq!(books.peak(), built.bytes());
        // RECENT other row sets push it out; held, it stays on the books until dropped
        for other in 0..=RECENT as u64 {
            drop(sets.get(other << 6));
        }
        assert!(books.live.load(Ordering::Relaxed) > built.bytes());
        let before = books.live.load(Ordering::Relaxed);
        drop((first, again));
        assert_eq!(books.live.load(Ordering::Relaxed), before - built.bytes());
        assert!(books.peak() >= before);
    }
}
