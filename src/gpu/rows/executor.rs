//! The GPU executor: every GPU of the run is fed items cut from subtasks taken at the front
//! of one list, while CPU threads count the subtasks no GPU takes and then take subtasks
//! from the back of the same list.

use crate::error::Error;
use crate::execute::contract::{Done, Executed, Executor, Facts, FirstFailure, Job};
use crate::found::Found;
use crate::gpu::rows::dispatch::{Flight, RowCounter, RowGpu};
use crate::gpu::rows::items::ItemCount;
use crate::gpu::rows::items::{as_raw, kind_of, Cut, Item, Kind};
use crate::gpu::rows::ledger::Ledger;
use crate::gpu::trust::dropped;
use crate::parallel::{lock, Workers, NO_SPARE};
use crate::plan::{Plan, Rows};
use crate::subtask::{Kernels, Raw};
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How many items a dispatch holds. Later dispatches double while they take under [`FAST`]
/// and halve past [`SLOW`], for Ctrl-C, progress and checkpoints, but never hold fewer than
/// the adapter's fewest ([`dispatch_sizes`]): a dispatch that is long even then has long
/// items, which only items of fewer rows would shorten ([`crate::gpu::rows::items::item_rows`]).
const MOST_ITEMS: usize = 1 << 23;
const FAST: Duration = Duration::from_millis(50);
const SLOW: Duration = Duration::from_millis(250);
/// Items per lane a GPU's dispatch holds at least (see [`dispatch_sizes`]).
const ITEMS_PER_LANE: usize = 4;

/// The items of an adapter's first dispatch, and the fewest of any: on a GPU both four per
/// lane. A dispatch lasts at least as long as its longest item, so halving it below a few
/// items per lane only idles the GPU (docs/benchmarks.md, "The GPU code's choices"). A
/// CPU-emulated adapter runs its invocations a few at a time, so none idles there: its
/// dispatches start at a few thousand items and may shrink to a thousand.
fn dispatch_sizes(software: bool, lanes: usize) -> (usize, usize) {
    if software {
        (1 << 12, 1 << 10)
    } else {
        (ITEMS_PER_LANE * lanes, ITEMS_PER_LANE * lanes)
    }
}

/// The items of the dispatch after one of `items` that took `took`, by the rule of
/// [`MOST_ITEMS`], never fewer than `fewest`.
fn next_items(items: usize, took: Duration, fewest: usize) -> usize {
    if took < FAST {
        (items * 2).min(MOST_ITEMS)
    } else if took > SLOW {
        (items / 2).max(fewest)
    } else {
        items
    }
}

/// Items between two spot checks: the first item the kernel counted in every dispatch and
/// every 4096th item a GPU counts are counted again on the CPU: about 1/4000 of its work,
/// a tenth of a core beside a fast GPU.
const SPOT_EVERY: u64 = 4096;

/// GPUs and CPU worker threads.
pub(crate) struct WithGpu {
    pub gpus: Vec<Arc<dyn RowCounter>>,
    /// Whether the CPU threads also take the GPUs' subtasks (from the back of the list).
    pub share: bool,
    pub workers: Workers,
    pub kernels: Kernels,
    /// Node count at which the kernel gives an item up to the CPU
    /// ([`crate::gpu::rows::dispatch::DROPPED`]; lower in tests, to exercise the CPU's recount).
    pub drop_at: u32,
    /// What the executions said of GPUs dropped for a wrong count.
    pub dropped: Mutex<Vec<String>>,
}

/// The GPUs' subtasks not yet taken (positions in their list): GPUs take from the front,
/// CPU threads from the back while the GPUs would not finish the rest sooner without them.
struct List {
    open: Mutex<Range<usize>>,
    started: Instant,
    /// Subtasks the GPUs handed in so far: their speed.
    by_gpus: AtomicUsize,
}

impl List {
    fn new(len: usize) -> List {
        List {
            open: Mutex::new(0..len),
            started: Instant::now(),
            by_gpus: AtomicUsize::new(0),
        }
    }

    fn take_front(&self) -> Option<usize> {
        let mut open = lock(&self.open);
        (!open.is_empty()).then(|| {
            open.start += 1;
            open.start - 1
        })
    }

    /// For a CPU thread that has taken `cpu_secs` per subtask so far (`None`: none yet). A
    /// thread that would still be counting when the GPUs have done all the rest takes none:
    /// near the end of a run on a fast GPU, the CPU would only make it later.
    fn take_back(&self, cpu_secs: Option<f64>) -> Option<usize> {
        let mut open = lock(&self.open);
        if open.is_empty() {
            return None;
        }
        let by_gpus = self.by_gpus.load(Ordering::Relaxed);
        if let (Some(cpu_secs), true) = (cpu_secs, by_gpus > 0) {
            let gpu_secs = self.started.elapsed().as_secs_f64() / by_gpus as f64;
            if open.len() as f64 * gpu_secs < cpu_secs {
                return None;
            }
        }
        open.end -= 1;
        Some(open.end)
    }
}

/// What one GPU counted.
#[derive(Default)]
struct Fed {
    subtasks: usize,
    items: u64,
    dispatches: u64,
    /// Items the kernel gave up, counted on the CPU.
    given_up: u64,
    /// Subtasks its feeder thread counted on the CPU once the GPU was dropped.
    on_cpu: usize,
    /// Why the GPU was dropped, if it was.
    dropped: Option<String>,
}

impl Executor for WithGpu {
    fn execute(&self, job: Job) -> Result<Executed, Error> {
        let (unique, cancel, done) = (job.unique, job.cancel, job.done);
        // the quadrant engine's units never reach a GPU: every one of them is the CPU's
        let rows = job.plan.rows();
        let (accel, cpu_only): (Vec<usize>, Vec<usize>) = job
            .ids
            .iter()
            .partition(|&&id| rows.is_some_and(|rows| kind_of(rows, id, unique).is_some()));
        let list = List::new(accel.len());
        let (fed, on_cpu) = std::thread::scope(|scope| {
            let feeders: Vec<_> = rows
                .into_iter()
                .flat_map(|rows| self.gpus.iter().map(move |gpu| (rows, gpu)))
                .map(|(rows, device)| {
                    let feeder = Feeder {
                        device: &**device,
                        plan: job.plan,
                        rows,
                        accel: &accel,
                        list: &list,
                        unique,
                        kernels: self.kernels,
                        drop_at: self.drop_at,
                        cancel,
                        done,
                    };
                    scope.spawn(move || feeder.run())
                })
                .collect();
            let on_cpu = self.cpu_side(job, &accel, &cpu_only, &list);
            let fed: Vec<Result<Fed, Error>> = feeders
                .into_iter()
                .map(|f| {
                    f.join()
                        .unwrap_or_else(|_| Err(Error::Failed("a GPU thread failed".into())))
                })
                .collect();
            (fed, on_cpu)
        });
        let mut on_cpu = on_cpu?;
        let mut executed = Executed::default();
        for f in fed {
            let f = f?;
            on_cpu += f.on_cpu;
            lock(&self.dropped).extend(f.dropped);
            executed.gpu_subtasks += f.subtasks;
            executed.gpu_items += f.items;
            executed.gpu_dispatches += f.dispatches;
            executed.gpu_items_given_up += f.given_up;
        }
        // a subtask left uncounted means the run was cut short
        if executed.gpu_subtasks + on_cpu < job.ids.len() {
            return Err(Error::Interrupted);
        }
        Ok(executed)
    }

    fn facts(&self) -> Facts {
        let gpus = self.gpus.iter().map(|gpu| gpu.row_gpu().device.describe());
        Facts::on_gpus((self.kernels, &self.workers), gpus, &self.dropped)
    }
}

impl WithGpu {
    /// The CPU threads: the subtasks no GPU takes, then (when sharing) the GPUs' from the
    /// back of their list. Returns how many they counted.
    fn cpu_side(
        &self,
        job: Job,
        accel: &[usize],
        cpu_only: &[usize],
        list: &List,
    ) -> Result<usize, Error> {
        let next = AtomicUsize::new(0);
        let failure = FirstFailure::default();
        let counted = self.workers.run(|_| {
            let (mut counted, mut shared, mut secs) = (0usize, 0u32, 0.0);
            loop {
                let _turn = self.workers.turn();
                if job.cancel.load(Ordering::Relaxed) || failure.failed() {
                    break;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let (id, from_list) = match cpu_only.get(k) {
                    Some(&id) => (id, false),
                    None if self.share => {
                        let per = (shared > 0).then(|| secs / f64::from(shared));
                        match list.take_back(per) {
                            Some(k) => (accel[k], true),
                            None => break,
                        }
                    }
                    None => break,
                };
                let started = Instant::now();
                let Some(found) = failure.count(&job, id, (self.kernels, &NO_SPARE)) else {
                    break;
                };
                if from_list {
                    shared += 1;
                    secs += started.elapsed().as_secs_f64();
                }
                (job.done)(id, found);
                counted += 1;
            }
            counted
        })?;
        failure.check()?;
        Ok(counted.into_iter().sum())
    }
}

/// One GPU's loop: cut subtasks from the front of the list into items, dispatch them (one
/// dispatch counting while the next is cut), fold the counts back into their subtasks and
/// hand each subtask in once all of it is counted.
///
/// Its counts are spot-checked ([`SPOT_EVERY`]) and a subtask is handed in only once a check
/// of its dispatch or a later one has passed: at the first disagreement the GPU is dropped,
/// every subtask it holds or counted since the last passing check is counted on the CPU,
/// and the feeder thread goes on counting the list's subtasks on the CPU.
struct Feeder<'a> {
    device: &'a dyn RowCounter,
    plan: &'a Plan,
    rows: &'a Rows,
    accel: &'a [usize],
    list: &'a List,
    unique: bool,
    kernels: Kernels,
    drop_at: u32,
    cancel: &'a AtomicBool,
    done: Done<'a>,
}

/// A spot check's disagreement: the item's number among the GPU's, and the two counts.
struct Disagreement {
    item: u64,
    gpu: Raw,
    cpu: Raw,
}

/// The items of one dispatch, per kind, with the slot of the subtask each belongs to.
#[derive(Default)]
struct Batch {
    items: [Vec<Item>; 2],
    slots: [Vec<u32>; 2],
}

impl Batch {
    fn len(&self) -> usize {
        self.items[0].len() + self.items[1].len()
    }
}

impl<'a> Feeder<'a> {
    /// The device this feeder counts on, with its kernels.
    fn gpu(&self) -> &'a RowGpu {
        self.device.row_gpu()
    }

    fn run(&self) -> Result<Fed, Error> {
        let frames = self.gpu().frames(self.rows)?;
        let mut fed = Fed::default();
        let mut ledger = Ledger::default();
        let mut cutting: Option<(u32, Kind, Cut<'a>)> = None;
        let (mut target, fewest) =
            dispatch_sizes(self.gpu().device.is_software(), self.gpu().lanes());
        let mut in_flight: Option<(Flight, Batch, Instant)> = None;
        let mut last_back = Instant::now();
        // subtasks counted and not yet vouched for by a passing spot check
        let mut held: Vec<(usize, Found)> = Vec::new();
        loop {
            let batch = if self.cancel.load(Ordering::Relaxed) {
                Batch::default()
            } else {
                self.cut(target, &mut ledger, &mut cutting, &mut fed)
            };
            let next = match batch.len() {
                0 => None,
                _ => {
                    let items = [batch.items[0].as_slice(), batch.items[1].as_slice()];
                    let flight =
                        self.gpu()
                            .launch(self.rows.n(), &frames, items, self.drop_at, 1)?;
                    Some((flight, batch, Instant::now()))
                }
            };
            if let Some((flight, batch, launched)) = in_flight.take() {
                let counts = self.device.wait(flight)?;
                let now = Instant::now();
                // the GPU worked on it from its launch or the previous one's end, if later
                let took = now - launched.max(last_back);
                last_back = now;
                target = next_items(target, took, fewest);
                let first = fed.items;
                fed.items += batch.len() as u64;
                fed.dispatches += 1;
                if let Err(wrong) = self.fold(
                    &batch,
                    counts,
                    first,
                    (&mut ledger, &mut held, &mut fed.given_up),
                ) {
                    if let Some((flight, _, _)) = next {
                        // its counts are not used: waited for only to leave the device idle
                        let _ = self.device.wait(flight);
                    }
                    return self.drop_gpu(wrong, &ledger, held, fed);
                }
                self.vouch(&mut held, &mut fed);
            }
            match next {
                Some(f) => in_flight = Some(f),
                None if in_flight.is_none() => break,
                None => {}
            }
        }
        Ok(fed)
    }

    /// Hands in the subtasks a passing spot check vouches for.
    fn vouch(&self, held: &mut Vec<(usize, Found)>, fed: &mut Fed) {
        for (id, found) in held.drain(..) {
            (self.done)(id, found);
            fed.subtasks += 1;
            self.list.by_gpus.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Drops the GPU after `wrong`: counts on the CPU every subtask it holds (`ledger`'s
    /// open ones, and `held`, counted since the last passing check), then the list's
    /// subtasks from the front, and says why.
    fn drop_gpu(
        &self,
        wrong: Disagreement,
        ledger: &Ledger,
        held: Vec<(usize, Found)>,
        mut fed: Fed,
    ) -> Result<Fed, Error> {
        let Disagreement { item, gpu, cpu } = wrong;
        let redone: Vec<usize> = held
            .iter()
            .map(|&(id, _)| id)
            .chain(ledger.open_ids())
            .collect();
        let what = format!(
            "the CPU on its item {item} counted again (solutions {}, nodes {} against {}, {})",
            gpu.solutions, gpu.nodes, cpu.solutions, cpu.nodes
        );
        let recounted = format!(
            "the {} subtasks it held or counted since its last passing check were",
            redone.len()
        );
        fed.dropped = Some(dropped(&self.gpu().device, &what, &recounted));
        let rest = std::iter::from_fn(|| self.list.take_front().map(|k| self.accel[k]));
        for id in redone.into_iter().chain(rest) {
            match crate::subtask::count(
                self.plan,
                id,
                self.unique,
                self.kernels,
                (self.cancel, &NO_SPARE),
            )? {
                Some(found) => (self.done)(id, found),
                // stopped: the run ends short, and says so
                None => break,
            }
            fed.on_cpu += 1;
        }
        Ok(fed)
    }

    /// Cuts items for the next dispatch, up to `target`, from the subtask being cut and then
    /// from subtasks taken at the front of the list.
    fn cut(
        &self,
        target: usize,
        ledger: &mut Ledger,
        cutting: &mut Option<(u32, Kind, Cut<'a>)>,
        fed: &mut Fed,
    ) -> Batch {
        let mut batch = Batch::default();
        while batch.len() < target {
            let (slot, kind, cut) = match cutting {
                Some(c) => c,
                None => {
                    let Some(k) = self.list.take_front() else {
                        break;
                    };
                    let id = self.accel[k];
                    let kind = kind_of(self.rows, id, self.unique).expect("a GPU subtask");
                    let slot = ledger.open(id);
                    let cut = Cut::new(self.rows, id, kind, self.gpu().item_rows(kind));
                    cutting.insert((slot, kind, cut))
                }
            };
            while batch.len() < target {
                let Some(item) = cut.next_item() else {
                    break;
                };
                batch.items[*kind as usize].push(item);
                batch.slots[*kind as usize].push(*slot);
                ledger.sent(*slot);
            }
            if cut.is_done() {
                // a subtask none of whose placements left an item is whole already
                if let Some((id, raw)) = ledger.cut(*slot, cut.host_nodes()) {
                    self.hand_in(id, raw, fed);
                }
                *cutting = None;
            }
        }
        batch
    }

    /// Adds a dispatch's counts (its items numbered from `first` among the GPU's) to their
    /// subtasks, holding those it finished for the next passing check, and counts the items
    /// the kernel gave up on the CPU (in `given_up`); spot-checks its first item the kernel
    /// counted and every [`SPOT_EVERY`]th.
    fn fold(
        &self,
        batch: &Batch,
        counts: [Vec<ItemCount>; 2],
        first: u64,
        (ledger, held, given_up): (&mut Ledger, &mut Vec<(usize, Found)>, &mut u64),
    ) -> Result<(), Disagreement> {
        let mut number = first;
        // the dispatch's first item the kernel counted (not one it gave up) is checked
        let mut checked = false;
        for (kind, counts) in counts.iter().enumerate() {
            for ((count, item), &slot) in counts
                .iter()
                .zip(&batch.items[kind])
                .zip(&batch.slots[kind])
            {
                let at = number;
                number += 1;
                let raw = match *count {
                    Some(words) => as_raw(words),
                    None => match self.recount(item) {
                        Some(raw) => {
                            *given_up += 1;
                            raw
                        }
                        // stopped: the subtask stays open and is not handed in
                        None => continue,
                    },
                };
                if (!checked || at.is_multiple_of(SPOT_EVERY)) && count.is_some() {
                    checked = true;
                    match self.recount(item) {
                        Some(cpu) if cpu != raw => {
                            let (item, gpu) = (at, raw);
                            return Err(Disagreement { item, gpu, cpu });
                        }
                        Some(_) => {}
                        // stopped: the rest is not folded, and the run ends short
                        None => return Ok(()),
                    }
                }
                if let Some((id, raw)) = ledger.counted(slot, raw) {
                    held.push((id, raw.weigh(self.rows.frame_of(id).rule)));
                }
            }
        }
        Ok(())
    }

    fn hand_in(&self, id: usize, raw: Raw, fed: &mut Fed) {
        let rule = self.rows.frame_of(id).rule;
        (self.done)(id, raw.weigh(rule));
        fed.subtasks += 1;
        self.list.by_gpus.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts on the CPU an item the kernel gave up (its counts reached `drop_at`); `None`
    /// when stopped.
    fn recount(&self, item: &Item) -> Option<Raw> {
        item.count_on_cpu(self.rows, self.kernels.rows, self.cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineChoice;
    use crate::found::Found;
    use crate::plan::Plan;
    use std::sync::atomic::AtomicU64;

    /// The row search on the test machine's GPUs, or `None`.
    fn gpus() -> Option<Vec<RowGpu>> {
        crate::gpu::testing::each_gpu(RowGpu::on)
    }

    /// A GPU that makes the count of its item `lie_at` (by its number among the GPU's)
    /// one solution too many, or that is lost at its dispatch `lost_at`.
    struct Fake {
        gpu: RowGpu,
        lie_at: Option<u64>,
        lost_at: Option<u64>,
        items: AtomicU64,
        dispatches: AtomicU64,
    }

    impl Fake {
        fn on(
            gpus: &[RowGpu],
            lie_at: Option<u64>,
            lost_at: Option<u64>,
        ) -> Vec<Arc<dyn RowCounter>> {
            let fake = |gpu: &RowGpu| -> Arc<dyn RowCounter> {
                Arc::new(Fake {
                    gpu: gpu.clone(),
                    lie_at,
                    lost_at,
                    items: AtomicU64::new(0),
                    dispatches: AtomicU64::new(0),
                })
            };
            gpus.iter().map(fake).collect()
        }
    }

    impl RowCounter for Fake {
        fn row_gpu(&self) -> &RowGpu {
            &self.gpu
        }

        fn wait(&self, flight: Flight) -> Result<[Vec<ItemCount>; 2], Error> {
            let mut counts = flight.wait(&self.gpu.device)?;
            if Some(self.dispatches.fetch_add(1, Ordering::Relaxed)) == self.lost_at {
                return Err(self.gpu.device.failed(&"the device was lost"));
            }
            let items = (counts[0].len() + counts[1].len()) as u64;
            let first = self.items.fetch_add(items, Ordering::Relaxed);
            let told = (self.lie_at).and_then(|lie| lie.checked_sub(first));
            if let Some(Some(words)) =
                told.and_then(|k| counts.iter_mut().flatten().nth(k as usize))
            {
                words[0] += 1;
            }
            Ok(counts)
        }
    }

    fn real(gpus: &[RowGpu]) -> Vec<Arc<dyn RowCounter>> {
        let real = |gpu: &RowGpu| Arc::new(gpu.clone()) as Arc<dyn RowCounter>;
        gpus.iter().map(real).collect()
    }

    /// Every subtask of `plan`, by id, on `executor`, and what the executor reported.
    fn count_all(executor: &dyn Executor, plan: &Plan, unique: bool) -> (Vec<Found>, Executed) {
        let ids: Vec<usize> = (0..plan.len()).collect();
        crate::gpu::testing::count_ids(executor, plan, &ids, unique)
    }

    #[test]
    fn items_the_kernel_gives_up_are_counted_on_the_cpu() {
        let Some(gpus) = gpus() else {
            return;
        };
        // mirror's --unique stays on the CPU; d4's tie frames are classified on the GPU
        for (engine, unique) in [(EngineChoice::Mirror, false), (EngineChoice::D4, true)] {
            let plan = Plan::new(13, engine, None, Some(2)).unwrap();
            let workers = || crate::parallel::Workers::new(1, false).unwrap();
            let kernels = Kernels::resolve(&plan, crate::kernel::KernelChoice::Scalar).unwrap();
            let cpu = crate::execute::cpu::Cpu::new(workers(), kernels);
            // given up past 64 nodes: most items go back to the CPU
            let gpu = WithGpu {
                gpus: real(&gpus),
                share: false,
                workers: workers(),
                kernels,
                drop_at: 64,
                dropped: Default::default(),
            };
            let (on_gpu, executed) = count_all(&gpu, &plan, unique);
            assert_eq!(on_gpu, count_all(&cpu, &plan, unique).0, "{engine:?}");
            assert!(
                executed.gpu_items_given_up > executed.gpu_items / 4,
                "{engine:?}: {} of {} items given up",
                executed.gpu_items_given_up,
                executed.gpu_items
            );
        }
    }

    /// A GPU whose count of a spot-checked item is wrong is dropped at once: what it held
    /// and what it counted since its last passing check are counted on the CPU, and so is
    /// the rest of its list; the counts are the CPU's, and a note names the GPU. A wrong
    /// count at the first item leaves it nothing; one in a later dispatch keeps what the
    /// checks of the dispatches before it vouched for.
    #[test]
    fn a_gpu_that_disagrees_with_a_spot_check_is_dropped_and_its_work_recounted() {
        let Some(gpus) = gpus() else {
            return;
        };
        let plan = Plan::new(16, EngineChoice::D4, None, None).unwrap();
        let workers = || crate::parallel::Workers::new(2, false).unwrap();
        let kernels = Kernels::resolve(&plan, crate::kernel::KernelChoice::Auto).unwrap();
        let cpu = crate::execute::cpu::Cpu::new(workers(), kernels);
        let want = count_all(&cpu, &plan, false).0;
        // a later lie falls on the second dispatch's first item (a dispatch is vouched for
        // whole, so an earlier lie keeps nothing); on a GPU of many lanes the first holds
        // the whole plan
        let first = (gpus.iter())
            .map(|gpu| dispatch_sizes(gpu.device.is_software(), gpu.lanes()).0)
            .max()
            .unwrap_or(0) as u64;
        for lie_at in [0, first.next_multiple_of(SPOT_EVERY)] {
            let gpu = WithGpu {
                gpus: Fake::on(&gpus, Some(lie_at), None),
                share: false,
                workers: workers(),
                kernels,
                drop_at: crate::gpu::rows::dispatch::DROPPED,
                dropped: Default::default(),
            };
            let (got, executed) = count_all(&gpu, &plan, false);
            assert_eq!(got, want, "lie at {lie_at}");
            let notes = gpu.facts().notes;
            if lie_at > 0 && notes.is_empty() && executed.gpu_dispatches == 1 {
                // the whole plan was the first dispatch: no later item to lie about
                continue;
            }
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(
                notes[0].contains(&format!("disagreed with the CPU on its item {lie_at}"))
                    && notes[0].contains("it was dropped"),
                "{notes:?}"
            );
            // the items before the lie were vouched for by the checks that passed
            assert_eq!(
                executed.gpu_subtasks == 0,
                lie_at == 0,
                "lie at {lie_at}: {executed:?}"
            );
        }
    }

    /// A GPU lost in a run fails it with the device's words (what its checkpoint keeps
    /// stays), and no subtask is handed in twice.
    #[test]
    fn a_gpu_lost_in_a_run_fails_it_and_says_which() {
        let Some(gpus) = gpus() else {
            return;
        };
        let plan = Plan::new(16, EngineChoice::D4, None, None).unwrap();
        let kernels = Kernels::resolve(&plan, crate::kernel::KernelChoice::Auto).unwrap();
        let gpu = WithGpu {
            gpus: Fake::on(&gpus, None, Some(0)),
            share: false,
            workers: crate::parallel::Workers::new(1, false).unwrap(),
            kernels,
            drop_at: crate::gpu::rows::dispatch::DROPPED,
            dropped: Default::default(),
        };
        let ids: Vec<usize> = (0..plan.len()).collect();
        let handed = Mutex::new(vec![0u32; plan.len()]);
        let stop = AtomicBool::new(false);
        let failed = gpu.execute(Job {
            plan: &plan,
            ids: &ids,
            unique: false,
            cancel: &stop,
            done: &|id, _| handed.lock().unwrap()[id] += 1,
        });
        let said = failed.expect_err("the run fails").to_string();
        let name = &gpus[0].device.info.name;
        assert!(
            said.contains(&format!("the GPU {name} failed: the device was lost")),
            "{said}"
        );
        assert!(handed.into_inner().unwrap().iter().all(|&n| n <= 1));
    }

    #[test]
    fn dispatches_shrink_when_slow_but_never_leave_a_gpus_lanes_idle() {
        let slow = SLOW * 2;
        // a real GPU's 4096 workgroups of 64: four items a lane, its first dispatch's million
        let (first, fewest) = dispatch_sizes(false, 4096 * crate::gpu::device::WORKGROUP);
        assert_eq!((first, fewest), (1 << 20, 1 << 20));
        assert_eq!(next_items(first, slow, fewest), first);
        assert_eq!(next_items(4 * first, slow, fewest), 2 * first);
        // a CPU-emulated adapter's shrink to a thousand
        let (soft_first, soft) = dispatch_sizes(true, 64 * crate::gpu::device::WORKGROUP);
        assert_eq!(next_items(soft_first, slow, soft), soft_first / 2);
        assert_eq!(next_items(soft, slow, soft), soft);
        // fast dispatches grow to the most, those in between stay
        assert_eq!(next_items(MOST_ITEMS / 2, FAST / 2, fewest), MOST_ITEMS);
        assert_eq!(next_items(MOST_ITEMS, FAST / 2, fewest), MOST_ITEMS);
        assert_eq!(next_items(5000, (FAST + SLOW) / 2, soft), 5000);
    }

    #[test]
    fn the_cpu_leaves_the_last_subtasks_to_a_faster_gpu() {
        let list = List::new(10);
        // nothing known yet: the CPU takes
        assert_eq!(list.take_back(None), Some(9));
        assert_eq!(list.take_back(Some(100.0)), Some(8));
        // the GPUs handed in a subtask a microsecond or so: 8 left take them far less than
        // the CPU's 100 s for one
        list.by_gpus.store(1_000_000, Ordering::Relaxed);
        assert_eq!(list.take_back(Some(100.0)), None);
        assert_eq!(list.take_back(Some(1e-12)), Some(7));
        assert_eq!(list.take_front(), Some(0));
    }
}
