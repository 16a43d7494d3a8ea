//! Checkpoint files: the finished subtasks of a run, saved atomically and checked on resume.
//!
//! The file is two lines: a JSON body, then `crc32 XXXXXXXX` over the body's bytes. The body
//! names the run (N, engine, split depth, subtask count, shard, `unique`, prefix) and the
//! format version, and lists the finished subtasks as ranges of positions within the shard,
//! each with the sum of what its subtasks found. A file that is truncated, corrupt, of another
//! format or of another run is refused, never turned into a wrong total.

use crate::error::Error;
use crate::search::Found;
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::Path;

/// Marks the file as ours.
const FORMAT: &str = "nqueens-checkpoint";
/// Bumped whenever the body or the subtask order changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// Everything that must match for a checkpoint to be resumed by a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// Board side.
    pub n: usize,
    /// Engine name.
    pub engine: String,
    /// Rows enumerated into subtasks.
    pub split_depth: usize,
    /// Subtasks in the whole plan.
    pub plan_subtasks: usize,
    /// The shard of the plan this run covers.
    pub shard: Shard,
    /// Whether fundamental solutions are counted.
    pub unique: bool,
    /// The 0-based prefix, when counting completions.
    pub prefix: Option<Vec<usize>>,
}

/// A run of consecutive finished positions (within the shard) and what they found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct DoneRange {
    first: usize,
    last: usize,
    found: Found,
}

#[derive(Serialize, Deserialize)]
struct Body {
    format: String,
    format_version: u32,
    program_version: String,
    run: RunIdentity,
    done: Vec<DoneRange>,
}

/// The finished positions of a shard, kept as merged ranges with their sums.
///
/// ```
/// use nqueens::checkpoint::DoneSet;
/// use nqueens::search::Found;
/// let mut done = DoneSet::default();
/// for k in [3, 1, 2, 7] {
///     done.insert(k, Found { total: 10, nodes: 1, ..Found::default() });
/// }
/// assert_eq!((done.len(), done.ranges()), (4, 2));
/// assert!(done.contains(2) && !done.contains(4));
/// assert_eq!(done.sum().total, 40);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DoneSet {
    /// first position -> (last position, sum over the range)
    ranges: BTreeMap<usize, (usize, Found)>,
    len: usize,
}

impl DoneSet {
    /// Records position `k` as finished with `found`; a position already recorded is ignored.
    pub fn insert(&mut self, k: usize, found: Found) {
        if self.contains(k) {
            return;
        }
        let (mut first, mut last, mut sum) = (k, k, found);
        if let Some((&f, &(l, s))) = self.ranges.range(..k).next_back() {
            if l + 1 == k {
                self.ranges.remove(&f);
                first = f;
                sum += s;
            }
        }
        if let Some((l, s)) = self.ranges.remove(&(k + 1)) {
            last = l;
            sum += s;
        }
        self.ranges.insert(first, (last, sum));
        self.len += 1;
    }

    /// Whether position `k` is finished.
    pub fn contains(&self, k: usize) -> bool {
        self.ranges
            .range(..=k)
            .next_back()
            .is_some_and(|(_, &(last, _))| k <= last)
    }

    /// Number of finished positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is finished.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of ranges the positions form.
    pub fn ranges(&self) -> usize {
        self.ranges.len()
    }

    /// The sum of everything finished.
    pub fn sum(&self) -> Found {
        self.ranges.values().map(|&(_, f)| f).sum()
    }
}

/// Writes the checkpoint of `run` with `done` to `path` atomically: a temporary file beside
/// it, flushed to disk, then renamed over it.
pub fn save(path: &Path, run: &RunIdentity, done: &DoneSet) -> Result<(), Error> {
    let body = Body {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        program_version: env!("CARGO_PKG_VERSION").into(),
        run: run.clone(),
        done: done
            .ranges
            .iter()
            .map(|(&first, &(last, found))| DoneRange { first, last, found })
            .collect(),
    };
    let json = serde_json::to_string(&body).expect("checkpoint bodies always serialise");
    let text = format!("{json}\ncrc32 {:08x}\n", crc32fast::hash(json.as_bytes()));
    let fail = |e: std::io::Error| checkpoint_error(path, format!("cannot write: {e}"));
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = Path::new(&tmp_name);
    let mut file = fs::File::create(tmp).map_err(fail)?;
    file.write_all(text.as_bytes()).map_err(fail)?;
    file.sync_all().map_err(fail)?;
    drop(file);
    fs::rename(tmp, path).map_err(fail)?;
    // make the rename itself durable
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// Reads the checkpoint at `path` for `run`: `Ok(None)` when there is no file yet.
pub fn load(path: &Path, run: &RunIdentity) -> Result<Option<DoneSet>, Error> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(checkpoint_error(path, format!("cannot read: {e}"))),
    };
    let body = parse(path, &bytes)?;
    if body.run != *run {
        return Err(checkpoint_error(
            path,
            format!(
                "belongs to another run ({}); this run is {}; use another file or delete it",
                describe(&body.run),
                describe(run)
            ),
        ));
    }
    let shard_len = run.shard.len(run.plan_subtasks);
    let mut done = DoneSet::default();
    for r in &body.done {
        if r.first > r.last || r.last >= shard_len {
            return Err(checkpoint_error(
                path,
                "lists subtasks outside the run".into(),
            ));
        }
        if (r.first..=r.last).any(|k| done.contains(k)) {
            return Err(checkpoint_error(path, "lists a subtask twice".into()));
        }
        // ranges are stored with their sums: keep them whole
        done.ranges.insert(r.first, (r.last, r.found));
        done.len += r.last - r.first + 1;
    }
    Ok(Some(done))
}

/// Splits and verifies the two lines of a checkpoint.
fn parse(path: &Path, bytes: &[u8]) -> Result<Body, Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| checkpoint_error(path, "is not an nqueens checkpoint (not text)".into()))?;
    let mut lines = text.lines();
    let (json, crc) = match (lines.next(), lines.next(), lines.next()) {
        (Some(json), Some(crc), None) => (json, crc),
        _ => {
            return Err(checkpoint_error(
                path,
                "is truncated or not an nqueens checkpoint (expected a body and a crc32 line)"
                    .into(),
            ))
        }
    };
    let expected = format!("crc32 {:08x}", crc32fast::hash(json.as_bytes()));
    if crc.trim_end() != expected {
        return Err(checkpoint_error(
            path,
            "checksum mismatch: the file is corrupt or truncated".into(),
        ));
    }
    let body: Body = serde_json::from_str(json)
        .map_err(|e| checkpoint_error(path, format!("is not an nqueens checkpoint: {e}")))?;
    if body.format != FORMAT {
        return Err(checkpoint_error(
            path,
            "is not an nqueens checkpoint".into(),
        ));
    }
    if body.format_version != FORMAT_VERSION {
        return Err(checkpoint_error(
            path,
            format!(
                "has format version {} (written by nqueens {}); this program reads version {FORMAT_VERSION}",
                body.format_version, body.program_version
            ),
        ));
    }
    Ok(body)
}

fn describe(run: &RunIdentity) -> String {
    format!(
        "n={} engine={} split_depth={} shard={} unique={}{}",
        run.n,
        run.engine,
        run.split_depth,
        run.shard,
        run.unique,
        match &run.prefix {
            Some(p) => format!(" prefix={p:?}"),
            None => String::new(),
        }
    )
}

fn checkpoint_error(path: &Path, reason: String) -> Error {
    Error::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}

/// Reads just the split depth a checkpoint was written with, so that a resumed run without
/// `--split-depth` cuts its subtasks the same way. `None` when there is no usable file (the
/// full check happens in [`load`]).
pub fn split_depth_of(path: &Path) -> Option<usize> {
    let bytes = fs::read(path).ok()?;
    parse(path, &bytes).ok().map(|b| b.run.split_depth)
}
