//! What `count` and `merge` print: the plain line, the JSON record and the stats line.

use super::schema::SCHEMA_VERSION;
use crate::counts::Counts;
use crate::engine::Engine;
use crate::memory::Bytes;
use crate::race::DeviceRace;
use crate::run::RunOutcome;
use crate::shard::Shard;
use serde::{Deserialize, Serialize};

/// One `count --json` line. Counts are decimal strings: JSON numbers lose precision past 2^53.
///
/// ```
/// use nqueens::export::count::CountRecord;
/// let c = nqueens::count(8, &nqueens::CountOptions::default()).unwrap();
/// let record = CountRecord::new(&c);
/// let back: CountRecord = serde_json::from_str(&record.to_json()).unwrap();
/// assert_eq!((back.total.as_str(), back.complete), ("92", true));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CountRecord {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Board side.
    pub n: usize,
    /// Solutions (of the shard, when sharded).
    pub total: String,
    /// Fundamental solutions, with `--unique`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<String>,
    /// Worker threads.
    pub threads: usize,
    /// Engine that ran.
    pub engine: Engine,
    /// Kernel that ran.
    pub kernel: String,
    /// Where the search ran: `cpu`, or the GPU adapter and its backend.
    #[serde(default = "cpu")]
    pub device: String,
    /// Subtasks the GPUs counted in this run (the CPU counted the rest).
    #[serde(default)]
    pub gpu_subtasks: usize,
    /// Items the GPUs counted: the pieces they cut their subtasks into.
    #[serde(default)]
    pub gpu_items: u64,
    /// Dispatches to the GPUs.
    #[serde(default)]
    pub gpu_dispatches: u64,
    /// Pieces the GPUs were given and the CPU counted instead.
    #[serde(default)]
    pub gpu_given_up: u64,
    /// Wall-clock seconds.
    pub elapsed_s: f64,
    /// Subtasks of this run (of the shard, when sharded), resumed ones included.
    pub subtasks: usize,
    /// Subtasks taken from a checkpoint instead of searched.
    #[serde(default)]
    pub resumed_subtasks: usize,
    /// Subtasks of the whole plan (all shards).
    #[serde(default)]
    pub plan_subtasks: usize,
    /// Rows enumerated into subtasks.
    pub split_depth: usize,
    /// [`crate::plan::Plan::digest`] of the plan: which subtasks the ids stand for.
    /// Always written; absent only in records of older versions, which merge refuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
    /// The prefix counted, as 1-based columns, when counting completions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Vec<usize>>,
    /// Queens placed by the search over the whole run or shard, resumed subtasks included:
    /// a resumed run reports what an uninterrupted one would.
    pub nodes: String,
    /// Queens placed by this run alone (resumed subtasks left out); absent in records of
    /// older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub searched_nodes: Option<String>,
    /// Nodes searched by this run (resumed subtasks left out) per second.
    pub nodes_per_s: f64,
    /// The largest subtask's share of the nodes.
    #[serde(default)]
    pub largest_subtask_share: f64,
    /// Whether every subtask of the run (or shard) is counted.
    pub complete: bool,
    /// The process's peak resident memory in bytes, where the system tells it (Linux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_memory_bytes: Option<u64>,
    /// Bytes of the quadrant engine's tables (0 when halves were searched without them);
    /// absent for the other engines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables_bytes: Option<u64>,
    /// The shard, when sharded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// What each subtask of the shard found, when sharded (for `merge`'s checks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parts: Option<Parts>,
    /// What `--device auto`'s race measured and chose, when the run raced (or resumed a run
    /// that did).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_choice: Option<DeviceRace>,
    /// In the sum of a partial merge only (`merge --partial`): the shard indices not given,
    /// as inclusive ranges `[from, to]`, and `complete` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_shards: Option<Vec<[usize; 2]>>,
    /// Program version.
    pub version: String,
}

/// Per-subtask results of a shard, in shard order: position `k` is subtask id
/// `index + k * count`. Decimal strings, like every count in the JSON.
///
/// ```
/// use nqueens::export::count::CountRecord;
/// use nqueens::{run, CountOptions, Hooks, RunRequest, Shard};
/// let request = RunRequest { shard: Shard::new(0, 2).unwrap(), ..RunRequest::new(8, CountOptions::default(), None) };
/// let record = CountRecord::from_run(&run(&request, &Hooks::default()).unwrap(), true);
/// let parts = record.parts.unwrap();
/// let sum: u128 = parts.total.iter().map(|t| t.parse::<u128>().unwrap()).sum();
/// assert_eq!(sum.to_string(), record.total);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parts {
    /// Solutions of each subtask.
    pub total: Vec<String>,
    /// Fundamental solutions of each subtask, with `--unique`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<Vec<String>>,
}

impl CountRecord {
    /// The record of a finished count (of a whole plan of `c.subtasks` subtasks).
    pub fn new(c: &Counts) -> CountRecord {
        let secs = c.elapsed.as_secs_f64();
        CountRecord {
            schema_version: SCHEMA_VERSION,
            n: c.n,
            total: c.total.to_string(),
            unique: c.unique.map(|u| u.to_string()),
            threads: c.threads,
            engine: c.engine,
            kernel: c.kernel.name().into(),
            device: c.device.clone(),
            gpu_subtasks: c.gpu_subtasks,
            gpu_items: c.gpu_items,
            gpu_dispatches: c.gpu_dispatches,
            gpu_given_up: c.gpu_given_up,
            elapsed_s: secs,
            subtasks: c.subtasks,
            resumed_subtasks: 0,
            plan_subtasks: c.subtasks,
            split_depth: c.split_depth,
            plan_digest: Some(c.plan_digest.clone()),
            prefix: None,
            nodes: c.nodes.to_string(),
            searched_nodes: Some(c.searched_nodes.to_string()),
            nodes_per_s: rate(c.searched_nodes, secs),
            largest_subtask_share: c.largest_subtask_share,
            complete: true,
            peak_memory_bytes: c.peak_memory,
            tables_bytes: c.tables_bytes,
            shard: None,
            parts: None,
            device_choice: c.device_choice,
            missing_shards: None,
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// The record of a run. A run sharded on purpose shows its shard and what each of its
    /// subtasks found, so that `merge` can check the shard's sum and recount samples of it.
    pub fn from_run(outcome: &RunOutcome, show_shard: bool) -> CountRecord {
        let run = &outcome.identity;
        let parts = show_shard.then(|| Parts {
            total: outcome.parts.iter().map(|p| p.total.to_string()).collect(),
            unique: run
                .unique
                .then(|| outcome.parts.iter().map(|p| p.unique.to_string()).collect()),
        });
        CountRecord {
            resumed_subtasks: outcome.resumed_subtasks,
            plan_subtasks: run.plan_subtasks,
            plan_digest: Some(run.plan_digest.clone()),
            prefix: run
                .prefix
                .as_ref()
                .map(|p| p.iter().map(|c| c + 1).collect()),
            shard: show_shard.then_some(outcome.shard),
            parts,
            ..CountRecord::new(&outcome.counts)
        }
    }

    /// The record as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record of strings and numbers always serialises")
    }
}

/// The plain output: `TOTAL`, or `TOTAL UNIQUE` when fundamental solutions were counted.
///
/// ```
/// assert_eq!(nqueens::export::count::plain_line(92, Some(12)), "92 12");
/// assert_eq!(nqueens::export::count::plain_line(92, None), "92");
/// ```
pub fn plain_line(total: u128, unique: Option<u128>) -> String {
    match unique {
        Some(u) => format!("{total} {u}"),
        None => total.to_string(),
    }
}

impl Counts {
    /// The `--stats` line for stderr.
    ///
    /// ```
    /// let c = nqueens::count(8, &nqueens::CountOptions::default()).unwrap();
    /// let line = c.stats_line();
    /// assert!(line.starts_with("n=8 elapsed=") && line.contains(" engine=d4 "));
    /// ```
    pub fn stats_line(&self) -> String {
        let c = self;
        let secs = c.elapsed.as_secs_f64();
        let rate = rate(c.searched_nodes, secs);
        format!(
            "n={} elapsed={:.3}s engine={} kernel={} device={} gpu_subtasks={} gpu_share={:.1}% gpu_items={} gpu_dispatches={} gpu_given_up={} threads={} subtasks={} split_depth={} nodes={} nodes/s={:.3e} largest_subtask={:.4}% peak_memory={}",
            c.n,
            secs,
            c.engine.name(),
            c.kernel.name(),
            c.device,
            c.gpu_subtasks,
            if c.subtasks > 0 {
                100.0 * c.gpu_subtasks as f64 / c.subtasks as f64
            } else {
                0.0
            },
            c.gpu_items,
            c.gpu_dispatches,
            c.gpu_given_up,
            c.threads,
            c.subtasks,
            c.split_depth,
            c.nodes,
            rate,
            100.0 * c.largest_subtask_share,
            c.peak_memory
                .map_or("unknown".into(), |b| format!("{:#.1}", Bytes(b)))
        ) + &c
            .tables_bytes
            .map_or(String::new(), |b| format!(" tables={:#.1}", Bytes(b)))
            + &c.device_choice.map_or(String::new(), |r| {
                format!(
                    " device_choice={} race_shards={} race_cpu_s={:.3} race_gpu_s={:.3} race_gpu_finished={}{}",
                    r.chose.name(),
                    r.shards,
                    r.cpu_s,
                    r.gpu_s,
                    r.gpu_finished,
                    if r.forced { " race_forced=true" } else { "" }
                )
            })
    }
}

fn cpu() -> String {
    "cpu".into()
}

/// Nodes per second, 0 when no time passed.
fn rate(nodes: u128, secs: f64) -> f64 {
    if secs > 0.0 {
        nodes as f64 / secs
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use std::time::Duration;

    fn counts() -> Counts {
        Counts {
            n: 8,
            total: 92,
            unique: Some(12),
            nodes: 1000,
            searched_nodes: 500,
            subtasks: 4,
            largest_subtask_share: 0.25,
            split_depth: 2,
            engine: Engine::D4,
            kernel: Kernel::Scalar,
            threads: 2,
            device: "cpu".into(),
            gpu_subtasks: 0,
            gpu_items: 0,
            gpu_dispatches: 0,
            gpu_given_up: 0,
            plan_digest: "0badcafe".into(),
            tables_bytes: None,
            elapsed: Duration::from_millis(250),
            peak_memory: Some(3 << 20),
            notes: Vec::new(),
            device_choice: None,
        }
    }

    #[test]
    fn the_stats_line_is_exact() {
        assert_eq!(
            counts().stats_line(),
            "n=8 elapsed=0.250s engine=d4 kernel=scalar device=cpu gpu_subtasks=0 gpu_share=0.0% \
             gpu_items=0 gpu_dispatches=0 gpu_given_up=0 threads=2 subtasks=4 split_depth=2 nodes=1000 nodes/s=2.000e3 largest_subtask=25.0000% \
             peak_memory=3.0MiB"
        );
    }

    #[test]
    fn the_json_record_is_exact_and_reads_back() {
        let mut record = CountRecord::new(&counts());
        record.version = "0.0.0".into();
        let json = record.to_json();
        assert_eq!(
            json,
            r#"{"schema_version":1,"n":8,"total":"92","unique":"12","threads":2,"engine":"d4","kernel":"scalar","device":"cpu","gpu_subtasks":0,"gpu_items":0,"gpu_dispatches":0,"gpu_given_up":0,"elapsed_s":0.25,"subtasks":4,"resumed_subtasks":0,"plan_subtasks":4,"split_depth":2,"plan_digest":"0badcafe","nodes":"1000","searched_nodes":"500","nodes_per_s":2000.0,"largest_subtask_share":0.25,"complete":true,"peak_memory_bytes":3145728,"version":"0.0.0"}"#
        );
        assert_eq!(serde_json::from_str::<CountRecord>(&json).unwrap(), record);
    }
}
