//! Checkpoint files: the finished subtasks of a run, saved atomically and checked on resume.
//!
//! The file is two lines: a JSON body, then `crc32 XXXXXXXX` over the body's bytes. The body
//! names the run ([`RunIdentity`]: N, engine, split depth, plan size and digest, shard,
//! `unique`, prefix) and the format version, and lists what every finished subtask found, as
//! runs of consecutive positions within the shard. A file that is truncated, corrupt, of
//! another format or of another run is refused, never turned into a wrong total.
//!
//! A run holds an exclusive lock on `FILE.lock` for its whole life, so two runs never write one
//! checkpoint; each save goes through a fresh temporary file in the same directory, flushed to
//! disk and renamed over the old one. A symbolic link is followed once, when the file is
//! opened: saves replace its target, and the link stays.

use crate::error::Error;
use crate::found::Found;
use crate::parallel::lock;
use crate::race::DeviceRace;
use crate::shard::Shard;
use serde::{Deserialize, Serialize};
use std::collections::TryReserveError;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Marks the file as ours.
const FORMAT: &str = "nqueens-checkpoint";
/// Bumped whenever the body or the subtask order changes meaning (2: per-subtask results and
/// the plan digest).
///
/// A format constant: no example, it is only read.
pub(crate) const FORMAT_VERSION: u32 = 2;
/// Symbolic links followed before giving up (as the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Everything that must match for a checkpoint to be resumed by a run.
///
/// ```
/// use nqueens::{run, CountOptions, Hooks, RunRequest, Shard};
/// let request = RunRequest { shard: Shard::new(1, 3).unwrap(), ..RunRequest::new(9, CountOptions::default(), None) };
/// let id = run(&request, &Hooks::default()).unwrap().identity;
/// assert_eq!((id.n, id.shard, id.unique), (9, Shard::new(1, 3).unwrap(), false));
/// assert_eq!(id.plan_digest.len(), 8);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// Board side.
    pub n: usize,
    /// Engine.
    pub engine: crate::engine::Engine,
    /// Rows enumerated into subtasks.
    pub split_depth: usize,
    /// Subtasks in the whole plan.
    pub plan_subtasks: usize,
    /// [`crate::plan::Plan::digest`] of the plan.
    pub plan_digest: String,
    /// The shard of the plan this run covers.
    pub shard: Shard,
    /// Whether fundamental solutions are counted.
    pub unique: bool,
    /// The 0-based prefix, when counting completions.
    pub prefix: Option<Vec<usize>>,
}

/// What one subtask found. Per subtask the numbers fit in `u64` (a subtask with 2^64
/// solutions would take centuries); sums are `u128`.
///
/// A plain record; [`RunOutcome::parts`](crate::RunOutcome::parts) shows it in use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Part {
    /// Solutions, weighted by symmetry.
    pub total: u64,
    /// Fundamental solutions (0 unless counted).
    pub unique: u64,
    /// Search nodes.
    pub nodes: u64,
}

impl Part {
    /// The part of one subtask's [`Found`].
    ///
    /// ```
    /// use nqueens::Part;
    /// use nqueens::Found;
    /// let f = Found { total: 8, unique: 1, nodes: 40, max_subtask_nodes: 40 };
    /// assert_eq!(Part::of(&f), Part { total: 8, unique: 1, nodes: 40 });
    /// ```
    pub fn of(found: &Found) -> Part {
        let fit = |v: u128| u64::try_from(v).expect("one subtask's counts fit in u64");
        Part {
            total: fit(found.total),
            unique: fit(found.unique),
            nodes: fit(found.nodes),
        }
    }

    fn found(self) -> Found {
        Found {
            total: self.total.into(),
            unique: self.unique.into(),
            nodes: self.nodes.into(),
            max_subtask_nodes: self.nodes.into(),
        }
    }
}

/// The finished positions of a shard, with what each one found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DoneSet {
    parts: Vec<Option<Part>>,
    len: usize,
}

impl DoneSet {
    /// Nothing finished among `positions` positions.
    #[cfg(test)]
    pub fn new(positions: usize) -> DoneSet {
        DoneSet::within_memory(positions).expect("memory for the finished set")
    }

    /// Nothing finished among `positions` positions, or an error when its memory (32 bytes a
    /// position) cannot be had.
    pub fn within_memory(positions: usize) -> Result<DoneSet, Error> {
        let mut parts = Vec::new();
        parts
            .try_reserve_exact(positions)
            .map_err(|_| crate::memory::memory_short("the run's finished subtasks"))?;
        parts.resize(positions, None);
        Ok(DoneSet { parts, len: 0 })
    }

    /// Records position `k` as finished with `part`; a position already recorded is ignored.
    ///
    /// # Panics
    /// When `k` is not below the number of positions.
    pub fn insert(&mut self, k: usize, part: Part) {
        if self.parts[k].is_none() {
            self.parts[k] = Some(part);
            self.len += 1;
        }
    }

    /// Whether position `k` is finished.
    pub fn contains(&self, k: usize) -> bool {
        self.parts.get(k).is_some_and(Option::is_some)
    }

    /// Number of finished positions.
    pub fn len(&self) -> usize {
        self.len
    }

    /// What each position found, `None` where unfinished.
    pub fn parts(&self) -> &[Option<Part>] {
        &self.parts
    }

    /// The sum of everything finished (`u128`: a sum of at most 2^21 `u64` values, exact).
    pub fn sum(&self) -> Found {
        self.parts.iter().flatten().map(|p| p.found()).sum()
    }
}

/// Consecutive finished positions as stored in the file: position `first + i` found
/// `total[i]`, `unique[i]`, `nodes[i]`.
#[derive(Debug, Serialize, Deserialize)]
struct DoneRun {
    first: usize,
    total: Vec<u64>,
    unique: Vec<u64>,
    nodes: Vec<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Body {
    format: String,
    format_version: u32,
    program_version: String,
    run: RunIdentity,
    /// What `--device auto`'s race chose, when the run raced: a resumed run counts there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    device_choice: Option<DeviceRace>,
    done: Vec<DoneRun>,
}

/// A checkpoint file opened by one run: its resolved path, the lock that keeps every other
/// run away from it until this one ends, and what it held when it was opened (read once).
#[derive(Debug)]
pub struct Checkpoint {
    path: PathBuf,
    dir: PathBuf,
    /// Held, never read: the lock lasts as long as the handle.
    _lock: fs::File,
    saved: Option<Body>,
    /// Finished subtasks the file on disk holds (`None`: no file yet): what it read, then
    /// what each save that succeeded wrote.
    held: Mutex<Option<usize>>,
    /// The race's choice every save writes: the file's, until a race records one.
    choice: Mutex<Option<DeviceRace>>,
}

/// Held while a checkpoint of this process is written ([`Checkpoint::save`]).
static SAVING: Mutex<()> = Mutex::new(());

/// Runs `f` where no checkpoint of this process is being written at this moment, holding
/// saves off while it runs (`None`, `f` not run, where one is): a process ended in `f` ends
/// between two saves, never in one (which would leave its temporary file behind).
pub(crate) fn between_saves<T>(f: impl FnOnce() -> T) -> Option<T> {
    let _no_save = match SAVING.try_lock() {
        Ok(held) => held,
        Err(std::sync::TryLockError::Poisoned(held)) => held.into_inner(),
        Err(std::sync::TryLockError::WouldBlock) => return None,
    };
    Some(f())
}

impl Checkpoint {
    /// Opens the checkpoint at `path` for a run: follows symbolic links, refuses anything
    /// but a regular file (or no file yet), takes the lock, checks that the directory takes
    /// new files and reads what the file holds, all before any counting.
    pub fn open(path: &Path) -> Result<Checkpoint, Error> {
        let resolved = resolve_file(path)?;
        let fail = |reason: String| checkpoint_error(path, reason);
        let dir = match resolved.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let lock_path = dir.join(beside(&resolved, ".lock", 0));
        let lock_path = lock_path.as_path();
        // opening a FIFO would block until a writer came, a device could be anything
        if let Some(kind) = fs::metadata(lock_path).ok().and_then(|m| not_a_file(&m)) {
            return Err(fail(format!(
                "its lock file {} is {kind}, not a regular file: remove it or use another checkpoint",
                lock_path.display()
            )));
        }
        let lock = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(lock_path)
            .map_err(|e| {
                fail(format!(
                    "its lock file {} cannot be opened: {e}",
                    lock_path.display()
                ))
            })?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                return Err(fail(format!(
                    "is in use by another nqueens run (it holds the lock on {}); wait for it to end or use another file",
                    lock_path.display()
                )))
            }
            Err(fs::TryLockError::Error(e)) => return Err(fail(format!("cannot be locked: {e}"))),
        }
        temporary(&resolved, &dir).map_err(|e| fail(format!("cannot be written: {e}")))?;
        // only the lock holder writes temporary files for this checkpoint: any left are
        // from a run killed while saving
        remove_stale_temporaries(&resolved, &dir);
        let saved = read_body(&resolved)?;
        let held = saved
            .as_ref()
            .map(|body| body.done.iter().map(|r| r.total.len()).sum());
        let choice = saved.as_ref().and_then(|body| body.device_choice);
        Ok(Checkpoint {
            path: resolved,
            dir,
            _lock: lock,
            saved,
            held: Mutex::new(held),
            choice: Mutex::new(choice),
        })
    }

    /// The run the file at `path` was written for, read without taking its lock (a run may
    /// hold it): what a run on it would resume, for `--dry-run`. `None` when there is no
    /// file yet.
    pub fn saved_run_at(path: &Path) -> Result<Option<(RunIdentity, Option<DeviceRace>)>, Error> {
        let resolved = resolve_file(path)?;
        Ok(read_body(&resolved)?.map(|body| (body.run, body.device_choice)))
    }

    /// The run the file was written for, when there is a file: a resumed run without an
    /// explicit split depth cuts its subtasks the same way, and a foreign file is named as
    /// such before any plan is built.
    pub fn saved_run(&self) -> Option<&RunIdentity> {
        self.saved.as_ref().map(|body| &body.run)
    }

    /// What the race of the run the file was written for chose, when it raced.
    pub fn choice(&self) -> Option<DeviceRace> {
        *lock(&self.choice)
    }

    /// Records the race's choice: every later save writes it.
    pub fn record_choice(&self, race: DeviceRace) {
        *lock(&self.choice) = Some(race);
    }

    /// The finished subtasks the file holds for `run`: `Ok(None)` when there is no file yet.
    pub fn load(&self, run: &RunIdentity) -> Result<Option<DoneSet>, Error> {
        let Some(body) = &self.saved else {
            return Ok(None);
        };
        if body.run != *run {
            return Err(checkpoint_error(
                &self.path,
                format!(
                    "belongs to another run ({}); this run is {}; use another file or delete it",
                    describe(&body.run),
                    describe(run)
                ),
            ));
        }
        let mut done = DoneSet::within_memory(run.shard.len(run.plan_subtasks))?;
        for r in &body.done {
            let len = r.total.len();
            let end = r.first.checked_add(len);
            if len == 0 || r.unique.len() != len || r.nodes.len() != len {
                return Err(checkpoint_error(
                    &self.path,
                    "has a malformed list of finished subtasks".into(),
                ));
            }
            if end.is_none_or(|end| end > done.parts.len()) {
                return Err(checkpoint_error(
                    &self.path,
                    "lists subtasks outside the run".into(),
                ));
            }
            for i in 0..len {
                let k = r.first + i;
                if done.contains(k) {
                    return Err(checkpoint_error(&self.path, "lists a subtask twice".into()));
                }
                done.insert(
                    k,
                    Part {
                        total: r.total[i],
                        unique: r.unique[i],
                        nodes: r.nodes[i],
                    },
                );
            }
        }
        Ok(Some(done))
    }

    /// Writes the checkpoint of `run` with `done`: a fresh temporary file in the same
    /// directory, flushed to disk, renamed over the file, and the directory flushed; never
    /// while [`between_saves`] runs.
    pub fn save(&self, run: &RunIdentity, done: &DoneSet) -> Result<(), Error> {
        let _one_at_a_time = lock(&SAVING);
        let short = |_| {
            let e = crate::memory::memory_short("the checkpoint's contents");
            checkpoint_error(&self.path, format!("cannot write: {e}"))
        };
        let body = Body {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            program_version: env!("CARGO_PKG_VERSION").into(),
            run: run.clone(),
            device_choice: self.choice(),
            done: runs_of(done).map_err(short)?,
        };
        // room for the longest text the body can take (three 20-digit numbers a subtask), so
        // that writing it never grows the buffer
        let mut json = Vec::new();
        let most = 64 * done.len() + 96 * body.done.len() + 4096;
        json.try_reserve_exact(most).map_err(short)?;
        serde_json::to_writer(&mut json, &body).expect("checkpoint bodies always serialise");
        let crc = format!("\ncrc32 {:08x}\n", crc32fast::hash(&json));
        let fail = |e: std::io::Error| checkpoint_error(&self.path, format!("cannot write: {e}"));
        let mut tmp = temporary(&self.path, &self.dir).map_err(fail)?;
        // through the file itself: tempfile's writer would name its temporary in every error
        let file = tmp.as_file_mut();
        file.write_all(&json).map_err(fail)?;
        file.write_all(crc.as_bytes()).map_err(fail)?;
        tmp.as_file().sync_all().map_err(fail)?;
        tmp.persist(&self.path).map_err(|e| fail(e.error))?;
        // make the rename itself durable
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        *lock(&self.held) = Some(done.len());
        Ok(())
    }

    /// What the file on disk still holds after `failed` (a save's error), for a run of
    /// `of` subtasks: said when a save fails where no later one will follow.
    pub fn left_as_it_was(&self, failed: Error, of: usize) -> String {
        let reason = match failed {
            Error::Checkpoint { reason, .. } => reason,
            other => other.to_string(),
        };
        match *lock(&self.held) {
            Some(held) => format!(
                "{reason}; the file still holds {held} of {of} finished subtasks, from its last save"
            ),
            None => format!("{reason}; no checkpoint was written"),
        }
    }
}

/// The finished positions as runs of consecutive positions.
fn runs_of(done: &DoneSet) -> Result<Vec<DoneRun>, TryReserveError> {
    let mut runs: Vec<DoneRun> = Vec::new();
    for (k, part) in done.parts.iter().enumerate() {
        let Some(p) = part else { continue };
        let run = match runs.last_mut() {
            Some(r) if r.first + r.total.len() == k => r,
            _ => {
                runs.try_reserve(1)?;
                runs.push(DoneRun {
                    first: k,
                    total: Vec::new(),
                    unique: Vec::new(),
                    nodes: Vec::new(),
                });
                runs.last_mut().expect("just pushed")
            }
        };
        for (column, value) in [
            (&mut run.total, p.total),
            (&mut run.unique, p.unique),
            (&mut run.nodes, p.nodes),
        ] {
            column.try_reserve(1)?;
            column.push(value);
        }
    }
    Ok(runs)
}

/// The file `path` names, links followed: a regular file or nothing yet. A device or a FIFO
/// could be read without end or block forever.
fn resolve_file(path: &Path) -> Result<PathBuf, Error> {
    let resolved = resolve_links(path)?;
    match fs::metadata(&resolved).map(|m| not_a_file(&m)) {
        Ok(Some(kind)) => Err(checkpoint_error(
            path,
            format!(
                "is {kind}, not a regular file (a checkpoint must be a file, or not exist yet)"
            ),
        )),
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(checkpoint_error(path, format!("cannot be read: {e}")))
        }
        _ => Ok(resolved),
    }
}

/// What a file that is not a regular file is, in a few words (`None` for a regular file).
fn not_a_file(m: &fs::Metadata) -> Option<&'static str> {
    let kind = m.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
        if kind.is_block_device() || kind.is_char_device() {
            return Some("a device");
        }
    }
    Some("a special file")
}

/// Follows symbolic links from `path` to the file they name (which need not exist yet).
fn resolve_links(path: &Path) -> Result<PathBuf, Error> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = fs::read_link(&current)
                    .map_err(|e| checkpoint_error(path, format!("cannot read the link: {e}")))?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(checkpoint_error(
        path,
        "has too many levels of symbolic links".into(),
    ))
}

/// Reads and verifies the body at `path`; `Ok(None)` when there is no file.
fn read_body(path: &Path) -> Result<Option<Body>, Error> {
    let mut file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(checkpoint_error(path, format!("cannot read: {e}"))),
    };
    let cannot = |e: std::io::Error| checkpoint_error(path, format!("cannot read: {e}"));
    let size = file.metadata().map_err(cannot)?.len() as usize;
    // room for the text and twice as much for what it parses into, tried before it is read
    let short = |_| {
        let e = crate::memory::memory_short("reading the checkpoint");
        checkpoint_error(path, e.to_string())
    };
    let mut room: Vec<u8> = Vec::new();
    room.try_reserve_exact(size.saturating_mul(3))
        .map_err(short)?;
    drop(room);
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(size).map_err(short)?;
    std::io::Read::read_to_end(&mut file, &mut bytes).map_err(cannot)?;
    parse(path, &bytes).map(Some)
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
    #[derive(Deserialize)]
    struct Header {
        format: String,
        format_version: u32,
        #[serde(default)]
        program_version: String,
    }
    let header: Header = serde_json::from_str(json)
        .map_err(|e| checkpoint_error(path, format!("is not an nqueens checkpoint: {e}")))?;
    if header.format != FORMAT {
        return Err(checkpoint_error(
            path,
            "is not an nqueens checkpoint".into(),
        ));
    }
    if header.format_version != FORMAT_VERSION {
        return Err(checkpoint_error(
            path,
            format!(
                "has format version {} (written by nqueens {}); this program reads version {FORMAT_VERSION}: finish it with that version or start again",
                header.format_version, header.program_version
            ),
        ));
    }
    serde_json::from_str(json)
        .map_err(|e| checkpoint_error(path, format!("is not an nqueens checkpoint: {e}")))
}

fn describe(run: &RunIdentity) -> String {
    format!(
        "n={} engine={} split_depth={} plan={} subtasks ({}) shard={} unique={}{}",
        run.n,
        run.engine,
        run.split_depth,
        run.plan_subtasks,
        run.plan_digest,
        run.shard,
        run.unique,
        match &run.prefix {
            Some(p) => format!(
                " prefix=\"{}\"",
                p.iter()
                    .map(|c| (c + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            None => String::new(),
        }
    )
}

/// Random characters at the end of a temporary file's name (`FILE.tmpXXXXXX`).
const TEMPORARY_RANDOM: usize = 6;

/// The prefix of the temporary files a save of checkpoint `path` writes: `FILE.tmp`.
fn temporary_prefix(path: &Path) -> std::ffi::OsString {
    beside(path, ".tmp", TEMPORARY_RANDOM)
}

/// The name of a file beside checkpoint `path`: its name and `suffix` (`FILE.lock`), or,
/// where that and `more` bytes after it are longer than a file system takes, a short name:
/// `.nqueens-` and the name's CRC-32, and `suffix`.
fn beside(path: &Path, suffix: &str, more: usize) -> std::ffi::OsString {
    let file = path.file_name().unwrap_or_default();
    let mut name = file.to_owned();
    name.push(suffix);
    if name.len() + more > NAME_MAX {
        let crc = crc32fast::hash(file.as_encoded_bytes());
        name = format!(".nqueens-{crc:08x}{suffix}").into();
    }
    name
}

/// The longest file name most file systems take (Linux's ext4, XFS, Btrfs; macOS's APFS).
const NAME_MAX: usize = 255;

/// A fresh temporary file `FILE.tmpXXXXXX` beside checkpoint `path` (removed when dropped).
fn temporary(path: &Path, dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    tempfile::Builder::new()
        .prefix(&temporary_prefix(path))
        .rand_bytes(TEMPORARY_RANDOM)
        .tempfile_in(dir)
}

/// Removes the temporary files of checkpoint `path` that a killed run left in `dir`. Best
/// effort: a file that cannot be removed is left.
fn remove_stale_temporaries(path: &Path, dir: &Path) {
    let prefix = temporary_prefix(path);
    let prefix = prefix.as_encoded_bytes();
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.as_encoded_bytes();
        let ours = name.len() == prefix.len() + TEMPORARY_RANDOM
            && name.starts_with(prefix)
            && name[prefix.len()..].iter().all(u8::is_ascii_alphanumeric);
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn checkpoint_error(path: &Path, reason: String) -> Error {
    Error::Checkpoint {
        path: path.display().to_string(),
        reason,
    }
}

#[cfg(test)]
mod doc_examples {
    #[test]
    fn doneset_example() {
        use crate::checkpoint::{DoneSet, Part};
        let mut done = DoneSet::new(8);
        for k in [3, 1, 2, 7] {
            done.insert(
                k,
                Part {
                    total: 10,
                    unique: 0,
                    nodes: 1,
                },
            );
        }
        assert_eq!(done.len(), 4);
        assert!(done.contains(2) && !done.contains(4));
        assert_eq!(done.sum().total, 40);
    }
}
