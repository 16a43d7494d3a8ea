//! The options of a count resolved once, against the board, the machine and the checkpoint
//! it resumes: the plan, and where and how it is counted. Every decision a run takes about
//! its engine, kernels, devices and threads is taken here, for the run, `merge --verify`,
//! and `scale` alike.

use crate::checkpoint::RunIdentity;
use crate::device::{DeviceChoice, Devices, AUTO_GPU_MIN_N};
use crate::engine::{Engine, EngineChoice};
use crate::error::Error;
use crate::memory::{Budget, Bytes, Room};
use crate::options::CountOptions;
use crate::plan::Plan;
use crate::race::RaceOptions;
use crate::subtask::Kernels;
use std::sync::atomic::AtomicBool;

/// Whether `auto` picks the quadrant engine for an `n`×`n` board whose tables may take
/// `memory_limit` bytes: where it measured faster than d4 (AVX2 Zen 3, one thread: N = 14,
/// 15 at 1.3×, 1.2×, N = 16, 17, 18 at 2.8×, 3.1×, 4.75×; two threads: N = 19 at 4.3×, N = 20
/// at 4.5–5.0× (d4 timed on one shard of eight); Zen 5, two threads, one shard of each
/// plan: N = 20 at 4.1×, N = 21 at 6.9×; at N = 13 d4 is faster), and only with its
/// tables: without them it searches halves, and is slower than d4 (N = 17, two threads, Zen 4:
/// 2.55 s against 1.36 s).
fn auto_takes_quadrant(n: usize, memory_limit: u64) -> bool {
    (AUTO_QUADRANT_MIN_N..=AUTO_QUADRANT_MAX_N).contains(&n)
        && crate::quadrant::tables_bytes(n) <= memory_limit
}

/// The smallest board `auto` counts with the quadrant engine.
const AUTO_QUADRANT_MIN_N: usize = 14;

/// The largest board `auto` counts with the quadrant engine: all it takes. Zen 5, whole runs
/// extrapolated from shards and units: N = 24 quadrant 600 core-hours against d4's 3,300,
/// N = 25 3,900 against 26,500, N = 26 150,000–160,000 against 270,000–410,000 (two d4
/// subtasks) and N = 27 0.8–0.9 million against 2.7–4.4 million (d4 extrapolated); N = 28
/// as the step before.
const AUTO_QUADRANT_MAX_N: usize = crate::quadrant::QUADRANT_MAX_N;

/// How a run counts its plan.
#[derive(Debug)]
pub(crate) struct Resolved {
    /// CPU worker threads.
    pub threads: usize,
    /// Whether they are pinned to cores.
    pub pin: bool,
    /// The kernels, resolved for the plan.
    pub kernels: Kernels,
    /// Where the plan is counted.
    pub devices: Devices,
    /// Bytes the quadrant engine's tables may take, as the process's room stands now.
    pub memory_limit: Budget,
    /// What a user may want to know of these decisions (a fallback for memory), a line each.
    pub notes: Vec<String>,
    /// The rival of `--device auto`'s race: the plan the GPUs would count instead, when the
    /// run races (this plan is then the CPU's).
    pub race: Option<Box<Rival>>,
}

/// The GPUs' side of a race: how they count the run's own plan (the quadrant engine's, its
/// pairs on the GPUs), and a winner the environment forces.
#[derive(Debug)]
pub(crate) struct Rival {
    pub resolved: Resolved,
    pub forced: Option<DeviceChoice>,
}

/// The devices a count of an `n`×`n` board asks for: `gpus` (adapter indices) picks
/// adapters and implies a GPU; `auto` takes every real GPU from [`AUTO_GPU_MIN_N`] on.
/// `cpu_only`: the quadrant engine was named, which `auto` counts on the CPU (its GPU path is
/// asked for by name, `gpu` or `gpu-only`).
fn choose_devices(
    n: usize,
    choice: DeviceChoice,
    gpus: Option<&[usize]>,
    cpu_only: bool,
) -> Result<Devices, Error> {
    if gpus.is_some() && choice == DeviceChoice::Cpu {
        return Err(Error::GpusOnCpu);
    }
    let auto = choice == DeviceChoice::Auto && gpus.is_none();
    if choice == DeviceChoice::Cpu || (auto && (cpu_only || n < AUTO_GPU_MIN_N)) {
        return Ok(Devices::Cpu);
    }
    #[cfg(feature = "gpu")]
    {
        let share = choice != DeviceChoice::GpuOnly;
        if auto {
            let gpus = crate::gpu::open_real();
            return Ok(if gpus.is_empty() {
                Devices::Cpu
            } else {
                Devices::Gpus { gpus, share }
            });
        }
        let gpus = crate::gpu::open(gpus, true)?;
        Ok(Devices::Gpus { gpus, share })
    }
    // (`auto` without the feature: the CPU, as where no GPU opens)
    #[cfg(not(feature = "gpu"))]
    if auto {
        Ok(Devices::Cpu)
    } else {
        Err(Error::Failed(
            "this nqueens was built without the gpu feature (cargo build --features gpu)".into(),
        ))
    }
}

/// What a count's resolution knows besides its options: the run it resumes, what that run's
/// race chose (if it raced), and whether it is one shard of many (which never races and
/// never takes a GPU by itself: the records of one array merge whatever nodes ran them).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Context<'a> {
    pub resumed: Option<&'a RunIdentity>,
    pub raced: Option<DeviceChoice>,
    pub sharded: bool,
}

/// The plan and settings of a count of an `n`×`n` board (or of the completions of
/// `prefix`) with `opts`, in `context`.
///
/// The engine `auto` takes: the engine a resumed run recorded (when it is the same run); on a
/// GPU the full-symmetry engine; on the CPU the quadrant engine where it measured fastest
/// (N = 14 to 28) if its tables fit the memory limit and it has the kernel asked for, unless
/// fundamental solutions or a split depth are asked for; the full-symmetry engine otherwise
/// (mirror halving below N = 4).
///
/// Where `auto` counts: see [`auto_devices`]; where the quadrant engine applies to a count
/// expected to last and a GPU opens, the resolution names the GPUs, counting the same plan,
/// as the rival of a race ([`Resolved::race`]).
pub(crate) fn resolve(
    n: usize,
    prefix: Option<&[usize]>,
    opts: &CountOptions,
    context: Context,
    stop: &AtomicBool,
) -> Result<(Plan, Resolved), Error> {
    crate::board::check_n(n)?;
    // the quadrant tables' size, counted once per process, is the slow part of a resolution
    // (on 2 cores 0.15 s at N = 23, 12 s at N = 27, 21 s at 28): a stop ends it
    let quadrant_may = matches!(opts.engine, EngineChoice::Auto | EngineChoice::Quadrant)
        && n <= crate::quadrant::QUADRANT_MAX_N;
    if quadrant_may && crate::quadrant::tables_bytes_until(n, stop).is_none() {
        return Err(Error::Interrupted);
    }
    let mut opts = opts.clone();
    if let Some(saved) = context.resumed {
        // the same run, resumed: auto takes the engine and depth it ran (another run is
        // refused when the checkpoint is read)
        let same_run = saved.prefix.as_deref() == prefix && saved.unique == opts.unique;
        if opts.engine == EngineChoice::Auto && same_run {
            opts.engine = saved.engine.choice();
        }
        if saved.split_depth > 0 {
            opts.split_depth.get_or_insert(saved.split_depth);
        }
    }
    let fit = Fit::to_room(&opts)?;
    let memory_limit = fit.memory_limit;
    // whether auto would take the quadrant engine on the CPU (at any memory limit, and at
    // the limits as set)
    let quadrant_applies = opts.engine == EngineChoice::Auto
        && prefix.is_none()
        && opts.split_depth.is_none()
        && !opts.unique
        && crate::quadrant::PairKernel::resolve(opts.kernel).is_ok()
        && auto_takes_quadrant(n, u64::MAX);
    let quadrant_fits = quadrant_applies && auto_takes_quadrant(n, fit.plan_budget.bytes);
    let mut notes: Vec<String> = fit.note.into_iter().collect();
    let cpu_only = opts.engine == EngineChoice::Quadrant;
    let (devices, rival) = if opts.device == DeviceChoice::Auto && opts.gpus.is_none() {
        let auto = auto_devices(
            n,
            (context, opts.race),
            cpu_only,
            quadrant_fits,
            fit.threads,
        )?;
        notes.extend(auto.note);
        (auto.devices, auto.race)
    } else {
        let devices = choose_devices(n, opts.device, opts.gpus.as_deref(), cpu_only)?;
        notes.extend(race_not_taken(opts.device, context.raced, &devices));
        (devices, None)
    };
    let quadrant_would = quadrant_applies && !devices.has_gpu();
    let tables_matter = quadrant_would
        || (opts.engine == EngineChoice::Quadrant && n <= crate::quadrant::QUADRANT_MAX_N);
    if tables_matter {
        notes.extend(crate::quadrant::held_limit_note(
            n,
            opts.memory_limit,
            memory_limit.bytes,
        ));
    }
    // the plan from the limits as set, never from what is mapped at this moment: the same
    // command makes the same plan (where the tables then do not fit the room, each unit's
    // halves are searched: the same plan, slower)
    let engine = match opts.engine {
        EngineChoice::Auto if quadrant_would && quadrant_fits => EngineChoice::Quadrant,
        EngineChoice::Auto if quadrant_would => {
            notes.push(crate::quadrant::over_limit_note(
                n,
                fit.plan_budget,
                "counted with d4",
            ));
            EngineChoice::Auto
        }
        named => named,
    };
    let plan = Plan::new(n, engine, prefix, opts.split_depth)?;
    // refused here, before a run opens its checkpoint
    if plan.quadrant_layout().is_some() && opts.unique {
        return Err(Error::TotalsOnly(Engine::Quadrant));
    }
    // the rival of a race: the same plan, on the GPUs with the CPU threads sharing
    let race = match rival {
        Some((gpus, forced)) => {
            let resolved = settings(&plan, &opts, gpus, memory_limit, fit.threads)?;
            Some(Box::new(Rival { resolved, forced }))
        }
        None => None,
    };
    let mut resolved = settings(&plan, &opts, devices, memory_limit, fit.threads)?;
    resolved.notes.extend(notes);
    resolved.race = race;
    Ok((plan, resolved))
}

/// Where `auto` counts, and the GPUs of a race when it races.
struct AutoDevices {
    devices: Devices,
    race: Option<(Devices, Option<DeviceChoice>)>,
    note: Option<String>,
}

/// Where `--device auto` counts an `n`×`n` board on `threads` CPU threads, taken in this
/// order: on the CPU for a shard of many and a resumed run whose race chose the CPU; on the
/// GPUs a resumed run's race chose (on the CPU, with a note, where none opens now); on the
/// CPU for the quadrant engine named (`cpu_only`); where the quadrant engine would count
/// (`quadrant_fits`), a race when the count is expected to last at least
/// [`crate::race::RACE_MIN_SECONDS`] and a GPU opens, the CPU otherwise; else every real
/// GPU from [`AUTO_GPU_MIN_N`] (the `d4` engine is the only one there: prefixes,
/// fundamental solutions, a split depth, tables over the memory limit).
fn auto_devices(
    n: usize,
    (context, race): (Context, RaceOptions),
    cpu_only: bool,
    quadrant_fits: bool,
    threads: usize,
) -> Result<AutoDevices, Error> {
    let cpu = |note: Option<String>| AutoDevices {
        devices: Devices::Cpu,
        race: None,
        note,
    };
    if context.sharded {
        return Ok(cpu(None));
    }
    // a resumed run counts where its race chose (the GPUs for its quadrant plan, which it
    // names), the one note on that race saying where
    let began = "device auto: the race when this run began chose the";
    match context.raced {
        Some(DeviceChoice::Gpu) => {
            return Ok(match open_for_race(race.software_gpu) {
                Some(devices) => AutoDevices {
                    devices,
                    race: None,
                    note: Some(format!("{began} GPU: counted on the GPU")),
                },
                None => cpu(Some(format!(
                    "{began} GPU, and none opens now ({}): counted on the CPU",
                    why_no_gpu(race.software_gpu)
                ))),
            })
        }
        Some(_) => return Ok(cpu(Some(format!("{began} CPU: counted on the CPU")))),
        None => {}
    }
    if cpu_only {
        return Ok(cpu(None));
    }
    if quadrant_fits {
        if !race.worth_racing(n, threads) {
            return Ok(cpu(None));
        }
        return Ok(match open_for_race(race.software_gpu) {
            Some(gpus) => AutoDevices {
                devices: Devices::Cpu,
                race: Some((gpus, race.forced())),
                note: None,
            },
            None => cpu(refused_note()),
        });
    }
    let devices = choose_devices(n, DeviceChoice::Auto, None, false)?;
    let note = match devices {
        Devices::Cpu => refused_note(),
        #[cfg(feature = "gpu")]
        Devices::Gpus { .. } => None,
    };
    Ok(AutoDevices {
        devices,
        race: None,
        note,
    })
}

/// The note of a resumed run whose race chose `raced`, where a device was named (`device`,
/// not `auto`): the race's choice is not taken, the count runs on `devices`.
fn race_not_taken(
    device: DeviceChoice,
    raced: Option<DeviceChoice>,
    devices: &Devices,
) -> Option<String> {
    let side = if devices.has_gpu() { "GPU" } else { "CPU" };
    raced.map(|chose| {
        format!(
            "device {}: the race when this run began chose the {}; counted on the {side}, as asked",
            device.name(),
            chose.name().to_uppercase()
        )
    })
}

/// Where `auto` went on without a GPU its known-answer check refused: why, for a note.
fn refused_note() -> Option<String> {
    #[cfg(feature = "gpu")]
    return crate::gpu::refused().map(|why| format!("device auto: {why}: counted on the CPU"));
    #[cfg(not(feature = "gpu"))]
    None
}

/// Why no GPU opened for `auto` (where `software` lets a CPU-emulated adapter count).
fn why_no_gpu(software: bool) -> String {
    #[cfg(feature = "gpu")]
    {
        let adapters = match crate::gpu::adapters() {
            Ok(adapters) => adapters,
            Err(e) => return e.to_string(),
        };
        let names: Vec<&str> = adapters.iter().map(|a| a.name.as_str()).collect();
        let names = names.join(", ");
        if adapters.is_empty() {
            return "no GPU adapter is found".into();
        }
        if !software && adapters.iter().all(|a| a.software) {
            return format!(
                "the only adapter, {names}, runs on the CPU; NQUEENS_RACE_SOFTWARE_GPU=1 lets it count"
            );
        }
        match crate::gpu::open(None, software) {
            Err(e) => e.to_string(),
            Ok(_) => format!("{names} is not a GPU `auto` counts on here"),
        }
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = software;
        "this nqueens was built without the gpu feature".into()
    }
}

/// The GPUs `auto` races on (or counts on, as a race chose), the CPU threads sharing: every
/// real one, or, where `software` allows it and there is no real one, a CPU-emulated one
/// (lavapipe, for tests). `None` when none opens.
fn open_for_race(software: bool) -> Option<Devices> {
    #[cfg(feature = "gpu")]
    {
        let gpus = if software {
            crate::gpu::open(None, true).unwrap_or_default()
        } else {
            crate::gpu::open_real()
        };
        (!gpus.is_empty()).then_some(Devices::Gpus { gpus, share: true })
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = software;
        None
    }
}

/// The settings of a count of the given `plan` with `opts` (a plan cut by hand, or one whose
/// subtasks `merge --verify` recounts).
pub(crate) fn for_plan(plan: &Plan, opts: &CountOptions) -> Result<Resolved, Error> {
    let cpu_only = plan.quadrant_layout().is_some();
    let devices = choose_devices(plan.n(), opts.device, opts.gpus.as_deref(), cpu_only)?;
    let fit = Fit::to_room(opts)?;
    settings(plan, opts, devices, fit.memory_limit, fit.threads)
}

/// A run sized to the process's room ([`Room`]): its most worker threads, its tables'
/// budget, and a note when it gets fewer threads than `opts` ask for.
struct Fit {
    threads: usize,
    /// The tables' budget as the room stands now.
    memory_limit: Budget,
    /// The tables' budget from the limits as set, beside one thread: what the plan is
    /// chosen by, whatever the threads.
    plan_budget: Budget,
    note: Option<String>,
}

impl Fit {
    fn to_room(opts: &CountOptions) -> Result<Fit, Error> {
        let room = Room::now();
        room.check()?;
        let asked = opts.resolved_threads()?;
        let threads = room.threads(asked);
        let note = (threads < asked).then(|| {
            format!(
                "{asked} threads do not fit the {} of address space this process has left (ulimit -v): at most {threads} are started",
                Bytes(room.address_space_left().unwrap_or(0))
            )
        });
        Ok(Fit {
            threads,
            memory_limit: room.tables(opts.memory_limit, threads),
            // the plan never depends on the threads: it is chosen as for one (more threads
            // than fit beside the tables then search halves: the same plan, slower)
            plan_budget: room.tables_as_set(opts.memory_limit, 1),
            note,
        })
    }
}

fn settings(
    plan: &Plan,
    opts: &CountOptions,
    devices: Devices,
    memory_limit: Budget,
    most_threads: usize,
) -> Result<Resolved, Error> {
    let threads = match &devices {
        // a core for each GPU's feeder thread, which cuts its items (the quadrant engine's
        // threads feed the GPUs themselves: each builds the sieves it hands one)
        #[cfg(feature = "gpu")]
        Devices::Gpus { gpus, .. }
            if opts.threads.is_none() && plan.quadrant_layout().is_none() =>
        {
            opts.resolved_threads()?.saturating_sub(gpus.len()).max(1)
        }
        _ => opts.resolved_threads()?,
    }
    .min(most_threads);
    Ok(Resolved {
        threads,
        pin: opts.pin,
        kernels: Kernels::resolve(plan, opts.kernel)?,
        devices,
        memory_limit,
        notes: Vec::new(),
        race: None,
    })
}

impl CountOptions {
    /// The plan these options give for an `n`×`n` board (with an optional 0-based prefix).
    /// It depends on N, the engine, the prefix and the split depth, never on the threads.
    ///
    /// `auto` runs the quadrant engine where it measured fastest on the CPU (N = 14 to 28)
    /// and its tables fit the memory limit, unless fundamental solutions or a split depth are
    /// asked for; the full-symmetry engine otherwise, and on a GPU. Where `--device auto`
    /// would race the CPU against a GPU ([`DeviceChoice::Auto`]) this is the CPU's plan; the
    /// race may count the full-symmetry plan instead. A shard of many never races.
    ///
    /// ```
    /// use nqueens::CountOptions;
    /// let plan = CountOptions::default().plan(16, None).unwrap();
    /// assert_eq!(plan.engine().name(), "quadrant");
    /// // a memory limit the quadrant engine's tables do not fit: the full-symmetry engine
    /// let tight = CountOptions { memory_limit: Some(1 << 20), ..CountOptions::default() };
    /// assert_eq!(tight.plan(16, None).unwrap().engine().name(), "d4");
    /// ```
    pub fn plan(&self, n: usize, prefix: Option<&[usize]>) -> Result<Plan, Error> {
        Ok(resolve(n, prefix, self, Context::default(), &AtomicBool::new(false))?.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_takes_quadrant_from_14_to_28_where_its_tables_fit() {
        assert!(!auto_takes_quadrant(13, u64::MAX));
        assert!(auto_takes_quadrant(14, u64::MAX) && auto_takes_quadrant(24, u64::MAX));
        assert!(!auto_takes_quadrant(29, u64::MAX));
        assert!(!auto_takes_quadrant(16, 1 << 20));
    }

    #[test]
    fn auto_takes_the_cpu_for_small_boards_and_cpu_only_engines() {
        // no GPU is opened for these, whatever the machine has
        let cpu = |n, choice, cpu_only| {
            matches!(choose_devices(n, choice, None, cpu_only), Ok(Devices::Cpu))
        };
        assert!(cpu(AUTO_GPU_MIN_N - 1, DeviceChoice::Auto, false));
        assert!(cpu(32, DeviceChoice::Auto, true));
        assert!(cpu(32, DeviceChoice::Cpu, false));
        assert_eq!(
            choose_devices(8, DeviceChoice::Cpu, Some(&[0]), false).unwrap_err(),
            Error::GpusOnCpu
        );
    }
}
