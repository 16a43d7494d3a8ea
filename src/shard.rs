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
/// use nqueens::Shard;
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
    /// Slurm job arrays: `SLURM_ARRAY_TASK_ID` with `SLURM_ARRAY_TASK_COUNT`, counted from
    /// `SLURM_ARRAY_TASK_MIN` in steps of `SLURM_ARRAY_TASK_STEP` when the array does not
    /// run 0, 1, 2, ... Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` with `NQUEENS_SHARDS`.
    /// An index without its count, or a count without its index, is refused: it would
    /// silently count the whole board; so are Slurm's and Kubernetes' variables when both
    /// are set and select different shards. A variable set to nothing is unset.
    ///
    /// ```
    /// use nqueens::Shard;
    /// let env = |pairs: &'static [(&str, &str)]| {
    ///     move |name: &str| pairs.iter().find(|p| p.0 == name).map(|p| p.1.to_string())
    /// };
    /// let slurm = env(&[("SLURM_ARRAY_TASK_ID", "6"), ("SLURM_ARRAY_TASK_COUNT", "4"),
    ///                   ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_STEP", "2")]);
    /// assert_eq!(Shard::from_env(slurm).unwrap(), Some(Shard::new(3, 4).unwrap()));
    /// assert!(Shard::from_env(env(&[("SLURM_ARRAY_TASK_ID", "1")])).is_err());
    /// assert_eq!(Shard::from_env(env(&[])).unwrap(), None);
    /// ```
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Shard>, Error> {
        let var = |name: &str| crate::environment::set(&var, name);
        let number =
            |name: &str| -> Result<Option<usize>, Error> {
                match var(name) {
                    None => Ok(None),
                    Some(v) => v.trim().parse().map(Some).map_err(|_| {
                        Error::BadShardEnv(format!("{name}={v} is not a whole number"))
                    }),
                }
            };
        let without = |index: &str, count: &str| {
            Error::BadShardEnv(format!(
                "{index} is set but {count} is not: set both to count one shard"
            ))
        };
        let slurm = match (
            number("SLURM_ARRAY_TASK_ID")?,
            number("SLURM_ARRAY_TASK_COUNT")?,
        ) {
            (Some(id), Some(count)) => {
                let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
                let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
                if step == 0 {
                    return Err(Error::BadShardEnv(
                        "SLURM_ARRAY_TASK_STEP=0: an array's step is at least 1".into(),
                    ));
                }
                let offset = id.checked_sub(min).ok_or_else(|| {
                    Error::BadShardEnv(format!(
                        "SLURM_ARRAY_TASK_ID={id} is below SLURM_ARRAY_TASK_MIN={min}"
                    ))
                })?;
                if offset % step != 0 {
                    return Err(Error::BadShardEnv(format!(
                        "SLURM_ARRAY_TASK_ID={id} is not SLURM_ARRAY_TASK_MIN={min} plus a multiple of SLURM_ARRAY_TASK_STEP={step}"
                    )));
                }
                let shard = Shard::new(offset / step, count).map_err(|_| {
                    Error::BadShardEnv(format!(
                        "SLURM_ARRAY_TASK_ID={id} is task {} of an array of SLURM_ARRAY_TASK_COUNT={count} tasks (from SLURM_ARRAY_TASK_MIN={min} in steps of {step}): the task count is too small",
                        offset / step
                    ))
                })?;
                Some(shard)
            }
            (Some(_), None) => {
                return Err(without("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT"))
            }
            (None, Some(_)) => {
                return Err(without("SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_ID"))
            }
            (None, None) => None,
        };
        let kubernetes = match (number("JOB_COMPLETION_INDEX")?, number("NQUEENS_SHARDS")?) {
            (Some(index), Some(count)) => Some(Shard::new(index, count).map_err(|_| {
                Error::BadShardEnv(format!(
                    "JOB_COMPLETION_INDEX={index} is not a shard of NQUEENS_SHARDS={count}"
                ))
            })?),
            (Some(_), None) => return Err(without("JOB_COMPLETION_INDEX", "NQUEENS_SHARDS")),
            (None, Some(_)) => return Err(without("NQUEENS_SHARDS", "JOB_COMPLETION_INDEX")),
            (None, None) => None,
        };
        match (slurm, kubernetes) {
            (Some(s), Some(k)) if s != k => Err(Error::BadShardEnv(format!(
                "Slurm's array variables select shard {s} and Kubernetes' JOB_COMPLETION_INDEX with NQUEENS_SHARDS shard {k}: unset one, or give --shard"
            ))),
            (Some(s), _) => Ok(Some(s)),
            (None, k) => Ok(k),
        }
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
