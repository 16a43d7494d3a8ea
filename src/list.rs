//! Streaming solutions in lexicographic order, searched on all threads.
//!
//! The board is cut into subtasks in lexicographic order (a plan without symmetry). A window
//! of the next subtasks is searched in parallel rounds; each round gives every subtask a node
//! budget and a cap on buffered output, then the buffers are written in subtask order up to
//! the first subtask that is not finished. Memory stays flat (window × cap) however many
//! solutions there are, and the first solutions appear as soon as they are found.

use crate::board::check_n;
use crate::engine::EngineChoice;
use crate::error::Error;
use crate::export::list::{write_solution, Format};
use crate::kernel::Cursor;
use crate::parallel;
use crate::plan::{frames, Rows};
use crate::symmetry::is_canonical;
use rayon::prelude::*;
use std::collections::VecDeque;
use std::io::{self, Write};

/// Backtracks each subtask in the window may make per round (about a millisecond of search).
const BACKTRACK_BUDGET: u64 = 1 << 17;
/// Bytes of output a subtask may hold before it waits for its turn to be written.
const BUFFER_CAP: usize = 1 << 18;
/// The most subtasks in the window, four per thread: also the most threads a listing starts
/// (more would only wait, and idle threads cost every round).
const MAX_WINDOW: usize = 256;

/// What to list and how.
///
/// ```
/// use nqueens::{Format, ListOptions, Lister};
/// let opts = ListOptions { limit: Some(2), format: Format::Json, ..ListOptions::default() };
/// let mut out = Vec::new();
/// Lister::new(6, &opts).unwrap().write_to(&mut out).unwrap();
/// assert_eq!(String::from_utf8(out).unwrap(), "[2,4,6,1,3,5]\n[3,6,2,5,1,4]\n");
/// ```
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// Worker threads; `None` = all logical CPUs.
    pub threads: Option<usize>,
    /// Stop after this many solutions.
    pub limit: Option<u64>,
    /// One solution per symmetry class: those that are their class's canonical form.
    pub unique: bool,
    /// Output format.
    pub format: Format,
}

/// A validated listing job, ready to write.
///
/// ```
/// use nqueens::{Lister, ListOptions};
/// let opts = ListOptions { limit: Some(3), ..ListOptions::default() };
/// let mut out = Vec::new();
/// let written = Lister::new(6, &opts).unwrap().write_to(&mut out).unwrap();
/// assert_eq!(written, 3);
/// assert_eq!(String::from_utf8(out).unwrap(), "2 4 6 1 3 5\n3 6 2 5 1 4\n4 1 5 2 6 3\n");
/// ```
pub struct Lister {
    plan: Rows,
    pool: rayon::ThreadPool,
    threads: usize,
    opts: ListOptions,
}

/// One subtask in the window: its search position and the output not yet written.
struct Pending {
    cursor: Cursor,
    buf: Vec<u8>,
    count: u64,
}

impl Lister {
    /// Checks the options and prepares the subtasks for an `n`×`n` board.
    pub fn new(n: usize, opts: &ListOptions) -> Result<Lister, Error> {
        check_n(n)?;
        let asked = parallel::resolve_threads(opts.threads)?.min(MAX_WINDOW);
        let room = crate::memory::Room::now();
        room.check()?;
        let threads = room.threads(asked);
        let plan = Rows::build(n, frames(n, EngineChoice::Auto, Some(&[]))?, None)?;
        Ok(Lister {
            plan,
            pool: parallel::pool(threads, false)?,
            threads,
            opts: opts.clone(),
        })
    }

    /// Writes the solutions to `out` in order; returns how many were written.
    pub fn write_to<W: Write>(&self, out: &mut W) -> io::Result<u64> {
        let n = self.plan.n();
        let limit = self.opts.limit.unwrap_or(u64::MAX);
        let window = (4 * self.threads).clamp(4, MAX_WINDOW);
        // A canonical form never starts right of the middle (its mirror image would be smaller).
        let useful =
            |id: &usize| !self.opts.unique || 2 * self.plan.subtask(*id).prefix[0] < n as u8;
        let mut ids = (0..self.plan.len()).filter(useful);
        let mut queue: VecDeque<Pending> = VecDeque::new();
        let mut written = 0u64;
        let mut head_searching = false;
        while written < limit {
            while queue.len() < window {
                let Some(id) = ids.next() else { break };
                let frame = self.plan.frame_of(id);
                let prefix = &self.plan.subtask(id).prefix[..self.plan.depth()];
                queue.push_back(Pending {
                    cursor: Cursor::new(n, &frame.masks, prefix),
                    buf: Vec::new(),
                    count: 0,
                });
            }
            if queue.is_empty() {
                break;
            }
            let wanted = limit - written;
            // The head blocks all output: it gets a thread of its own for as long as the
            // others take to spend their budgets on the remaining threads. Only the first
            // `window` subtasks are searched: the nearest are the next to be written.
            // (one thread behind a head that is searching a long way for its next solution
            // searches the head alone: anything else would only delay it)
            let active = if self.threads == 1 && head_searching {
                1
            } else {
                queue.len().min(window)
            };
            let (head, rest) = queue.make_contiguous()[..active]
                .split_first_mut()
                .expect("the queue is not empty");
            let others = (self.threads - 1).max(1) as u64;
            // (as long as a full window's round, alone too: rounds cost a write each)
            let head_budget = BACKTRACK_BUDGET * (window as u64 - 1).div_ceil(others).max(1);
            self.pool.install(|| {
                rayon::join(
                    || self.advance(head, wanted, head_budget),
                    || {
                        rest.par_iter_mut()
                            .for_each(|p| self.advance(p, wanted, BACKTRACK_BUDGET))
                    },
                )
            });
            // A head that found nothing this round is searching a long way for its next
            // solution: its untried branches go right after it, for the other threads.
            let head = queue.front_mut().expect("the queue is not empty");
            head_searching = head.count == 0 && !head.cursor.is_exhausted();
            if head_searching && self.threads > 1 {
                let pieces = head.cursor.split_off();
                for (k, cursor) in pieces.into_iter().enumerate() {
                    let piece = Pending {
                        cursor,
                        buf: Vec::new(),
                        count: 0,
                    };
                    queue.insert(1 + k, piece);
                }
            }
            let before = written;
            while let Some(front) = queue.front_mut() {
                let take = front.count.min(limit - written);
                let end = if take < front.count {
                    self.end_of(&front.buf, take)
                } else {
                    front.buf.len()
                };
                out.write_all(&front.buf[..end])?;
                written += take;
                front.buf.clear();
                front.count = 0;
                if written >= limit {
                    break;
                }
                if front.cursor.is_exhausted() {
                    queue.pop_front();
                } else {
                    break;
                }
            }
            // what a round found goes out now: a reader waits for no buffer to fill, and one
            // that has gone (`| head`) is seen at the next round's flush, not the next 64 KiB
            if written > before {
                out.flush()?;
            }
        }
        out.flush()?;
        Ok(written)
    }

    /// Searches one subtask for a round: until its budget, its buffer cap or `wanted`.
    fn advance(&self, p: &mut Pending, wanted: u64, mut budget: u64) {
        let mut columns = [0u8; crate::board::MAX_N];
        let n = self.plan.n();
        while p.buf.len() < BUFFER_CAP && p.count < wanted {
            let Some(rows) = p.cursor.next_within(&mut budget) else {
                return;
            };
            for (c, r) in columns.iter_mut().zip(rows) {
                *c = r.trailing_zeros() as u8;
            }
            if self.opts.unique && !is_canonical(&columns[..n]) {
                continue;
            }
            write_solution(&mut p.buf, &columns[..n], self.opts.format);
            p.count += 1;
        }
    }

    /// Byte offset just after the first `k` solutions in `buf`.
    fn end_of(&self, buf: &[u8], k: u64) -> usize {
        let lines = k as usize * self.opts.format.lines_per_solution(self.plan.n());
        if lines == 0 {
            return 0;
        }
        buf.iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .nth(lines - 1)
            .map_or(buf.len(), |(i, _)| i + 1)
    }
}
