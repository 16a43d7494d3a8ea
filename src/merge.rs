//! Adding up the `count --json` records of the shards of one run, and checking them.
//!
//! Every record names its run (N, engine, split depth, plan size and digest, prefix,
//! `unique`, schema version) and its shard; merge refuses records that disagree on any of it,
//! a shard that is missing, repeated or incomplete, a total that differs from the sum of its
//! recorded per-subtask parts, and any sum that would not fit. [`verify`] recounts sampled
//! subtasks of every shard: a check against faulty machines, which checksums cannot give.

use crate::error::Error;
use crate::export::count::CountRecord;
use crate::export::SCHEMA_VERSION;
use crate::options::CountOptions;
use crate::plan::Plan;
use crate::random::SplitMix;
use crate::shard::Shard;
use std::collections::BTreeMap;
use std::io::{BufRead, Read};

/// The longest record line read (a shard's per-subtask parts of the largest plan fit).
pub const MAX_RECORD_BYTES: usize = 64 << 20;

/// Missing shards named in a message before the rest are only counted.
const NAMED_MISSING: usize = 8;

/// How far [`merge`] trusts what records say of themselves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Add up shards that carry no per-subtask parts (written by hand or by another program)
    /// on their totals alone. Off: such a shard is refused, since nothing checks its total.
    pub trust_totals: bool,
    /// Add up the shards given when some are missing (a run still going): the sum is not
    /// `complete` and names the missing shards. Off: a missing shard is refused.
    pub partial: bool,
}

/// Merges shard records (each with the name of where it came from, for messages).
///
/// A shard of several (`shard.count` > 1) must carry its per-subtask `parts`, which must add
/// up to its totals, unless `options.trust_totals`. Whatever the options, no part may reach
/// 2^64 (a subtask is counted in 64 bits) and no unique count may exceed its total.
/// ```
/// use nqueens::{merge, MergeOptions};
/// use nqueens::export::count::CountRecord;
/// // shards of N = 8's d4 plan at split depth 2 (35 subtasks, digest 779f8727): merge
/// // rebuilds the plan that a record names and refuses one whose size or digest differ
/// let line = |i| format!(r#"{{"schema_version":1,"n":8,"total":"{}","threads":1,"engine":"d4","kernel":"scalar","elapsed_s":0.1,"subtasks":{},"plan_subtasks":35,"split_depth":2,"plan_digest":"779f8727","nodes":"10","nodes_per_s":1.0,"complete":true,"shard":{{"index":{i},"count":2}},"version":"0.1.0"}}"#, 40 + 12 * i, 18 - i);
/// let records: Vec<(String, CountRecord)> = (0..2)
///     .map(|i| (format!("shard{i}"), serde_json::from_str(&line(i)).unwrap()))
///     .collect();
/// // these records carry no per-subtask parts: refused unless their totals are trusted
/// assert!(merge(&records, &MergeOptions::default()).is_err());
/// let trusting = MergeOptions { trust_totals: true, ..MergeOptions::default() };
/// assert_eq!(merge(&records, &trusting).unwrap().total, "92");
/// assert!(merge(&records[..1], &trusting).is_err()); // shard 1 is missing
/// // ... unless a partial sum is asked for: it says what is missing
/// let partial = MergeOptions { partial: true, ..trusting };
/// let some = merge(&records[..1], &partial).unwrap();
/// assert_eq!((some.total.as_str(), some.complete), ("40", false));
/// assert_eq!(some.missing_shards, Some(vec![[1, 1]]));
/// ```
pub fn merge(
    records: &[(String, CountRecord)],
    options: &MergeOptions,
) -> Result<CountRecord, Error> {
    let (first_name, first) = records
        .first()
        .ok_or_else(|| Error::Merge("no shard results given".into()))?;
    let count = shard_of(first_name, first)?.count;
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    let mut sum = Sums::default();
    for (name, r) in records {
        check_record(name, r, options)?;
        same_run(name, r, first_name, first)?;
        let shard = shard_of(name, r)?;
        if shard.count != count {
            return Err(differ(name, "the shard count", first_name));
        }
        if !r.complete {
            return Err(Error::Merge(format!(
                "{name}: shard {shard} is incomplete; finish it (resume its checkpoint) first"
            )));
        }
        if let Some(other) = seen.insert(shard.index, name) {
            return Err(Error::Merge(format!(
                "{name}: shard {shard} is given twice (also in {other})"
            )));
        }
        sum.add(name, r)?;
    }
    let missing = missing_ranges(&seen, count);
    if !missing.is_empty() && !options.partial {
        let missing: Vec<String> = (0..count)
            .filter(|i| !seen.contains_key(i))
            .take(NAMED_MISSING)
            .map(|i| format!("{i}/{count}"))
            .collect();
        let more = count - seen.len() - missing.len();
        return Err(Error::Merge(format!(
            "missing shard(s) {}{}; --partial adds up the shards given",
            missing.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )));
    }
    // the records agree with each other; that they name the plan they counted is checked once
    rebuilt_plan(first_name, first)?;
    Ok(CountRecord {
        total: sum.total.to_string(),
        unique: first.unique.as_ref().map(|_| sum.unique.to_string()),
        threads: sum.threads,
        kernel: same_or_mixed(records, |r| &r.kernel),
        device: same_or_mixed(records, |r| &r.device),
        gpu_subtasks: sum.gpu_subtasks,
        gpu_items: sum.gpu_items,
        gpu_dispatches: sum.gpu_dispatches,
        gpu_given_up: sum.gpu_given_up,
        elapsed_s: sum.elapsed_s,
        subtasks: sum.subtasks,
        resumed_subtasks: sum.resumed,
        nodes: sum.nodes.to_string(),
        searched_nodes: (!sum.searched_unknown).then(|| sum.searched.to_string()),
        // shards run side by side: the nodes they searched over the slowest one's time
        nodes_per_s: if sum.elapsed_s > 0.0 {
            sum.searched_nodes / sum.elapsed_s
        } else {
            0.0
        },
        largest_subtask_share: if sum.nodes > 0 {
            sum.largest_subtask_nodes / sum.nodes as f64
        } else {
            0.0
        },
        complete: missing.is_empty(),
        shard: None,
        parts: None,
        missing_shards: (!missing.is_empty()).then_some(missing),
        version: env!("CARGO_PKG_VERSION").into(),
        ..first.clone()
    })
}

/// The shard indices below `count` that `seen` lacks, as inclusive ranges.
fn missing_ranges(seen: &BTreeMap<usize, &str>, count: usize) -> Vec<[usize; 2]> {
    let mut ranges: Vec<[usize; 2]> = Vec::new();
    let mut next = 0;
    for &index in seen.keys().chain(std::iter::once(&count)) {
        if index > next {
            ranges.push([next, index - 1]);
        }
        next = index + 1;
    }
    ranges
}

/// A field all records share, or `mixed`.
fn same_or_mixed(
    records: &[(String, CountRecord)],
    field: impl Fn(&CountRecord) -> &String,
) -> String {
    let first = field(&records[0].1);
    if records.iter().all(|(_, r)| field(r) == first) {
        first.clone()
    } else {
        "mixed".into()
    }
}

/// The shard of a record (the whole run when it has none), checked.
fn shard_of(name: &str, r: &CountRecord) -> Result<Shard, Error> {
    let s = r.shard.unwrap_or(Shard::WHOLE);
    Shard::new(s.index, s.count).map_err(|e| Error::Merge(format!("{name}: {e}")))
}

fn differ(name: &str, what: &str, first_name: &str) -> Error {
    Error::Merge(format!(
        "{name}: {what} differs from {first_name}; they are not shards of one run"
    ))
}

/// The checks one record passes on its own: format, identity present, counts nqueens could
/// have written, parts that add up.
fn check_record(name: &str, r: &CountRecord, options: &MergeOptions) -> Result<(), Error> {
    let bad = |what: String| Error::Merge(format!("{name}: {what}"));
    if r.schema_version != SCHEMA_VERSION {
        return Err(bad(format!(
            "schema_version {} is not {SCHEMA_VERSION}",
            r.schema_version
        )));
    }
    if r.plan_digest.is_none() || r.plan_subtasks == 0 {
        return Err(bad(
            "has no plan_digest or plan_subtasks (written by an older nqueens): count the shard again".into(),
        ));
    }
    if r.shard.is_none() && !r.complete {
        return Err(bad(
            "is a partial sum (merge --partial), not a shard's result: merge the shards' own files"
                .into(),
        ));
    }
    let shard = shard_of(name, r)?;
    if r.subtasks != shard.len(r.plan_subtasks) {
        return Err(bad(format!(
            "shard {shard} of {} subtasks has {} subtasks, not {}",
            r.plan_subtasks,
            r.subtasks,
            shard.len(r.plan_subtasks)
        )));
    }
    if let Some(unique) = &r.unique {
        not_above_total(name, "", number(name, "unique", unique)?, &r.total)?;
    }
    if r.parts.is_none() && shard.count > 1 && !options.trust_totals {
        return Err(bad(format!(
            "shard {shard} has no per-subtask parts, so nothing checks its total; count it \
             again with --json, or pass --trust-totals to add it up on its word"
        )));
    }
    if let Some(parts) = &r.parts {
        let check = |field: &str, list: &[String], whole: &str| -> Result<(), Error> {
            if list.len() != r.subtasks {
                return Err(bad(format!(
                    "lists {} {field} parts for {} subtasks",
                    list.len(),
                    r.subtasks
                )));
            }
            let mut sum = 0u128;
            for (k, v) in list.iter().enumerate() {
                let part = number(name, field, v)?;
                if part > u128::from(u64::MAX) {
                    return Err(bad(format!(
                        "{field} part {v} of subtask {} is not below 2^64: no subtask has that \
                         many solutions (nqueens counts one in 64 bits)",
                        shard.global(k)
                    )));
                }
                sum = sum.checked_add(part).ok_or_else(|| overflow(name, field))?;
            }
            if sum != number(name, field, whole)? {
                return Err(bad(format!(
                    "{field} {whole} is not the sum of its subtasks' parts ({sum}): the record was altered"
                )));
            }
            Ok(())
        };
        check("total", &parts.total, &r.total)?;
        match (&parts.unique, &r.unique) {
            (Some(list), Some(whole)) => {
                check("unique", list, whole)?;
                for (k, (u, t)) in list.iter().zip(&parts.total).enumerate() {
                    let of = format!(" of subtask {}", shard.global(k));
                    not_above_total(name, &of, number(name, "unique", u)?, t)?;
                }
            }
            (None, None) => {}
            _ => return Err(bad("unique parts do not match the unique count".into())),
        }
    }
    Ok(())
}

/// Refuses a record that is not of the same run as the first one.
fn same_run(
    name: &str,
    r: &CountRecord,
    first_name: &str,
    first: &CountRecord,
) -> Result<(), Error> {
    if r.n == first.n && r.engine != first.engine {
        // auto picks d4 where a GPU counts and the quadrant engine on the CPU alone
        return Err(Error::Merge(format!(
            "{name}: the engine differs from {first_name} ({}, not {}): shards of one run use \
             one engine; count them with the same --engine (auto takes d4 on a machine with a \
             GPU, quadrant on one without)",
            r.engine, first.engine
        )));
    }
    let checks = [
        (r.n != first.n, "N"),
        (r.split_depth != first.split_depth, "the split depth"),
        (r.prefix != first.prefix, "the prefix"),
        (
            r.unique.is_some() != first.unique.is_some(),
            "the fundamental solutions (counted in one, not the other)",
        ),
        (r.plan_subtasks != first.plan_subtasks, "the plan size"),
        (
            r.plan_digest != first.plan_digest,
            "the plan digest (programs whose subtask ids mean other subtasks)",
        ),
    ];
    match checks.iter().find(|(differs, _)| *differs) {
        Some((_, what)) => Err(differ(name, what, first_name)),
        None => Ok(()),
    }
}

/// Refuses a unique count above its total (`what` names a part, or is empty for the record).
fn not_above_total(name: &str, what: &str, unique: u128, total: &str) -> Result<(), Error> {
    if unique > number(name, "total", total)? {
        return Err(Error::Merge(format!(
            "{name}: unique {unique}{what} is more than its total {total}: every fundamental \
             solution is a solution"
        )));
    }
    Ok(())
}

/// A count as nqueens writes it: decimal digits, no sign, no leading zero.
fn number(name: &str, field: &str, v: &str) -> Result<u128, Error> {
    let written = v.bytes().all(|b| b.is_ascii_digit()) && (v == "0" || !v.starts_with('0'));
    v.parse::<u128>().ok().filter(|_| written).ok_or_else(|| {
        Error::Merge(format!(
            "{name}: {field} \"{v}\" is not a whole number below 2^128 as nqueens writes it (digits, no sign, no leading zero)"
        ))
    })
}

fn overflow(name: &str, field: &str) -> Error {
    Error::Merge(format!(
        "{name}: the sum of {field} does not fit in 128 bits"
    ))
}

#[derive(Default)]
struct Sums {
    total: u128,
    unique: u128,
    nodes: u128,
    searched_nodes: f64,
    /// The shards' own searched nodes, and whether a record (of an older version) lacks them.
    searched: u128,
    searched_unknown: bool,
    subtasks: usize,
    gpu_subtasks: usize,
    gpu_items: u64,
    gpu_dispatches: u64,
    gpu_given_up: u64,
    resumed: usize,
    threads: usize,
    /// The slowest shard: shards run side by side.
    elapsed_s: f64,
    /// Nodes of the largest subtask of any shard.
    largest_subtask_nodes: f64,
}

impl Sums {
    fn add(&mut self, name: &str, r: &CountRecord) -> Result<(), Error> {
        let add = |acc: u128, field: &str, v: &str| -> Result<u128, Error> {
            acc.checked_add(number(name, field, v)?)
                .ok_or_else(|| overflow(name, field))
        };
        self.total = add(self.total, "total", &r.total)?;
        if let Some(u) = &r.unique {
            self.unique = add(self.unique, "unique", u)?;
        }
        let nodes = number(name, "nodes", &r.nodes)?;
        self.nodes = add(self.nodes, "nodes", &r.nodes)?;
        self.searched_nodes += r.nodes_per_s * r.elapsed_s;
        match &r.searched_nodes {
            Some(n) => self.searched = add(self.searched, "searched_nodes", n)?,
            None => self.searched_unknown = true,
        }
        self.largest_subtask_nodes = self
            .largest_subtask_nodes
            .max(r.largest_subtask_share * nodes as f64);
        self.subtasks = self.subtasks.saturating_add(r.subtasks);
        self.gpu_subtasks = self.gpu_subtasks.saturating_add(r.gpu_subtasks);
        self.gpu_items = self.gpu_items.saturating_add(r.gpu_items);
        self.gpu_dispatches = self.gpu_dispatches.saturating_add(r.gpu_dispatches);
        self.gpu_given_up = self.gpu_given_up.saturating_add(r.gpu_given_up);
        self.resumed = self.resumed.saturating_add(r.resumed_subtasks);
        self.threads = self.threads.saturating_add(r.threads);
        self.elapsed_s = self.elapsed_s.max(r.elapsed_s);
        Ok(())
    }
}

/// Reads the records of `source` (one JSON object per non-empty line), refusing a line
/// longer than 64 MiB instead of reading without end.
///
/// ```
/// let text = "\n{\"schema_version\":1}\n";
/// let err = nqueens::read_records("f", text.as_bytes()).unwrap_err();
/// assert!(err.to_string().contains("f:2: not a JSON count record"));
/// ```
pub fn read_records(
    source: &str,
    mut input: impl BufRead,
) -> Result<Vec<(String, CountRecord)>, Error> {
    let mut records = Vec::new();
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let read = Read::take(&mut input, MAX_RECORD_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::Merge(format!("{source}: cannot read: {e}")))?;
        if read == 0 {
            break;
        }
        let name = format!("{source}:{number}");
        if line.len() > MAX_RECORD_BYTES {
            return Err(Error::Merge(format!(
                "{name}: line longer than {MAX_RECORD_BYTES} bytes: not a JSON count record"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        if text.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(&text)
            .map_err(|e| Error::Merge(format!("{name}: not a JSON count record: {e}")))?;
        records.push((name, record));
    }
    Ok(records)
}

/// Recounts `k` randomly chosen subtasks of every record (all of them when a shard has
/// fewer) with `opts`' threads and kernel, and refuses, naming the record and the subtask,
/// when any differs from what the record says it found. `seed` picks the samples. The
/// quadrant engine's units are recounted by a row-by-row search restricted to the unit, not
/// by the tables that counted them; its ids that count nothing (their row sets are counted
/// under another id) are all checked to say nothing, and not sampled.
///
/// ```
/// use nqueens::export::count::CountRecord;
/// use nqueens::{run, verify, CountOptions, Hooks, RunRequest, Shard};
/// let record = |i| {
///     let s = RunRequest { shard: Shard::new(i, 2).unwrap(), ..RunRequest::new(9, CountOptions::default(), None) };
///     (format!("shard {i}"), CountRecord::from_run(&run(&s, &Hooks::default()).unwrap(), true))
/// };
/// let mut records = vec![record(0), record(1)];
/// verify(&records, 3, &CountOptions::default(), 7).unwrap();
/// // a shard that says one subtask found one more solution is caught when all are recounted
/// let parts = records[1].1.parts.as_mut().unwrap();
/// parts.total[0] = (parts.total[0].parse::<u64>().unwrap() + 1).to_string();
/// assert!(verify(&records, usize::MAX, &CountOptions::default(), 7).is_err());
/// ```
pub fn verify(
    records: &[(String, CountRecord)],
    k: usize,
    opts: &CountOptions,
    seed: u64,
) -> Result<(), Error> {
    let mut rng = SplitMix(seed);
    for (name, r) in records {
        // a record without parts is refused below, with the reason that matters here
        check_record(
            name,
            r,
            &MergeOptions {
                trust_totals: true,
                ..MergeOptions::default()
            },
        )?;
        let bad = |what: String| Error::Merge(format!("{name}: {what}"));
        let parts = r.parts.as_ref().ok_or_else(|| {
            bad("has no per-subtask parts to verify (only sharded runs record them: --shard I/M with --json)".into())
        })?;
        let plan = rebuilt_plan(name, r)?;
        let shard = shard_of(name, r)?;
        // a quadrant id whose row sets are counted under another id must say nothing: all
        // are checked, as that takes no recount; the sample is drawn from the others
        let counts_nothing = |pos: usize| {
            plan.quadrant_layout()
                .is_some_and(|layout| layout.counts_nothing(shard.global(pos)))
        };
        let mut candidates = Vec::new();
        for pos in 0..r.subtasks {
            if !counts_nothing(pos) {
                candidates.push(pos);
                continue;
            }
            let said = number(name, "total", &parts.total[pos])?;
            if said != 0 {
                return Err(bad(format!(
                    "subtask {} records total {said} but stands for no row set of its own (its row sets are counted under another id): the shard is wrong",
                    shard.global(pos)
                )));
            }
        }
        let positions = sample(&mut rng, candidates, k);
        let ids: Vec<usize> = positions.iter().map(|&p| shard.global(p)).collect();
        let run_opts = CountOptions {
            unique: r.unique.is_some(),
            ..opts.clone()
        };
        let recounted = match plan.quadrant_layout() {
            // a unit recounted from the same tables could repeat their fault: searched instead
            Some(layout) => {
                let kernel = crate::kernel::Chosen::resolve(run_opts.kernel)?;
                // the threads fitted to the process's room, as a count's are
                let threads = crate::resolved::for_plan(&plan, &run_opts)?.threads;
                let workers = crate::parallel::Workers::new(threads, run_opts.pin)?;
                layout.recount_by_rows(&ids, kernel, &workers)?
            }
            None => crate::run::recount(&plan, &ids, &run_opts)?.1,
        };
        for (&pos, &again) in positions.iter().zip(&recounted) {
            let id = shard.global(pos);
            let said_total = number(name, "total", &parts.total[pos])?;
            let said_unique = match &parts.unique {
                Some(u) => Some(number(name, "unique", &u[pos])?),
                None => None,
            };
            let again_unique = said_unique.map(|_| again.unique);
            if (said_total, said_unique) != (again.total, again_unique) {
                return Err(bad(format!(
                    "subtask {id} records total {said_total}{} but counts {}{} when recounted: the shard is wrong",
                    said_unique.map_or(String::new(), |u| format!(" unique {u}")),
                    again.total,
                    again_unique.map_or(String::new(), |u| format!(" unique {u}")),
                )));
            }
        }
    }
    Ok(())
}

/// The plan a record names (its N, engine, split depth and prefix), rebuilt, and checked
/// against the plan size and digest it records: a record whose facts were changed (another
/// N, say) or that another version of nqueens wrote is refused.
fn rebuilt_plan(name: &str, r: &CountRecord) -> Result<Plan, Error> {
    let bad = |what: String| Error::Merge(format!("{name}: {what}"));
    let prefix: Option<Vec<usize>> = match &r.prefix {
        Some(p) if p.contains(&0) => return Err(bad("prefix columns are 1-based".into())),
        Some(p) => Some(p.iter().map(|c| c - 1).collect()),
        None => None,
    };
    let plan = Plan::new(
        r.n,
        r.engine.choice(),
        prefix.as_deref(),
        Some(r.split_depth),
    )
    .map_err(|e| bad(format!("cannot rebuild its plan: {e}")))?;
    if Some(plan.digest()) != r.plan_digest || plan.len() != r.plan_subtasks {
        return Err(bad(format!(
            "its plan ({} subtasks, digest {}) is not the plan of what it names (N = {}, engine {}, split depth {}: {} subtasks, digest {}): the record was changed, or another version of nqueens wrote it",
            r.plan_subtasks,
            r.plan_digest.as_deref().unwrap_or("none"),
            r.n,
            r.engine.name(),
            r.split_depth,
            plan.len(),
            plan.digest(),
        )));
    }
    Ok(plan)
}

/// `k` distinct positions out of `all` (increasing), in increasing order (all of them when
/// `k >= all.len()`).
fn sample(rng: &mut SplitMix, mut all: Vec<usize>, k: usize) -> Vec<usize> {
    let len = all.len();
    if k < len {
        // a partial Fisher-Yates shuffle: the first k are a uniform sample
        for i in 0..k {
            let j = i + (rng.next() % (len - i) as u64) as usize;
            all.swap(i, j);
        }
        all.truncate(k);
        all.sort_unstable();
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{run, EngineChoice, Hooks, RunRequest};

    #[test]
    fn an_id_that_counts_nothing_said_to_find_something_is_refused_without_a_recount() {
        let opts = CountOptions {
            engine: EngineChoice::Quadrant,
            ..CountOptions::default()
        };
        let request = RunRequest {
            shard: Shard::new(0, 2).unwrap(),
            ..RunRequest::new(12, opts.clone(), None)
        };
        let outcome = run(&request, &Hooks::default()).unwrap();
        let mut record = CountRecord::from_run(&outcome, true);
        let plan = rebuilt_plan("r", &record).unwrap();
        let layout = plan.quadrant_layout().unwrap();
        let pos = (0..record.subtasks)
            .find(|&p| layout.counts_nothing(2 * p))
            .expect("N = 12 has ids that count nothing");
        record.parts.as_mut().unwrap().total[pos] = "3".into();
        record.total = (record.total.parse::<u64>().unwrap() + 3).to_string();
        let records = vec![("r".to_string(), record)];
        let err = verify(&records, 0, &opts, 1).unwrap_err().to_string();
        let said = format!(
            "subtask {} records total 3 but stands for no row set",
            2 * pos
        );
        assert!(err.contains(&said), "{err}");
    }
}
