//! Cutting the search into independent subtasks, in a fixed order with stable ids.
//!
//! A [`Plan`] is one of two kinds. A row plan ([`Rows`]) is a list of *frames* (per-row
//! constraints plus a rule saying how a solution found under them is weighted) and a list of
//! *subtasks*: every placement of the first `depth` rows that a frame allows, frames in order
//! and placements in lexicographic order. A quadrant plan is the quadrant engine's list of
//! units ([`crate::quadrant::Layout`]). A subtask's id is its index in its list, so the same
//! `(n, engine, prefix, depth)` always yields the same ids: shards, checkpoints and
//! cross-checks rely on it.

use crate::board::{full_mask, Attacks, PartialBoard, RowMasks, MAX_N};
use crate::engine::{Engine, EngineChoice, D4_MIN_N};
use crate::error::Error;
use crate::kernel::Start;

/// The deepest split the plan stores per subtask (rows beyond are left to the kernel).
pub const MAX_SPLIT: usize = 10;

/// The most subtasks a plan may hold (12 bytes each: bounded memory for any N).
pub const MAX_SUBTASKS: usize = 1 << 21;

/// How solutions found under a frame are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafRule {
    /// Each solution stands for `weight` solutions (mirror halving: 2 or 1; plain: 1).
    Weight(u8),
    /// Full symmetry, no symmetric image in the frame: each solution is one class of 8
    /// (corner frames, and side frames without an edge queen `b1` from a corner).
    Orbit8,
    /// Full symmetry, first-row queen `b1` columns from the corner with no queen nearer to a
    /// corner on any edge: boards that tie with an image are classified at the leaf.
    Side {
        /// Column of the first-row queen, also the least corner distance of every edge queen.
        b1: u8,
    },
}

/// Per-row constraints and a counting rule shared by a run of subtasks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Allowed and required columns per row.
    pub masks: RowMasks,
    /// How each solution is weighted.
    pub rule: LeafRule,
}

/// One independent piece of the search: a frame and the columns of its first `depth` rows.
///
/// ```
/// use nqueens::{EngineChoice, Plan};
/// let plan = Plan::new(6, EngineChoice::Mirror, None, Some(2)).unwrap();
/// let first = plan.subtask(0).unwrap();
/// assert_eq!(&first.prefix[..2], &[0, 2]); // row 1 in the corner, row 2 on its first free square
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subtask {
    /// Index of the subtask's frame (the per-row constraints and leaf rule it runs under).
    pub frame: u16,
    /// 0-based columns of rows `0..depth`.
    pub prefix: [u8; MAX_SPLIT],
}

/// The ordered subtasks of one counting job.
///
/// ```
/// use nqueens::{EngineChoice, Plan};
/// let plan = Plan::new(8, EngineChoice::Mirror, None, Some(2)).unwrap();
/// assert_eq!(plan.depth(), 2);
/// // four left-half columns in row 1; row 2 then has 6 free squares after the corner, 5 after the others
/// assert_eq!(plan.len(), 6 + 5 + 5 + 5);
/// // the quadrant engine's unit ids are its subtasks; they are not prefixes of rows
/// let quadrant = Plan::new(8, EngineChoice::Quadrant, None, None).unwrap();
/// assert_eq!((quadrant.len(), quadrant.depth(), quadrant.subtask(0)), (35, 0, None));
/// ```
#[derive(Clone, Debug)]
pub struct Plan {
    n: usize,
    kind: Kind,
}

/// What a plan is cut into.
#[derive(Clone, Debug)]
pub(crate) enum Kind {
    /// Prefixes of rows under frames.
    Rows(Rows),
    /// The quadrant engine's units.
    Quadrant(std::sync::Arc<crate::quadrant::Layout>),
}

/// A plan cut by rows: its frames and the subtasks under them.
#[derive(Clone, Debug)]
pub(crate) struct Rows {
    n: usize,
    engine: Engine,
    depth: usize,
    frames: Vec<Frame>,
    subtasks: Vec<Subtask>,
}

impl Plan {
    /// Builds the plan for an `n`×`n` board: the one builder of every plan.
    ///
    /// `prefix` (0-based columns) restricts the search to its completions, without symmetry.
    /// `depth` is the number of rows enumerated into subtasks; `None` picks one that gives at
    /// least 2048 subtasks where the board allows (4× more per N from N = 17, up to 65536).
    /// The quadrant engine takes no depth.
    ///
    /// One rule for engines: an engine asked for by name runs or is refused, never replaced.
    /// A prefix is counted without symmetry ([`Engine::Plain`]) and takes only
    /// [`EngineChoice::Auto`]; the full-symmetry engine needs N ≥ [`D4_MIN_N`].
    pub fn new(
        n: usize,
        engine: EngineChoice,
        prefix: Option<&[usize]>,
        depth: Option<usize>,
    ) -> Result<Plan, Error> {
        crate::board::check_n(n)?;
        let kind = if prefix.is_none() && engine == EngineChoice::Quadrant {
            crate::quadrant::check_n(n)?;
            if depth.is_some_and(|d| d != 0) {
                return Err(Error::NoSplitDepth(Engine::Quadrant));
            }
            Kind::Quadrant(std::sync::Arc::new(crate::quadrant::Layout::new(n)))
        } else {
            Kind::Rows(Rows::build(n, frames(n, engine, prefix)?, depth)?)
        };
        Ok(Plan { n, kind })
    }

    /// What the plan is cut into.
    pub(crate) fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The row plan, unless this is the quadrant engine's.
    pub(crate) fn rows(&self) -> Option<&Rows> {
        match &self.kind {
            Kind::Rows(rows) => Some(rows),
            Kind::Quadrant(_) => None,
        }
    }

    /// The quadrant engine's units, for its plans.
    pub(crate) fn quadrant_layout(&self) -> Option<&crate::quadrant::Layout> {
        match &self.kind {
            Kind::Quadrant(layout) => Some(layout),
            Kind::Rows(_) => None,
        }
    }

    /// Board side.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The engine this plan runs.
    pub fn engine(&self) -> Engine {
        match &self.kind {
            Kind::Rows(rows) => rows.engine,
            Kind::Quadrant(_) => Engine::Quadrant,
        }
    }

    /// Rows enumerated into each subtask (0 for the quadrant engine: it is not cut by rows).
    pub fn depth(&self) -> usize {
        match &self.kind {
            Kind::Rows(rows) => rows.depth,
            Kind::Quadrant(_) => 0,
        }
    }

    /// Number of subtasks.
    pub fn len(&self) -> usize {
        match &self.kind {
            Kind::Rows(rows) => rows.subtasks.len(),
            Kind::Quadrant(layout) => layout.len(),
        }
    }

    /// Whether the plan has no subtasks (a board with no solution can have none).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The subtask with id `id`: its frame and prefix; `None` past the end, and for the
    /// quadrant engine, whose units are not prefixes of rows.
    pub fn subtask(&self, id: usize) -> Option<&Subtask> {
        self.rows()?.subtasks.get(id)
    }

    /// A fingerprint of the subtask list (frames, rules and prefixes, or units, in order), as
    /// 8 hex digits. Shard results and checkpoints carry it: a program whose subtask ids mean
    /// other subtasks is refused instead of being merged or resumed into a wrong total.
    ///
    /// ```
    /// use nqueens::{EngineChoice, Plan};
    /// let a = Plan::new(10, EngineChoice::D4, None, Some(3)).unwrap();
    /// let b = Plan::new(10, EngineChoice::D4, None, Some(2)).unwrap();
    /// assert_eq!(a.digest().len(), 8);
    /// assert_ne!(a.digest(), b.digest());
    /// ```
    pub fn digest(&self) -> String {
        let mut h = crc32fast::Hasher::new();
        let word = |h: &mut crc32fast::Hasher, v: u64| h.update(&v.to_le_bytes());
        word(&mut h, self.n as u64);
        h.update(self.engine().name().as_bytes());
        word(&mut h, self.depth() as u64);
        match &self.kind {
            Kind::Rows(rows) => rows.digest(&mut h),
            Kind::Quadrant(layout) => layout.digest(&mut h),
        }
        format!("{:08x}", h.finalize())
    }
}

impl Rows {
    /// The row plan of an `n`×`n` board under `frames` (of its engine), cut `depth` rows
    /// deep ([`Plan::new`] for every plan).
    pub fn build(
        n: usize,
        (engine, frames): (Engine, Vec<Frame>),
        depth: Option<usize>,
    ) -> Result<Rows, Error> {
        let max_depth = n.min(MAX_SPLIT);
        if let Some(d) = depth {
            if d == 0 || d > max_depth {
                // the range stated is the real one: as deep as the subtasks stay few enough
                let deepest = match Rows::build(n, (engine, frames), Some(max_depth)) {
                    Err(Error::TooManySubtasks { deepest, .. }) => deepest,
                    _ => max_depth,
                };
                return Err(Error::BadSplitDepth {
                    depth: d,
                    max: deepest,
                });
            }
        }
        let min_subtasks = default_min_subtasks(n);
        let mut level: Vec<Subtask> = (0..frames.len())
            .map(|f| Subtask {
                frame: f as u16,
                prefix: [0; MAX_SPLIT],
            })
            .collect();
        let mut rows = 0;
        loop {
            let enough = match depth {
                Some(d) => rows == d,
                // Leave the kernel at least two rows and stop once there is enough parallelism.
                None => rows >= 1 && (level.len() >= min_subtasks || rows + 2 >= max_depth),
            };
            if enough {
                break;
            }
            level = expand(&frames, &level, rows).ok_or(Error::TooManySubtasks {
                depth: depth.unwrap_or(rows + 1),
                max: MAX_SUBTASKS,
                deepest: rows,
            })?;
            rows += 1;
        }
        Ok(Rows {
            n,
            engine,
            depth: rows,
            frames,
            subtasks: level,
        })
    }

    /// Board side.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Rows enumerated into each subtask.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Number of subtasks.
    pub fn len(&self) -> usize {
        self.subtasks.len()
    }

    /// The frames, indexed by [`Subtask::frame`].
    #[cfg(feature = "gpu")]
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The subtask with id `id` (an id of this plan).
    pub fn subtask(&self, id: usize) -> &Subtask {
        &self.subtasks[id]
    }

    /// The frame of subtask `id`.
    pub fn frame_of(&self, id: usize) -> &Frame {
        &self.frames[self.subtasks[id].frame as usize]
    }

    fn digest(&self, h: &mut crc32fast::Hasher) {
        let word = |h: &mut crc32fast::Hasher, v: u64| h.update(&v.to_le_bytes());
        for frame in &self.frames {
            for &allowed in &frame.masks.allowed[..self.n] {
                word(h, allowed);
            }
            word(h, frame.masks.must_row as u64);
            word(h, frame.masks.must);
            let rule = match frame.rule {
                LeafRule::Weight(w) => u64::from(w),
                LeafRule::Orbit8 => 1 << 8,
                LeafRule::Side { b1 } => 2 << 8 | u64::from(b1),
            };
            word(h, rule);
        }
        for task in &self.subtasks {
            h.update(&task.frame.to_le_bytes());
            h.update(&task.prefix[..self.depth]);
        }
    }

    /// The frame of subtask `id`, where its search starts, and the one-hot rows of its
    /// prefix.
    pub fn begin(&self, id: usize) -> (&Frame, Start<'_>, [u64; MAX_N]) {
        let task = &self.subtasks[id];
        let mut attacks = Attacks::default();
        let mut rows = [0u64; MAX_N];
        for (row, &col) in task.prefix[..self.depth].iter().enumerate() {
            rows[row] = 1 << col;
            attacks = attacks.place(1 << col);
        }
        let frame = &self.frames[task.frame as usize];
        let start = Start {
            n: self.n,
            masks: &frame.masks,
            row: self.depth,
            attacks,
        };
        (frame, start, rows)
    }
}

/// The engine and frames of a row plan of an `n`×`n` board for `engine` (and `prefix`).
pub(crate) fn frames(
    n: usize,
    engine: EngineChoice,
    prefix: Option<&[usize]>,
) -> Result<(Engine, Vec<Frame>), Error> {
    Ok(match (prefix, engine) {
        (Some(prefix), EngineChoice::Auto) => (Engine::Plain, vec![prefix_frame(n, prefix)?]),
        (Some(_), named) => return Err(Error::EngineWithPrefix(Engine::from(named))),
        (None, EngineChoice::D4) if n < D4_MIN_N => {
            return Err(Error::EngineTooSmall {
                engine: Engine::D4,
                n,
                min: D4_MIN_N,
            })
        }
        (None, EngineChoice::Mirror) => (Engine::Mirror, mirror_frames(n)),
        (None, _) if n < D4_MIN_N => (Engine::Mirror, mirror_frames(n)),
        (None, _) => (Engine::D4, d4_frames(n)),
    })
}

/// The default lower bound on subtasks: 2048 (16 per thread for 128 threads), and from N = 17
/// on 4× more per N (the work grows about 7× per N), up to 65536, so that a subtask stays
/// short enough to stop, checkpoint and balance on.
///
/// It depends on N alone, never on the machine: shards counted on nodes of different sizes
/// merge, and a checkpoint resumes on a bigger machine.
pub fn default_min_subtasks(n: usize) -> usize {
    let growth = 4usize.saturating_pow(n.saturating_sub(16) as u32);
    2048usize.saturating_mul(growth).min(MAX_SUBTASKS / 32)
}

/// Extends every subtask of `level` by one row (`row`), in order; `None` past
/// [`MAX_SUBTASKS`].
fn expand(frames: &[Frame], level: &[Subtask], row: usize) -> Option<Vec<Subtask>> {
    let mut next = Vec::new();
    for task in level {
        let masks = &frames[task.frame as usize].masks;
        let mut attacks = Attacks::default();
        for &col in &task.prefix[..row] {
            attacks = attacks.place(1 << col);
        }
        let mut free = masks.free(row, attacks);
        while free != 0 {
            let col = free.trailing_zeros() as usize;
            free &= free - 1;
            let mut child = *task;
            child.prefix[row] = col as u8;
            next.push(child);
            if next.len() > MAX_SUBTASKS {
                return None;
            }
        }
    }
    Some(next)
}

/// Mirror halving: row 1's queen in the left half counts twice, in the middle column once.
fn mirror_frames(n: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    let left_half = (1u64 << (n / 2)) - 1;
    if left_half != 0 {
        let mut masks = RowMasks::unconstrained(n);
        masks.allowed[0] = left_half;
        frames.push(Frame {
            masks,
            rule: LeafRule::Weight(2),
        });
    }
    if n % 2 == 1 {
        let mut masks = RowMasks::unconstrained(n);
        masks.allowed[0] = 1 << (n / 2);
        frames.push(Frame {
            masks,
            rule: LeafRule::Weight(1),
        });
    }
    frames
}

/// One frame whose first rows are pinned to the prefix.
fn prefix_frame(n: usize, prefix: &[usize]) -> Result<Frame, Error> {
    PartialBoard::from_columns(n, prefix)?;
    let mut masks = RowMasks::unconstrained(n);
    for (row, &col) in prefix.iter().enumerate() {
        masks.allowed[row] = 1 << col;
    }
    Ok(Frame {
        masks,
        rule: LeafRule::Weight(1),
    })
}

/// The rotation that brings a tie frame's pinned edge queen to the top, at column `b1`.
#[derive(Clone, Copy)]
enum Partner {
    Rotate90,
    Rotate180,
    Rotate270,
}

/// The corner/edge decomposition (after Takaken): every class of 8 symmetric solutions is
/// searched in one canonical orientation.
///
/// * Corner frames: a queen at (row 1, column 1). A board and its transpose both have it, so
///   the row-2 queen's column `b1` must come before the column-2 queen's row: column 2 is
///   closed in rows `2..b1`. Such boards have no symmetry: each counts 8.
/// * Side frames: no corner queen; the row-1 queen is `b1` from the left corner and every other
///   edge queen is at least `b1` from its corners, so side columns are closed in the first and
///   last `b1` rows (both must be filled by row `n-1-b1`) and the bottom queen sits in columns
///   `b1..=n-1-b1`. Boards with another edge queen exactly `b1` from a corner may meet an image
///   inside the same frame: small frames pin that queen (split by row 2, pruning boards whose
///   rotated image is smaller), and their leaves keep the smallest image and weigh it by its
///   orbit; the last frame has no ties and counts each board as 8.
fn d4_frames(n: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    for b1 in 2..=n - 2 {
        let mut masks = RowMasks::unconstrained(n);
        masks.allowed[0] = 1;
        masks.allowed[1] = 1 << b1;
        for row in 2..b1 {
            masks.allowed[row] &= !0b10;
        }
        frames.push(Frame {
            masks,
            rule: LeafRule::Orbit8,
        });
    }
    let sides = 1 | 1 << (n - 1);
    let last = n - 1;
    let mut b1 = 1;
    while b1 < last - b1 {
        let b2 = last - b1;
        let mut base = RowMasks::unconstrained(n);
        base.allowed[0] = 1 << b1;
        for row in (1..b1).chain(b2 + 1..n) {
            base.allowed[row] &= !sides;
        }
        base.must_row = b2;
        base.must = sides;
        base.allowed[last] &= full_mask(b2 + 1) & !full_mask(b1);
        // Ties: another edge queen exactly b1 from a corner. Only three can occur: the left
        // queen on row b1, the right queen on row b2 and the bottom queen on column b1 all
        // share a line with the top queen. Each case pins that queen (its column and
        // diagonals leave every row), and is split by the row-2 queen's column x: the image
        // that brings the pinned queen to the top agrees with the board on row 1 and is
        // smaller on row 2 unless the masks below hold, so those boards are never searched.
        let tie = |no_sides: &[usize], pin_row: usize, pin_col: usize, partner: Partner| {
            let mut masks = base.clone();
            for &row in no_sides {
                masks.allowed[row] &= !sides;
            }
            masks.pin(n, pin_row, pin_col);
            let top = 1u64 << b1;
            let mut row2 = masks.allowed[1] & !(top | top << 1 | top >> 1);
            let mut split = Vec::new();
            while row2 != 0 {
                let x = row2.trailing_zeros() as usize;
                row2 &= row2 - 1;
                let mut m = masks.clone();
                m.allowed[1] = 1 << x;
                match partner {
                    // rotated a quarter turn back: row 2 reads the row of column n-2's queen
                    Partner::Rotate270 => (0..x).for_each(|r| m.allowed[r] &= !(1 << (n - 2))),
                    // a quarter turn: row 2 reads n-1 minus the row of column 2's queen
                    Partner::Rotate90 => (n - x..n).for_each(|r| m.allowed[r] &= !0b10),
                    // a half turn: row 2 reads n-1 minus row n-1's column
                    Partner::Rotate180 => m.allowed[n - 2] &= full_mask(n - x),
                }
                split.push(Frame {
                    masks: m,
                    rule: LeafRule::Side { b1: b1 as u8 },
                });
            }
            split
        };
        frames.extend(tie(&[], b1, last, Partner::Rotate270));
        frames.extend(tie(&[b1], b2, 0, Partner::Rotate90));
        frames.extend(tie(&[b1, b2], last, b2, Partner::Rotate180));
        // No tie: side queens strictly between rows b1 and b2, the bottom queen strictly
        // between columns b1 and b2; every image lies outside the frame.
        let mut free = base;
        free.allowed[b1] &= !sides;
        free.allowed[b2] &= !sides;
        free.allowed[last] &= !(1 << b1 | 1 << b2);
        if b2 - 1 > b1 {
            free.must_row = b2 - 1;
        }
        frames.push(Frame {
            masks: free,
            rule: LeafRule::Orbit8,
        });
        b1 += 1;
    }
    frames
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn default_min_subtasks_example() {
        use crate::plan::default_min_subtasks;
        assert_eq!(default_min_subtasks(12), 2048);
        assert_eq!(default_min_subtasks(18), 2048 * 16);
        assert_eq!(default_min_subtasks(30), 65536);
    }
}
