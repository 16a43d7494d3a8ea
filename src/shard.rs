//! Shards: disjoint, balanced slices of a plan's subtasks for runs on many machines.
//!
//! Shard `I` of `M` takes the subtasks whose id is `I` modulo `M`. Subtask costs vary with
//! their position (left-hand prefixes are heavier), so dealing by stride balances the shards
//! where contiguous blocks would not.

use crate::error::Error;
use std::fmt;
use std::str::FromStr;

/// Shard `index` (0-based) of `count`.
///
/// ```
/// use nqueens::shard::Shard;
/// let s: Shard = "1/3".parse().unwrap();
/// assert_eq!(s.ids(8).collect::<Vec<_>>(), vec![1, 4, 7]);
/// assert!("3/3".parse::<Shard>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Shard {
    /// 0-based shard index, below `count`.
    pub index: usize,
    /// Number of shards, at least 1.
    pub count: usize,
}

impl Shard {
    /// The whole run as a single shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// A shard, checked.
    pub fn new(index: usize, count: usize) -> Result<Shard, Error> {
        if count == 0 || index >= count {
            return Err(Error::BadShard(format!(
                "shard {index}/{count}: the index must be below the shard count, which must be at least 1"
            )));
        }
        Ok(Shard { index, count })
    }

    /// The subtask ids of this shard among `subtasks`, in order.
    pub fn ids(self, subtasks: usize) -> impl Iterator<Item = usize> {
        (self.index..subtasks).step_by(self.count)
    }

    /// Number of subtasks of this shard among `subtasks`.
    pub fn len(self, subtasks: usize) -> usize {
        subtasks.saturating_sub(self.index).div_ceil(self.count)
    }

    /// Position of `id` within the shard (ids of the shard are `index + k * count`).
    pub fn local(self, id: usize) -> usize {
        (id - self.index) / self.count
    }

    /// The id at position `k` within the shard.
    pub fn global(self, k: usize) -> usize {
        self.index + k * self.count
    }

    /// The shard that a batch scheduler's environment selects, if any.
    ///
    /// Slurm job arrays: `SLURM_ARRAY_TASK_ID` with `SLURM_ARRAY_TASK_COUNT` (and
    /// `SLURM_ARRAY_TASK_MIN` when the array does not start at 0). Kubernetes Indexed Jobs:
    /// `JOB_COMPLETION_INDEX` with `NQUEENS_SHARDS`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Shard>, Error> {
        let number = |name: &str| -> Result<Option<usize>, Error> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| Error::BadShard(format!("{name}={v} is not a whole number"))),
            }
        };
        if let (Some(id), Some(count)) = (
            number("SLURM_ARRAY_TASK_ID")?,
            number("SLURM_ARRAY_TASK_COUNT")?,
        ) {
            let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
            let index = id.checked_sub(min).ok_or_else(|| {
                Error::BadShard(format!(
                    "SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}"
                ))
            })?;
            return Shard::new(index, count).map(Some);
        }
        if let (Some(index), Some(count)) =
            (number("JOB_COMPLETION_INDEX")?, number("NQUEENS_SHARDS")?)
        {
            return Shard::new(index, count).map(Some);
        }
        Ok(None)
    }
}

impl FromStr for Shard {
    type Err = Error;

    fn from_str(s: &str) -> Result<Shard, Error> {
        let bad = || Error::BadShard(format!("'{s}' is not a shard I/M with 0 <= I < M"));
        let (i, m) = s.split_once('/').ok_or_else(bad)?;
        let i = i.trim().parse().map_err(|_| bad())?;
        let m = m.trim().parse().map_err(|_| bad())?;
        Shard::new(i, m).map_err(|_| bad())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}
