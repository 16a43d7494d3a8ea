//! Adding up the `count --json` records of the shards of one run.

use crate::error::Error;
use crate::report::{CountRecord, SCHEMA_VERSION};
use crate::shard::Shard;

/// Merges shard records (each with the name of where it came from, for messages).
///
/// Refuses records of different runs (N, engine, split depth, shard count, `unique`),
/// incomplete shards, and a shard that is missing or given twice.
///
/// ```
/// use nqueens::merge::merge;
/// use nqueens::report::CountRecord;
/// let line = |i| format!(r#"{{"schema_version":1,"n":8,"total":"{}","threads":1,"engine":"d4","kernel":"scalar","elapsed_s":0.1,"subtasks":3,"split_depth":2,"nodes":"10","nodes_per_s":1.0,"complete":true,"shard":{{"index":{i},"count":2}},"version":"0.1.0"}}"#, 40 + 12 * i);
/// let records: Vec<(String, CountRecord)> = (0..2)
///     .map(|i| (format!("shard{i}"), serde_json::from_str(&line(i)).unwrap()))
///     .collect();
/// assert_eq!(merge(&records).unwrap().total, "92");
/// assert!(merge(&records[..1]).is_err()); // shard 1 is missing
/// ```
pub fn merge(records: &[(String, CountRecord)]) -> Result<CountRecord, Error> {
    let (first_name, first) = records
        .first()
        .ok_or_else(|| Error::Merge("no shard results given".into()))?;
    let shard_of = |r: &CountRecord| r.shard.unwrap_or(Shard::WHOLE);
    let count = shard_of(first).count;
    let mut seen: Vec<Option<&str>> = vec![None; count];
    let mut sum = Sums::default();
    for (name, r) in records {
        let differ = |what: &str| {
            Error::Merge(format!(
                "{name}: {what} differs from {first_name}; they are not shards of one run"
            ))
        };
        if r.schema_version != SCHEMA_VERSION {
            return Err(Error::Merge(format!(
                "{name}: schema_version {} is not {SCHEMA_VERSION}",
                r.schema_version
            )));
        }
        if r.n != first.n {
            return Err(differ("N"));
        }
        if r.engine != first.engine {
            return Err(differ("the engine"));
        }
        if r.split_depth != first.split_depth || r.plan_subtasks != first.plan_subtasks {
            return Err(differ("the split depth"));
        }
        if r.unique.is_some() != first.unique.is_some() {
            return Err(differ("--unique"));
        }
        let shard = shard_of(r);
        if shard.count != count {
            return Err(differ("the shard count"));
        }
        if !r.complete {
            return Err(Error::Merge(format!(
                "{name}: shard {shard} is incomplete; finish it (resume its checkpoint) first"
            )));
        }
        if let Some(other) = seen[shard.index].replace(name) {
            return Err(Error::Merge(format!(
                "{name}: shard {shard} is given twice (also in {other})"
            )));
        }
        sum.add(name, r)?;
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| seen[i].is_none())
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(Error::Merge(format!(
            "missing shard(s) {}",
            missing.join(", ")
        )));
    }
    let nodes_per_s = if sum.elapsed_s > 0.0 {
        sum.nodes as f64 / sum.elapsed_s
    } else {
        0.0
    };
    Ok(CountRecord {
        total: sum.total.to_string(),
        unique: first.unique.as_ref().map(|_| sum.unique.to_string()),
        threads: sum.threads,
        kernel: if records.iter().all(|(_, r)| r.kernel == first.kernel) {
            first.kernel.clone()
        } else {
            "mixed".into()
        },
        elapsed_s: sum.elapsed_s,
        subtasks: sum.subtasks,
        resumed_subtasks: sum.resumed,
        nodes: sum.nodes.to_string(),
        nodes_per_s,
        largest_subtask_share: if sum.nodes > 0 {
            sum.largest_subtask_nodes / sum.nodes as f64
        } else {
            0.0
        },
        complete: true,
        shard: None,
        version: env!("CARGO_PKG_VERSION").into(),
        ..first.clone()
    })
}

#[derive(Default)]
struct Sums {
    total: u128,
    unique: u128,
    nodes: u128,
    subtasks: usize,
    resumed: usize,
    threads: usize,
    /// The slowest shard: shards run side by side.
    elapsed_s: f64,
    /// Nodes of the largest subtask of any shard.
    largest_subtask_nodes: f64,
}

impl Sums {
    fn add(&mut self, name: &str, r: &CountRecord) -> Result<(), Error> {
        let number = |field: &str, v: &str| {
            v.parse::<u128>()
                .map_err(|_| Error::Merge(format!("{name}: {field} \"{v}\" is not a whole number")))
        };
        self.total += number("total", &r.total)?;
        if let Some(u) = &r.unique {
            self.unique += number("unique", u)?;
        }
        let nodes = number("nodes", &r.nodes)?;
        self.nodes += nodes;
        self.largest_subtask_nodes = self
            .largest_subtask_nodes
            .max(r.largest_subtask_share * nodes as f64);
        self.subtasks += r.subtasks;
        self.resumed += r.resumed_subtasks;
        self.threads += r.threads;
        self.elapsed_s = self.elapsed_s.max(r.elapsed_s);
        Ok(())
    }
}

/// Parses the records in `text` (one JSON object per non-empty line) from `source`.
pub fn parse_records(source: &str, text: &str) -> Result<Vec<(String, CountRecord)>, Error> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let name = format!("{source}:{}", i + 1);
            serde_json::from_str(line)
                .map(|r| (name.clone(), r))
                .map_err(|e| Error::Merge(format!("{name}: not a count --json record: {e}")))
        })
        .collect()
}
