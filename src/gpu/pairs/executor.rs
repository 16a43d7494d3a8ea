//! The quadrant engine on GPUs: CPU threads take units one at a time, as on the CPU, and
//! build each unit's halves and sieves; the pair count of each loaded sieve goes to the
//! thread's GPU (over a bus with its tables made there from the dense words it is sent). A
//! thread gathers its sieves in a batch ([`PairBatch`]) and sends it once it holds
//! [`BATCH_LANES`] patterns a lane of a pair dispatch or its next sieve does not fit its room (at
//! most [`BATCH_BYTES`] sent and as many of tables), and when it has no unit left; it builds
//! the next batch while the GPU counts (its [`PairQueue`] holds two), and a unit is handed in
//! once the batches holding its sieves are counted. With `share`, a thread whose two batches
//! are both on the GPU counts its sieve on the CPU instead (making its tables there, if it
//! was loaded as words for the GPU); a sieve larger than the GPU binds is counted on the CPU and said
//! (`gpu_given_up`).
//!
//! The plan, its units and their results are the CPU's: a unit's count does not say which
//! device counted its pairs, so shards, checkpoints and `merge` take it as any other.
//!
//! Trust: before its first unit, a GPU counts every unit of N = [`CHECK_N`] and must agree
//! with the CPU ([`check_pairs`]); then every batch is spot-checked before its counts are
//! used: the clashes of each sieve's first pattern and of a batch's patterns at a stride
//! ([`spot_every`]: sized for sixteen a batch, at least 4096), against the same patterns
//! worked out on the CPU as they were batched. At the first disagreement the GPUs are
//! dropped, the units of that batch are counted again on the CPU and the rest there too,
//! and the run notes the device and both counts. What earlier passing checks vouched for
//! stays.

use crate::error::Error;
use crate::execute::contract::{Executed, Executor, Facts, FirstFailure, Job};
use crate::found::Found;
use crate::gpu::pairs::batch::{spot_every, PairBatch, Sieved, Spot, Visited};
use crate::gpu::pairs::gpu::{PairCounter, PairGpu};
use crate::gpu::pairs::queue::{PairQueue, PAIR_LANES};
use crate::gpu::trust::dropped;
use crate::parallel::{lock, Workers, NO_SPARE};
use crate::quadrant::{Layout, Made, PairDevice, PairKernel, PairWork, Pending};
use crate::stages::{self, time, Stage, Tally};
use crate::subtask::Kernels;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Patterns a batch holds per lane of a pair count's dispatch before it is sent (lanes:
/// the invocations the dispatch runs at most, [`PAIR_LANES`], 262,144 on every adapter).
const BATCH_LANES: usize = 4;

/// Bytes of lookup tables, and of what is sent (the tables, or the dense words), a batch holds
/// at most (a sieve of N = 24 alone takes more: it goes alone); a thread's batches are given
/// room by the last one's upload, growing to this. A thread's queue holds two batches, each
/// in an upload buffer and, over a bus, on the GPU with the tables it makes (the words are
/// about a sixth of their bytes): about 1.3 GiB for 16 threads.
const BATCH_BYTES: u64 = 32 << 20;

/// The board of the pair kernel's known-answer check, before a GPU counts a unit: its 462
/// units (252 sieves) take milliseconds, even on a CPU-emulated adapter.
const CHECK_N: usize = 12;

/// Counts every unit of N = [`CHECK_N`] with `gpu`'s pair kernel and on the CPU's loops
/// `pairs`: what differs, if anything does (the verdict); an error where the check could
/// not run (no room for its buffers).
pub(crate) fn check_pairs(gpu: &PairGpu, pairs: PairKernel) -> Result<Result<(), String>, Error> {
    let layout = Layout::new(CHECK_N);
    let never = AtomicBool::new(false);
    let notes = Mutex::default();
    let gpus: [Arc<dyn PairCounter>; 1] = [Arc::new(gpu.clone())];
    let shared = Shared::new(&gpus, false, &notes);
    let feed = Feed::new(&shared, 0);
    let mut on_gpu = vec![Found::default(); layout.len()];
    let ids: Vec<usize> = (0..layout.len()).collect();
    match feed.count_units((&layout, &ids, pairs), &never, &mut |id, found| {
        on_gpu[id] = found;
    }) {
        Err(refused @ Error::NoRoom(_)) => return Err(refused),
        Err(e) => return Ok(Err(e.to_string())),
        Ok(_) => {}
    }
    if let Some(note) = lock(&notes).first() {
        return Ok(Err(note.clone()));
    }
    let mut differ = 0;
    for (id, on_gpu) in on_gpu.iter().enumerate() {
        let on_cpu = layout.count_unit(id, pairs, &never)?;
        differ += usize::from(on_cpu.as_ref() != Some(on_gpu));
    }
    Ok(match differ {
        0 => Ok(()),
        _ => Err(format!(
            "{differ} of {} units of N = {CHECK_N} differ from the CPU's count",
            layout.len()
        )),
    })
}

/// What a thread counts: the units `ids` of `layout`, on the pair loops `pairs` where the
/// CPU counts.
type Units<'a> = (&'a Layout, &'a [usize], PairKernel);

/// GPUs, and the CPU threads that feed them (and, with `share`, count beside them).
pub(crate) struct QuadrantOnGpus {
    pub gpus: Vec<Arc<dyn PairCounter>>,
    pub share: bool,
    pub workers: Workers,
    pub kernels: Kernels,
    /// What the executions said: GPUs dropped, sieves too large for them.
    pub notes: Mutex<Vec<String>>,
}

/// What every thread of one execution shares.
struct Shared<'a> {
    gpus: &'a [Arc<dyn PairCounter>],
    share: bool,
    /// Set once a GPU disagreed with a check: every thread counts on the CPU from then on.
    dropped: AtomicBool,
    dispatches: AtomicU64,
    /// Patterns the GPUs counted.
    patterns: AtomicU64,
    /// Sieves counted on the CPU because a GPU could not hold them.
    too_large: AtomicU64,
    notes: &'a Mutex<Vec<String>>,
}

impl<'a> Shared<'a> {
    fn new(
        gpus: &'a [Arc<dyn PairCounter>],
        share: bool,
        notes: &'a Mutex<Vec<String>>,
    ) -> Shared<'a> {
        Shared {
            gpus,
            share,
            dropped: AtomicBool::new(false),
            dispatches: AtomicU64::new(0),
            patterns: AtomicU64::new(0),
            too_large: AtomicU64::new(0),
            notes,
        }
    }
}

/// A batch sent: its number among the run's dispatches, its sieves and its spot checks.
struct Sent {
    dispatch: u64,
    sieves: Vec<Sieved>,
    checks: Vec<(Spot, u32)>,
}

/// One thread's GPU: the batch it builds, those it sent, the tickets it gave out, and what
/// they counted: the disjoint pairs and the patterns of the other side it joined (`None`:
/// counted again on the CPU, the GPU having been dropped).
struct Feed<'a> {
    shared: &'a Shared<'a>,
    device: &'a dyn PairCounter,
    batch: RefCell<PairBatch>,
    queue: RefCell<PairQueue<'a, Sent>>,
    next_ticket: Cell<u64>,
    counted: RefCell<HashMap<u64, Option<(u64, u64)>>>,
    /// Bytes of tables or stored words, and of word lists, of the last batch it sent (what
    /// the next is given room for).
    last_bytes: Cell<[u64; 2]>,
    /// Whether a batch was counted since its units were last handed in.
    received: Cell<bool>,
}

impl PairDevice for Feed<'_> {
    fn takes(&self) -> Made {
        self.queue.borrow().takes()
    }

    #[cfg(test)]
    fn takes_narrow_words(&self) -> bool {
        self.device.narrow_words()
    }

    fn take(&self, work: &PairWork) -> Result<Option<u64>, Error> {
        let shared = self.shared;
        if shared.dropped.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let limit = self.gpu().device.buffer_limit;
        let cells = work.signing.as_ref().and_then(|s| s.cells());
        let quarters = cells.map_or([0, 0], |c| c.quarters().bytes());
        if PairBatch::default().largest_with(work) > limit || quarters.iter().any(|&b| b > limit) {
            shared.too_large.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        let fits = {
            let batch = self.batch.borrow();
            let (upload_room, words_room) = self.queue.borrow().rooms();
            !batch.is_empty()
                && batch.takes_words_of(work)
                && batch.upload_bytes + work.upload_bytes() <= upload_room
                && batch.word_bytes_with(work) <= words_room
                && batch.table_bytes + work.table_bytes() <= BATCH_BYTES
                && batch.largest_with(work) <= limit
        };
        if !fits {
            self.flush()?;
            // room for the last batch's and a quarter, and for this sieve
            let [upload, words] = self
                .last_bytes
                .get()
                .map(|last| last + last / 4 + (1 << 20));
            let upload = work.upload_bytes().max(upload.min(BATCH_BYTES));
            let words = PairBatch::default().word_bytes_with(work).max(words);
            let rooms = (upload.min(limit), words.min(limit));
            while !self.queue.borrow_mut().begin(rooms)? {
                let waits = !shared.share;
                if !self.receive(waits)? {
                    // the GPU holds this thread's batches and has not counted the oldest
                    return Ok(None);
                }
            }
        }
        let ticket = self.next_ticket.get();
        self.next_ticket.set(ticket + 1);
        let full = {
            let mut batch = self.batch.borrow_mut();
            let written = time(Stage::Upload, || {
                self.queue.borrow_mut().write(&batch, work)
            });
            written.map_err(|e| self.gpu().failure(e))?;
            time(Stage::Batch, || batch.push(work, ticket));
            batch.reckoned >= BATCH_LANES * PAIR_LANES
        };
        if full {
            self.flush()?;
        }
        Ok(Some(ticket))
    }
}

impl<'a> Feed<'a> {
    /// The device this thread's batches go to.
    fn gpu(&self) -> &'a PairGpu {
        self.device.pair_gpu()
    }

    fn new(shared: &'a Shared<'a>, gpu: usize) -> Feed<'a> {
        let device = &*shared.gpus[gpu];
        Feed {
            shared,
            device,
            batch: RefCell::new(PairBatch::new(spot_every(BATCH_LANES * PAIR_LANES))),
            queue: RefCell::new(device.pair_gpu().queue()),
            next_ticket: Cell::new(0),
            counted: RefCell::default(),
            last_bytes: Cell::new([0, 0]),
            received: Cell::new(false),
        }
    }

    /// Sends the batch to the GPU.
    fn flush(&self) -> Result<(), Error> {
        let mut batch = self.batch.borrow_mut();
        if batch.is_empty() {
            return Ok(());
        }
        self.last_bytes
            .set([batch.upload_bytes, batch.word_parts().len()]);
        let shared = self.shared;
        if shared.dropped.load(Ordering::Relaxed) {
            // nothing goes to a GPU once one was found wrong: the CPU counts these again
            let mut counted = self.counted.borrow_mut();
            counted.extend(batch.sieves.iter().map(|sieve| (sieve.ticket, None)));
            self.received.set(true);
            batch.clear();
            return Ok(());
        }
        let sent = Sent {
            dispatch: shared.dispatches.fetch_add(1, Ordering::Relaxed),
            // (the batch keeps its sieves until sent: its sums are laid out by them)
            sieves: batch.sieves.clone(),
            checks: std::mem::take(&mut batch.checks),
        };
        // (the patterns the GPU joins are added as they come back)
        shared
            .patterns
            .fetch_add((batch.len() - batch.joined_slots) as u64, Ordering::Relaxed);
        let sending = time(Stage::Send, || self.queue.borrow_mut().send(&batch, sent));
        sending.map_err(|e| self.gpu().failure(e))?;
        batch.clear();
        Ok(())
    }

    /// Takes the oldest batch sent, once counted (waiting for it if `wait`), checks it, and
    /// keeps what each of its sieves counted: whether there was one.
    fn receive(&self, wait: bool) -> Result<bool, Error> {
        time(Stage::Receive, || self.receive_untimed(wait))
    }

    /// [`Feed::receive`].
    fn receive_untimed(&self, wait: bool) -> Result<bool, Error> {
        let mut queue = self.queue.borrow_mut();
        let received = queue.receive(wait);
        let received = received.map_err(|e| self.gpu().failure(e.into()))?;
        let Some((sent, sums)) = received else {
            return Ok(false);
        };
        self.received.set(true);
        let sums = self.device.sums(sent.dispatch, &sent.sieves, sums)?;
        let wrong = sent
            .checks
            .iter()
            .find(|&&(spot, cpu)| sums.spot(spot) != cpu);
        let mut failed = wrong.map(|&(spot, cpu)| {
            let gpu = sums.spot(spot);
            format!("{gpu} clashes of a pattern, the CPU's {cpu}")
        });
        let mut counted = self.counted.borrow_mut();
        for (k, sieve) in sent.sieves.iter().enumerate() {
            let sum = sums.sum(k);
            let visited = match sieve.visited {
                Visited::Host(visited) => visited,
                Visited::Gpu(_) => sums.visited(k),
            };
            let patterns = match sieve.joins {
                true => sums.patterns(k),
                false => 0,
            };
            if let Visited::Gpu(Some((cpu, cpu_patterns))) = sieve.visited {
                if cpu != visited && failed.is_none() {
                    failed = Some(format!("{visited} pairs visited, the CPU's {cpu}"));
                }
                let gpu_patterns = sums.patterns(k);
                if gpu_patterns != cpu_patterns && failed.is_none() {
                    failed = Some(format!(
                        "{gpu_patterns} patterns of a sieve's other side, the CPU's {cpu_patterns}"
                    ));
                }
            }
            let disjoint = visited.checked_sub(sum);
            if disjoint.is_none() && failed.is_none() {
                failed = Some(format!("{sum} clashes of {visited} pairs"));
            }
            self.shared.patterns.fetch_add(patterns, Ordering::Relaxed);
            stages::tally(Tally::PairsVisited, visited);
            if sieve.joins {
                stages::tally(Tally::Patterns, patterns);
            }
            counted.insert(sieve.ticket, disjoint.map(|d| (d, patterns)));
        }
        if let Some(what) = failed {
            for sieve in &sent.sieves {
                counted.insert(sieve.ticket, None);
            }
            self.drop_gpus(&what);
        }
        Ok(true)
    }

    /// Drops the GPUs after this thread's counted `what` wrong.
    fn drop_gpus(&self, what: &str) {
        if !self.shared.dropped.swap(true, Ordering::Relaxed) {
            let sent = self.shared.dispatches.load(Ordering::Relaxed);
            let what = format!("a spot check ({what}; {sent} batches sent)");
            let recounted = "the units of its batch and the rest were";
            lock(self.shared.notes).push(dropped(&self.gpu().device, &what, recounted));
        }
    }

    /// Counts the units `ids` of `layout` (taking the next from `next`, where threads share
    /// them), handing each to `done` once all of it is counted: `stop` ends it early.
    /// Returns how many it handed in, and how many of them the GPU counted some of.
    fn count_units(
        &self,
        units: Units,
        stop: &AtomicBool,
        done: &mut dyn FnMut(usize, Found),
    ) -> Result<(usize, usize), Error> {
        let next = AtomicUsize::new(0);
        self.count_shared(units, (&next, None), stop, done)
    }

    /// [`Feed::count_units`] with the units taken from `next`, shared with other threads,
    /// and `failure` looked at between two (the first failure of any thread).
    fn count_shared(
        &self,
        (layout, ids, pairs): Units,
        (next, failure): (&AtomicUsize, Option<&FirstFailure>),
        stop: &AtomicBool,
        done: &mut dyn FnMut(usize, Found),
    ) -> Result<(usize, usize), Error> {
        let mut pending: Vec<(usize, Pending, bool)> = Vec::new();
        let (mut handed, mut on_gpu) = (0usize, 0usize);
        let mut hand_in = |id: usize, found: Found, gpu: bool| {
            done(id, found);
            handed += 1;
            on_gpu += usize::from(gpu);
        };
        loop {
            if stop.load(Ordering::Relaxed) || failure.is_some_and(FirstFailure::failed) {
                return Ok((handed, on_gpu));
            }
            let Some(&id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let Some(unit) = layout.count_unit_on(id, (pairs, Some(self), &NO_SPARE), stop)? else {
                return Ok((handed, on_gpu));
            };
            if unit.tickets.is_empty() {
                hand_in(id, unit.found, false);
            } else {
                pending.push((id, unit, true));
            }
            if self.received.replace(false) {
                self.hand_in_counted(&mut pending, (layout, pairs), stop, &mut hand_in)?;
            }
        }
        self.flush()?;
        while self.receive(true)? {}
        self.hand_in_counted(&mut pending, (layout, pairs), stop, &mut hand_in)?;
        Ok((handed, on_gpu))
    }

    /// Hands in the pending units whose sieves are all counted; those the GPU counted in a
    /// batch that failed its check are counted again on the CPU.
    fn hand_in_counted(
        &self,
        pending: &mut Vec<(usize, Pending, bool)>,
        (layout, pairs): (&Layout, PairKernel),
        stop: &AtomicBool,
        hand_in: &mut dyn FnMut(usize, Found, bool),
    ) -> Result<(), Error> {
        let mut counted = self.counted.borrow_mut();
        let mut still = Vec::new();
        for (id, unit, gpu) in pending.drain(..) {
            let known: Option<Vec<Option<(u64, u64)>>> = (unit.tickets.iter())
                .map(|t| counted.get(t).copied())
                .collect();
            let Some(known) = known else {
                still.push((id, unit, gpu));
                continue;
            };
            for t in &unit.tickets {
                counted.remove(t);
            }
            if known.iter().all(Option::is_some) {
                let mut values = known.into_iter().flatten();
                let found = unit.finish(|_| values.next().expect("one a ticket"));
                hand_in(id, found, true);
            } else if let Some(found) = layout.count_unit(id, pairs, stop)? {
                hand_in(id, found, false);
            }
        }
        *pending = still;
        Ok(())
    }
}

impl Executor for QuadrantOnGpus {
    fn execute(&self, job: Job) -> Result<Executed, Error> {
        let layout = job.plan.quadrant_layout().expect("a quadrant plan");
        let shared = Shared::new(&self.gpus, self.share, &self.notes);
        let next = AtomicUsize::new(0);
        let failure = FirstFailure::default();
        let workers = self.workers.at_most(job.ids.len());
        let units = (layout, job.ids, self.kernels.pairs);
        let counted = workers.run(|thread| {
            let _turn = workers.turn();
            let feed = Feed::new(&shared, thread % self.gpus.len());
            let mut done = |id: usize, found: Found| (job.done)(id, found);
            let shared_ids = (&next, Some(&failure));
            match feed.count_shared(units, shared_ids, job.cancel, &mut done) {
                Ok(counted) => counted,
                Err(e) => {
                    failure.fail(e);
                    (0, 0)
                }
            }
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
            gpu_items: shared.patterns.load(Ordering::Relaxed),
            gpu_dispatches: dispatches,
            gpu_items_given_up: too_large,
        })
    }

    fn facts(&self) -> Facts {
        let gpus = self.gpus.iter().map(|gpu| gpu.pair_gpu().device.describe());
        Facts::on_gpus((self.kernels, &self.workers), gpus, &self.notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EngineChoice;
    use crate::execute::cpu::Cpu;
    use crate::found::Found;
    use crate::gpu::pairs::batch::Sums;
    use crate::kernel::KernelChoice;
    use crate::memory::Budget;
    use crate::plan::Plan;

    /// The pair count on the test machine's GPUs, or `None`.
    fn gpus() -> Option<Vec<PairGpu>> {
        crate::gpu::testing::each_gpu(PairGpu::on)
    }

    fn workers() -> Workers {
        Workers::new(2, false).unwrap()
    }

    /// The test GPU as a discrete one works (lavapipe binds what the host maps and is sent
    /// tables): opened without mapped primary buffers, its batches go through copies and
    /// it makes the tables from the dense words it is sent.
    fn copying_gpus() -> Option<[PairGpu; 1]> {
        let gpu = crate::gpu::testing::gpu_without(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)?;
        let gpu = PairGpu::on(&gpu);
        assert_eq!(gpu.queue::<()>().takes(), Made::Words);
        Some([gpu])
    }

    /// A GPU as the tests drive it: one that makes the first count of its dispatch
    /// `lie_at` wrong, sends the other side's words wide, and counts what it counted: the
    /// sieves whose other side it signed, those whose other side it joined, the most
    /// clashes of one sieve.
    #[derive(Default)]
    struct Fake {
        gpu: Option<PairGpu>,
        lie_at: Option<u64>,
        wide_words: bool,
        signed: AtomicU64,
        joined: AtomicU64,
        most_clashes: AtomicU64,
    }

    impl PairCounter for Fake {
        fn pair_gpu(&self) -> &PairGpu {
            self.gpu.as_ref().expect("a fake on a GPU")
        }

        fn sums<'c>(
            &self,
            dispatch: u64,
            sieves: &[Sieved],
            mut sums: Sums<'c>,
        ) -> Result<Sums<'c>, Error> {
            self.pair_gpu().device.check()?;
            if self.lie_at == Some(dispatch) {
                sums.tell_wrong();
            }
            for (k, sieve) in sieves.iter().enumerate() {
                self.most_clashes.fetch_max(sums.sum(k), Ordering::Relaxed);
                let signed = matches!(sieve.visited, Visited::Gpu(_));
                self.signed.fetch_add(u64::from(signed), Ordering::Relaxed);
                self.joined
                    .fetch_add(u64::from(sieve.joins), Ordering::Relaxed);
            }
            Ok(sums)
        }

        fn narrow_words(&self) -> bool {
            !self.wide_words
        }
    }

    /// Fakes on `gpus`, each made by `fake` from a plain one.
    fn fakes(gpus: &[PairGpu], fake: impl Fn(Fake) -> Fake) -> Vec<Arc<Fake>> {
        let plain = |gpu: &PairGpu| Fake {
            gpu: Some(gpu.clone()),
            ..Fake::default()
        };
        gpus.iter().map(|gpu| Arc::new(fake(plain(gpu)))).collect()
    }

    /// What `fakes` counted, added up: `what` of each.
    fn seen(fakes: &[Arc<Fake>], what: impl Fn(&Fake) -> &AtomicU64) -> u64 {
        fakes.iter().map(|f| what(f).load(Ordering::Relaxed)).sum()
    }

    fn on_gpus(fakes: &[Arc<Fake>], plan: &Plan) -> QuadrantOnGpus {
        QuadrantOnGpus {
            gpus: (fakes.iter())
                .map(|f| f.clone() as Arc<dyn PairCounter>)
                .collect(),
            share: false,
            workers: workers(),
            kernels: Kernels::resolve(plan, KernelChoice::Auto).unwrap(),
            notes: Mutex::default(),
        }
    }

    fn on_cpu(plan: &Plan) -> Cpu {
        Cpu::new(
            workers(),
            Kernels::resolve(plan, KernelChoice::Auto).unwrap(),
        )
    }

    /// Units `ids` of `plan` on `executor`, in the order of `ids`, and what it reported.
    fn count_ids(executor: &dyn Executor, plan: &Plan, ids: &[usize]) -> (Vec<Found>, Executed) {
        crate::gpu::testing::count_ids(executor, plan, ids, false)
    }

    /// N = 15's plan, its units and the CPU's counts of them.
    fn n15() -> (Plan, Vec<usize>, Vec<Found>) {
        let plan = Plan::new(15, EngineChoice::Quadrant, None, None).unwrap();
        let ids: Vec<usize> = (0..plan.len()).collect();
        let cpu = count_ids(&on_cpu(&plan), &plan, &ids).0;
        (plan, ids, cpu)
    }

    /// The test GPUs, N = 15's plan, its units, the CPU's counts and a run on the GPUs.
    type OnGpus = (Vec<PairGpu>, Plan, Vec<usize>, Vec<Found>, Executed);

    fn n15_on_gpus() -> Option<OnGpus> {
        let gpus = gpus()?;
        let (plan, ids, cpu) = n15();
        let (on_gpu, executed) = count_ids(&on_gpus(&fakes(&gpus, |f| f), &plan), &plan, &ids);
        assert_eq!(on_gpu, cpu);
        Some((gpus, plan, ids, cpu, executed))
    }

    #[test]
    fn a_gpu_that_copies_its_buffers_and_makes_its_tables_counts_alike() {
        let Some(gpus) = copying_gpus() else {
            return;
        };
        let (plan, ids, cpu) = n15();
        // the other side's words narrow (as every board below 24 has them) and wide
        for wide_words in [false, true] {
            let fakes = fakes(&gpus, |f| Fake { wide_words, ..f });
            let gpu = on_gpus(&fakes, &plan);
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            assert!(executed.gpu_dispatches > 0, "{executed:?}");
            assert_eq!(on_gpu, cpu, "wide words: {wide_words}");
            // narrow words: the GPU signed the other side
            let signed = seen(&fakes, |f| &f.signed);
            assert_eq!(signed > 0, !wide_words, "{signed} sieves signed");
            // and joined the longer half of most units (N = 15's are past the tests' 400
            // candidates), beside the shorter ones sent as they came
            assert_eq!(seen(&fakes, |f| &f.joined) > 0, !wide_words);
            // the GPU's counts were used: no spot check disagreed
            assert!(gpu.facts().notes.is_empty(), "{:?}", gpu.facts().notes);
        }
    }

    #[test]
    fn every_unit_of_14_to_18_counts_alike_on_the_gpu_and_the_cpu() {
        let Some(gpus) = gpus() else {
            return;
        };
        for n in 14..=18 {
            let plan = Plan::new(n, EngineChoice::Quadrant, None, None).unwrap();
            let ids: Vec<usize> = (0..plan.len()).collect();
            let gpu = on_gpus(&fakes(&gpus, |f| f), &plan);
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
        random_units_of_19_to_23_agree(&gpus);
    }

    #[test]
    fn random_units_of_19_to_23_count_alike_on_a_gpu_sent_words() {
        // the widest dense words and the most lookups, made into tables on the GPU
        let Some(gpus) = copying_gpus() else {
            return;
        };
        random_units_of_19_to_23_agree(&gpus);
    }

    #[test]
    fn a_sieve_whose_clashes_pass_32_bits_adds_them_up_exactly() {
        // unit 221851 of N = 22 has a sieve of 7.3e9 clashes (the random units of N = 19..23
        // above reach 1.5e9): its sum carries into the high word
        let copying = copying_gpus().map(Vec::from);
        for gpus in [gpus(), copying].into_iter().flatten() {
            let plan = Plan::new(22, EngineChoice::Quadrant, None, None).unwrap();
            let fakes = fakes(&gpus, |f| f);
            let gpu = on_gpus(&fakes, &plan);
            let ids = [221851];
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            let (cpu, _) = count_ids(&on_cpu(&plan), &plan, &ids);
            assert_eq!(on_gpu, cpu);
            assert_eq!(executed.gpu_subtasks, 1);
            let most_clashes = fakes.iter().map(|f| f.most_clashes.load(Ordering::Relaxed));
            assert!(most_clashes.max().unwrap() > u64::from(u32::MAX));
        }
    }

    /// The GPU's counts of three random units of each N = 19..23 are the CPU's.
    fn random_units_of_19_to_23_agree(gpus: &[PairGpu]) {
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
            // a few units: their tables a row set at a time, as a shard's, but where a GPU
            // over a bus joins halves from them whole (N = 19 and 20's take 48 and 129 MiB)
            let joins = n <= 20 && gpus.iter().all(|gpu| !gpu.device.shares_memory);
            if joins {
                layout.keep_tables_whole_for_devices();
            }
            let never = AtomicBool::new(false);
            let budget = Budget::asked(u64::MAX);
            let prepared = layout.prepare(budget, ids.len(), (&Workers::this_thread(), 2), &never);
            prepared.unwrap().unwrap();
            let fakes = fakes(gpus, |f| f);
            let gpu = on_gpus(&fakes, &plan);
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            let (cpu, _) = count_ids(&on_cpu(&plan), &plan, &ids);
            assert_eq!(on_gpu, cpu, "n = {n}, units {ids:?}");
            assert_eq!(seen(&fakes, |f| &f.joined) > 0, joins, "n = {n}");
            // each unit's sieves went to the GPU (in one batch or a few)
            assert_eq!(executed.gpu_subtasks, ids.len(), "n = {n}");
            assert!(executed.gpu_dispatches > 0, "n = {n}");
        }
    }

    #[test]
    fn a_gpu_that_disagrees_with_a_spot_check_is_dropped_and_the_cpu_counts_on() {
        let Some((gpus, plan, ids, cpu, clean)) = n15_on_gpus() else {
            return;
        };
        // how many batches the run makes on this device (a few: a batch holds a million
        // patterns, and each thread sends its last when it has no unit left)
        let batches = clean.gpu_dispatches;
        assert!(batches > 0);
        // every sieve's first pattern is checked: the lie is found in the batch it is told
        let mut lies = vec![0, batches / 2];
        lies.dedup();
        for lie_at in lies {
            let gpu = on_gpus(
                &fakes(&gpus, |f| Fake {
                    lie_at: Some(lie_at),
                    ..f
                }),
                &plan,
            );
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            assert_eq!(on_gpu, cpu, "lie at {lie_at}");
            let notes = gpu.facts().notes;
            assert!(
                notes.len() == 1 && notes[0].contains("disagreed with a spot check"),
                "{notes:?}"
            );
            // the threads send nothing once one of them found the GPU wrong: besides the
            // batches sent by then (the wrong one among them), only one a thread was sending
            let sent = notes[0].split("; ").nth(1);
            let sent = sent.and_then(|s| s.split(' ').next()?.parse().ok());
            let dropped_after: u64 = sent.expect("the batches sent, said");
            assert!(dropped_after > lie_at, "{dropped_after} sent when dropped");
            let threads = workers().count() as u64;
            assert!(
                executed.gpu_dispatches <= dropped_after + threads,
                "{executed:?}, {dropped_after} sent when dropped"
            );
        }
    }

    #[test]
    fn sieves_larger_than_the_gpu_binds_are_counted_on_the_cpu_and_said() {
        let Some((gpus, plan, ids, cpu, whole)) = n15_on_gpus() else {
            return;
        };
        assert_eq!(whole.gpu_items_given_up, 0);
        // a GPU that binds nothing counts nothing; one that binds 8 KiB takes the smaller
        // sieves only
        for (most_bytes, some_on_gpu) in [(1, false), (8 << 10, true)] {
            let smaller = Arc::new(gpus[0].device.limited_to(most_bytes));
            let gpu = on_gpus(&fakes(&[PairGpu::on(&smaller)], |f| f), &plan);
            let (on_gpu, executed) = count_ids(&gpu, &plan, &ids);
            assert_eq!(on_gpu, cpu, "{most_bytes} bytes");
            let given_up = executed.gpu_items_given_up;
            assert!(given_up > 0, "{executed:?}");
            assert_eq!(executed.gpu_dispatches > 0, some_on_gpu, "{executed:?}");
            let notes = gpu.facts().notes;
            let said = format!("{given_up} of the units' sieves were larger than the GPU binds");
            assert!(notes.len() == 1 && notes[0].contains(&said), "{notes:?}");
        }
    }
}
