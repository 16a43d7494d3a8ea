//! The quadrant engine on GPUs: CPU threads take units one at a time, as on the CPU, and
//! build each unit's halves and sieves; the pair count of each loaded sieve, nearly all of a
//! unit's work, goes to the thread's GPU ([`crate::gpu::Gpu::count_clashes`]). With `share`,
//! a thread whose GPU already has [`MOST_IN_FLIGHT`] counts on it counts its pairs on the
//! CPU instead; a sieve larger than the GPU binds is counted on the CPU and said.
//!
//! The plan, its units and their results are the CPU's: a unit's count does not say which
//! device counted its pairs, so shards, checkpoints and `merge` take it as any other.
//!
//! Trust: before its first unit, a GPU counts every unit of N = [`CHECK_N`] and must agree
//! with the CPU ([`check_pairs`]); then every dispatch is spot-checked before its count is
//! used: the clashes of its first pattern and of every [`SPOT_EVERY`]th pattern the GPUs
//! count, against the same patterns worked out on the CPU. At the first disagreement the
//! GPUs are dropped, that sieve and the rest are counted on the CPU, and the run notes the
//! device and both counts. What earlier passing checks vouched for stays.

use super::contract::{Executed, Executor, Facts, FirstFailure, Job};
use crate::error::Error;
use crate::gpu::Gpu;
use crate::parallel::{lock, Workers};
use crate::quadrant::{Layout, PairDevice, PairKernel, PairWork};
use crate::subtask::Kernels;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Counts a GPU holds at once when the CPU threads share its work: one counting, one
/// waiting behind it, so that it never idles while a thread builds the next sieve.
const MOST_IN_FLIGHT: usize = 2;

/// Patterns between two spot checks: besides each dispatch's first, every 4096th pattern the
/// GPUs count is worked out again on the CPU (its reached blocks, the same tables): about
/// 1/4000 of the GPU's work.
const SPOT_EVERY: u64 = 4096;

/// The board of the pair kernel's known-answer check, before a GPU counts a unit: its 462
/// units (252 sieves) take milliseconds, even on lavapipe.
const CHECK_N: usize = 12;

/// Counts every unit of N = [`CHECK_N`] with `gpu`'s pair kernel and on the CPU's loops
/// `pairs`: what differs, if anything does.
pub(super) fn check_pairs(gpu: &Gpu, pairs: PairKernel) -> Result<(), String> {
    let layout = Layout::new(CHECK_N);
    let never = AtomicBool::new(false);
    let mut differ = 0;
    for id in 0..layout.len() {
        let on_cpu = layout.count_unit_on(id, (pairs, None), &never);
        let on_gpu = layout.count_unit_on(id, (pairs, Some(&OnGpu(gpu))), &never);
        match (on_cpu, on_gpu) {
            (Ok(cpu), Ok(gpu)) if cpu == gpu => {}
            (_, Err(e)) | (Err(e), _) => return Err(e.to_string()),
            _ => differ += 1,
        }
    }
    match differ {
        0 => Ok(()),
        _ => Err(format!(
            "{differ} of {} units of N = {CHECK_N} differ from the CPU's count",
            layout.len()
        )),
    }
}

/// Every sieve's pairs on one GPU, as they come.
struct OnGpu<'a>(&'a Gpu);

impl PairDevice for OnGpu<'_> {
    fn disjoint(
        &self,
        work: &PairWork,
        on_cpu: &mut dyn FnMut() -> Option<u64>,
    ) -> Result<Option<u64>, Error> {
        Ok(match self.0.count_clashes(work)? {
            Some(clashes) => work
                .visited
                .checked_sub(clashes.iter().map(|&c| u64::from(c)).sum()),
            None => on_cpu(),
        })
    }
}

/// GPUs, and the CPU threads that feed them (and, with `share`, count beside them).
pub(crate) struct QuadrantOnGpus {
    pub gpus: Vec<Arc<Gpu>>,
    pub share: bool,
    pub workers: Workers,
    pub kernels: Kernels,
    /// What the executions said: GPUs dropped, sieves too large for them.
    pub notes: Mutex<Vec<String>>,
    /// The dispatch (by its number among the run's) whose first count the tests make wrong.
    #[cfg(test)]
    pub lie_at: Option<u64>,
}

/// What every thread of one execution shares.
struct Shared<'a> {
    gpus: &'a [Arc<Gpu>],
    share: bool,
    /// Counts in flight on each GPU.
    in_flight: Vec<AtomicUsize>,
    /// Set once a GPU disagreed with a check: every thread counts on the CPU from then on.
    dropped: AtomicBool,
    dispatches: AtomicU64,
    /// Patterns the GPUs counted (what the spot checks are spaced by).
    patterns: AtomicU64,
    /// Sieves counted on the CPU because a GPU could not hold them.
    too_large: AtomicU64,
    notes: &'a Mutex<Vec<String>>,
    #[cfg(test)]
    lie_at: Option<u64>,
}

/// One thread's GPU, and the dispatches it made there.
struct Feed<'a> {
    shared: &'a Shared<'a>,
    gpu: usize,
    dispatched: Cell<u64>,
}

impl PairDevice for Feed<'_> {
    fn disjoint(
        &self,
        work: &PairWork,
        on_cpu: &mut dyn FnMut() -> Option<u64>,
    ) -> Result<Option<u64>, Error> {
        let shared = self.shared;
        if shared.dropped.load(Ordering::Relaxed) {
            return Ok(on_cpu());
        }
        let in_flight = &shared.in_flight[self.gpu];
        if shared.share && in_flight.load(Ordering::Relaxed) >= MOST_IN_FLIGHT {
            return Ok(on_cpu());
        }
        let gpu = &shared.gpus[self.gpu];
        in_flight.fetch_add(1, Ordering::Relaxed);
        let clashes = gpu.count_clashes(work);
        in_flight.fetch_sub(1, Ordering::Relaxed);
        let Some(mut clashes) = clashes? else {
            shared.too_large.fetch_add(1, Ordering::Relaxed);
            return Ok(on_cpu());
        };
        let dispatch = shared.dispatches.fetch_add(1, Ordering::Relaxed);
        self.dispatched.set(self.dispatched.get() + 1);
        #[cfg(test)]
        if shared.lie_at == Some(dispatch) && !clashes.is_empty() {
            clashes[0] += 1;
        }
        #[cfg(not(test))]
        let _ = (dispatch, &mut clashes);
        let len = clashes.len() as u64;
        let first = shared.patterns.fetch_add(len, Ordering::Relaxed);
        let spaced = (first.next_multiple_of(SPOT_EVERY) - first..len).step_by(SPOT_EVERY as usize);
        let checked = std::iter::once(0).chain(spaced).filter(|&i| i < len);
        let wrong = checked
            .map(|i| i as usize)
            .find(|&i| clashes[i] != work.clashes_of(i));
        let sum: u64 = clashes.iter().map(|&c| u64::from(c)).sum();
        let counted = work.visited.checked_sub(sum);
        match (wrong, counted) {
            (None, Some(counted)) => Ok(Some(counted)),
            _ => {
                let what = match wrong {
                    Some(i) => format!(
                        "{} clashes of a pattern, the CPU's {}",
                        clashes[i],
                        work.clashes_of(i)
                    ),
                    None => format!("{sum} clashes of {} pairs", work.visited),
                };
                self.drop_gpus(gpu, &what);
                Ok(on_cpu())
            }
        }
    }
}

impl Feed<'_> {
    /// Drops the GPUs after `gpu` counted `what` wrong.
    fn drop_gpus(&self, gpu: &Gpu, what: &str) {
        if !self.shared.dropped.swap(true, Ordering::Relaxed) {
            lock(self.shared.notes).push(format!(
                "the GPU {} disagreed with a spot check ({what}): it was dropped, and that count and the rest were counted on the CPU",
                gpu.identify()
            ));
        }
    }
}

impl Executor for QuadrantOnGpus {
    fn execute(&self, job: Job) -> Result<Executed, Error> {
        let layout = job.plan.quadrant_layout().expect("a quadrant plan");
        let shared = Shared {
            gpus: &self.gpus,
            share: self.share,
            in_flight: self.gpus.iter().map(|_| AtomicUsize::new(0)).collect(),
            dropped: AtomicBool::new(false),
            dispatches: AtomicU64::new(0),
            patterns: AtomicU64::new(0),
            too_large: AtomicU64::new(0),
            notes: &self.notes,
            #[cfg(test)]
            lie_at: self.lie_at,
        };
        let next = AtomicUsize::new(0);
        let failure = FirstFailure::default();
        let workers = self.workers.at_most(job.ids.len());
        let counted = workers.run(|thread| {
            let feed = Feed {
                shared: &shared,
                gpu: thread % self.gpus.len(),
                dispatched: Cell::new(0),
            };
            let pairs = (self.kernels.pairs, Some(&feed as &dyn PairDevice));
            let (mut counted, mut on_gpu) = (0usize, 0usize);
            loop {
                let _turn = workers.turn();
                if job.cancel.load(Ordering::Relaxed) || failure.failed() {
                    break;
                }
                let Some(&id) = job.ids.get(next.fetch_add(1, Ordering::Relaxed)) else {
                    break;
                };
                let before = feed.dispatched.get();
                match layout.count_unit_on(id, pairs, job.cancel) {
                    Ok(Some(found)) => {
                        (job.done)(id, found);
                        counted += 1;
                        on_gpu += usize::from(feed.dispatched.get() > before);
                    }
                    Ok(None) => break,
                    Err(e) => failure.fail(e),
                }
            }
            (counted, on_gpu)
        })?;
        failure.check()?;
        let too_large = shared.too_large.load(Ordering::Relaxed);
        if too_large > 0 {
            lock(&self.notes).push(format!(
                "{too_large} of the units' sieves were larger than the GPU binds and were counted on the CPU"
            ));
        }
        if counted.iter().map(|c| c.0).sum::<usize>() < job.ids.len() {
            return Err(Error::Interrupted);
        }
        let dispatches = shared.dispatches.load(Ordering::Relaxed);
        Ok(Executed {
            gpu_subtasks: counted.iter().map(|c| c.1).sum(),
            gpu_items: dispatches,
            gpu_dispatches: dispatches,
            gpu_items_given_up: too_large,
        })
    }

    fn facts(&self) -> Facts {
        Facts {
            kernel: self.kernels.reported(),
            threads: self.workers.count(),
            device: super::gpu::describe(&self.gpus),
            notes: lock(&self.notes).clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineChoice;
    use crate::execute::cpu::Cpu;
    use crate::found::Found;
    use crate::kernel::KernelChoice;
    use crate::memory::Budget;
    use crate::plan::Plan;

    /// The GPUs of the test machine, or `None` (then the test is skipped, unless CI asks for
    /// a GPU).
    fn gpus() -> Option<Vec<Arc<Gpu>>> {
        let found = crate::gpu::open(None, true).ok();
        assert!(
            found.is_some() || std::env::var_os("NQUEENS_REQUIRE_GPU").is_none(),
            "NQUEENS_REQUIRE_GPU is set but no GPU adapter is usable"
        );
        found
    }

    fn workers() -> Workers {
        Workers::new(2, false).unwrap()
    }

    fn on_gpus(gpus: &[Arc<Gpu>], plan: &Plan, lie_at: Option<u64>) -> QuadrantOnGpus {
        QuadrantOnGpus {
            gpus: gpus.to_vec(),
            share: false,
            workers: workers(),
            kernels: Kernels::resolve(plan, KernelChoice::Auto).unwrap(),
            notes: Mutex::default(),
            lie_at,
        }
    }

    fn on_cpu(plan: &Plan) -> Cpu {
        Cpu {
            workers: workers(),
            kernels: Kernels::resolve(plan, KernelChoice::Auto).unwrap(),
        }
    }

    /// Units `ids` of `plan` on `executor`, in the order of `ids`, and what it reported.
    fn count_ids(executor: &dyn Executor, plan: &Plan, ids: &[usize]) -> (Vec<Found>, Executed) {
        let found = Mutex::new(vec![None; plan.len()]);
        let stop = AtomicBool::new(false);
        let executed = executor
            .execute(Job {
                plan,
                ids,
                unique: false,
                cancel: &stop,
                done: &|id, f| {
                    let mut found = found.lock().unwrap();
                    assert!(found[id].is_none(), "unit {id} handed in twice");
                    found[id] = Some(f);
                },
            })
            .unwrap();
        let found = found.into_inner().unwrap();
        let each = ids
            .iter()
            .map(|&id| found[id].expect("handed in"))
            .collect();
        (each, executed)
    }

    #[test]
    fn every_unit_of_14_to_18_counts_alike_on_the_gpu_and_the_cpu() {
        let Some(gpus) = gpus() else {
            return;
        };
        for n in 14..=18 {
            let plan = Plan::new(n, EngineChoice::Quadrant, None, None).unwrap();
            let ids: Vec<usize> = (0..plan.len()).collect();
            let gpu = on_gpus(&gpus, &plan, None);
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            let (cpu, _) = count_ids(&on_cpu(&plan), &plan, &ids);
            for (id, (gpu, cpu)) in on_gpu.iter().zip(&cpu).enumerate() {
                assert_eq!(gpu, cpu, "n = {n}, unit {id}");
            }
            assert!(
                executed.gpu_dispatches > 0 && executed.gpu_subtasks > 0,
                "n = {n}"
            );
            assert!(gpu.facts().notes.is_empty(), "{:?}", gpu.facts().notes);
        }
    }

    #[test]
    fn random_units_of_19_to_23_count_alike_on_the_gpu_and_the_cpu() {
        let Some(gpus) = gpus() else {
            return;
        };
        let mut next = crate::kernel::xorshift(0x2545_F491_4F6C_DD1D);
        for n in 19..=23 {
            let plan = Plan::new(n, EngineChoice::Quadrant, None, None).unwrap();
            let layout = plan.quadrant_layout().unwrap();
            let mut ids = Vec::new();
            while ids.len() < 3 {
                let id = (next() % layout.len() as u64) as usize;
                if !layout.counts_nothing(id) && !ids.contains(&id) {
                    ids.push(id);
                }
            }
            // a few units: their tables a row set at a time, as a shard's
            let never = AtomicBool::new(false);
            let budget = Budget::asked(u64::MAX);
            let prepared = layout.prepare(budget, ids.len(), (&Workers::this_thread(), 2), &never);
            prepared.unwrap().unwrap();
            let gpu = on_gpus(&gpus, &plan, None);
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            let (cpu, _) = count_ids(&on_cpu(&plan), &plan, &ids);
            assert_eq!(on_gpu, cpu, "n = {n}, units {ids:?}");
            assert!(executed.gpu_dispatches >= ids.len() as u64, "n = {n}");
        }
    }

    #[test]
    fn a_gpu_that_disagrees_with_a_spot_check_is_dropped_and_the_cpu_counts_on() {
        let Some(gpus) = gpus() else {
            return;
        };
        let plan = Plan::new(15, EngineChoice::Quadrant, None, None).unwrap();
        let ids: Vec<usize> = (0..plan.len()).collect();
        let (cpu, _) = count_ids(&on_cpu(&plan), &plan, &ids);
        // every dispatch's first pattern is checked: the lie is found where it is told
        for lie_at in [0, 40] {
            let gpu = on_gpus(&gpus, &plan, Some(lie_at));
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            assert_eq!(on_gpu, cpu, "lie at {lie_at}");
            let notes = gpu.facts().notes;
            assert!(
                notes.len() == 1 && notes[0].contains("disagreed with a spot check"),
                "{notes:?}"
            );
            // the threads stop taking the GPU once one of them found it wrong
            assert!(executed.gpu_dispatches <= lie_at + 2, "{executed:?}");
        }
        // no lie: every check passes, nothing is dropped
        let gpu = on_gpus(&gpus, &plan, None);
        assert_eq!(count_ids(&gpu, &plan, &ids).0, cpu);
        assert!(gpu.facts().notes.is_empty());
    }
}
