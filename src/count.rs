//! Counting solutions: the library's main entry points, runs of the pipeline ([`crate::run()`]).

use crate::counts::Counts;
use crate::error::Error;
use crate::options::CountOptions;
use crate::plan::Plan;
use crate::run::{run, Hooks, RunSettings};

/// Counts the solutions of the N-Queens problem on an `n`×`n` board.
///
/// ```
/// use nqueens::{count, CountOptions};
/// let opts = CountOptions { unique: true, ..CountOptions::default() };
/// let c = count(8, &opts).unwrap();
/// assert_eq!((c.total, c.unique), (92, Some(12)));
/// assert!(count(33, &opts).is_err());
/// ```
pub fn count(n: usize, opts: &CountOptions) -> Result<Counts, Error> {
    let settings = RunSettings::new(n, opts.clone(), None);
    Ok(run(&settings, &Hooks::default())?.counts)
}

/// Counts the completions of the first rows `prefix` (0-based columns), without symmetry.
///
/// ```
/// use nqueens::{count_completions, CountOptions};
/// // 8x8: four solutions have their first queen in the corner, one of them "1 5 ..."
/// let opts = CountOptions::default();
/// assert_eq!(count_completions(8, &[0], &opts).unwrap().total, 4);
/// assert_eq!(count_completions(8, &[0, 4], &opts).unwrap().total, 1);
/// assert!(count_completions(8, &[0, 1], &CountOptions::default()).is_err());
/// ```
pub fn count_completions(n: usize, prefix: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    let settings = RunSettings::new(n, opts.clone(), Some(prefix.to_vec()));
    Ok(run(&settings, &Hooks::default())?.counts)
}

/// Counts the subtasks `ids` of `plan`: a slice of a plan cut by hand (shards cut it by
/// stride, see [`crate::run::RunSettings::shard`]).
///
/// ```
/// use nqueens::{EngineChoice, Plan};
/// use nqueens::{count_subtasks, CountOptions};
/// let plan = Plan::new(8, EngineChoice::Mirror, None, Some(2)).unwrap();
/// let (evens, odds): (Vec<usize>, Vec<usize>) = (0..plan.len()).partition(|id| id % 2 == 0);
/// let opts = CountOptions::default();
/// let total = count_subtasks(&plan, &evens, &opts).unwrap().total
///     + count_subtasks(&plan, &odds, &opts).unwrap().total;
/// assert_eq!(total, 92);
/// ```
pub fn count_subtasks(plan: &Plan, ids: &[usize], opts: &CountOptions) -> Result<Counts, Error> {
    Ok(crate::run::recount(plan, ids, opts)?.0)
}
