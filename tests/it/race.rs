//! `--device auto`'s race between the CPU and the GPUs on the quadrant engine's one plan, on
//! whatever adapter the machine has (lavapipe in CI, allowed to race by `RaceOptions::software_gpu`,
//! the command line's `NQUEENS_RACE_SOFTWARE_GPU=1`): exact totals whichever side wins,
//! the choice said and recorded, checkpoints taken during and after the race, shards that
//! never race.

use crate::gpu::adapter;
use crate::oeis::known;
use crate::util::{json, nqueens, run_stopped};
use nqueens::{count, run, CountOptions, DeviceChoice, Hooks, RaceOptions, RunRequest, Shard};
use std::path::Path;

/// Options under which every count races (on any adapter), won by `winner` when given.
fn racing(winner: Option<DeviceChoice>) -> CountOptions {
    CountOptions {
        threads: Some(2),
        race: RaceOptions {
            software_gpu: true,
            min_seconds: 0.0,
            winner,
        },
        ..CountOptions::default()
    }
}

/// The JSON body of a checkpoint file (the line before its checksum).
fn checkpoint_body(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap();
    json(text.lines().next().unwrap())
}

/// Runs the program's `args` (a count with `--json`) under the variables `vars`: its JSON
/// and its stderr, once it has succeeded.
fn count_json(args: &[&str], vars: &[(&str, &str)]) -> (serde_json::Value, String) {
    let mut command = nqueens();
    command.args(args);
    for (name, value) in vars {
        command.env(name, value);
    }
    let out = command.output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    (json(&String::from_utf8(out.stdout).unwrap()), err)
}

/// Variables under which every count races, won by the GPU.
const GPU_WINS: [(&str, &str); 3] = [
    ("NQUEENS_RACE_SOFTWARE_GPU", "1"),
    ("NQUEENS_RACE_MIN_SECONDS", "0"),
    ("NQUEENS_RACE_WINNER", "gpu"),
];

/// The subtasks of stride shard 0/100 of the quadrant plan of N: the CPU's calibration.
fn cpu_calibration(n: usize) -> usize {
    let plan = CountOptions::default().plan(n, None).unwrap();
    assert_eq!(plan.engine().name(), "quadrant");
    Shard::new(0, 100).unwrap().len(plan.len())
}

#[test]
fn a_race_counts_exactly_whichever_side_wins() {
    if adapter("race_exact").is_none() {
        return;
    }
    for winner in [Some(DeviceChoice::Cpu), Some(DeviceChoice::Gpu), None] {
        let c = count(15, &racing(winner)).unwrap();
        assert_eq!(c.total, known(15).0, "{winner:?}");
        let race = c.device_choice.expect("the count raced");
        assert_eq!((race.shards, race.forced), (100, winner.is_some()));
        assert!(race.cpu_s > 0.0 && race.gpu_s > 0.0, "{race:?}");
        match winner {
            Some(side) => assert_eq!(race.chose, side),
            // the GPUs win only by finishing their shard sooner
            None => assert_eq!(
                race.chose == DeviceChoice::Gpu,
                race.gpu_finished && race.gpu_s < race.cpu_s,
                "{race:?}"
            ),
        }
        // one plan, both calibration shards in it; the winner counted the rest
        let on_gpu = race.chose == DeviceChoice::Gpu;
        assert_eq!(c.engine.name(), "quadrant");
        assert_eq!(c.device != "cpu", on_gpu, "{}", c.device);
        assert!(c.gpu_subtasks > 0 || !on_gpu, "{c:?}");
        let note = c.notes.iter().find(|n| n.starts_with("device auto: 1/100"));
        assert!(note.is_some(), "{:?}", c.notes);
    }
}

#[test]
fn a_checkpoint_keeps_the_choice_and_a_resume_never_races_again() {
    if adapter("race_checkpoint").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let engine = "quadrant";
    for (winner, other) in [
        (DeviceChoice::Gpu, DeviceChoice::Cpu),
        (DeviceChoice::Cpu, DeviceChoice::Gpu),
    ] {
        let path = dir.path().join(format!("{}.ckpt", winner.name()));
        let request = |winner| RunRequest {
            checkpoint: Some(path.clone()),
            ..RunRequest::new(15, racing(Some(winner)), None)
        };
        let first = run(&request(winner), &Hooks::default()).unwrap();
        let race = first.counts.device_choice.unwrap();
        assert_eq!((race.chose, first.counts.engine.name()), (winner, engine));
        let body = checkpoint_body(&path);
        assert_eq!(body["run"]["engine"], engine);
        assert_eq!(body["device_choice"]["chose"], winner.name());
        // resumed with the other winner forced: a race would count there, a resume does not
        let again = run(&request(other), &Hooks::default()).unwrap();
        assert_eq!(again.counts.total, known(15).0);
        assert_eq!(again.counts.engine.name(), engine);
        assert_eq!(again.resumed_subtasks, again.parts.len());
        assert_eq!(
            again.counts.device_choice,
            Some(race),
            "the race of the first run"
        );
    }
}

#[test]
fn a_checkpoint_taken_during_the_race_resumes_exactly_on_the_cpu() {
    if adapter("race_stopped").is_none() {
        return;
    }
    let calibration = cpu_calibration(16);
    let dir = tempfile::tempdir().unwrap();
    // stopped at the CPU's first finished subtask, and as the CPU ends its shard (the GPUs'
    // half of the race then meets the stop)
    for stop_at in [1, calibration] {
        let path = dir.path().join(format!("{stop_at}.ckpt"));
        let request = |winner| RunRequest {
            checkpoint: Some(path.clone()),
            ..RunRequest::new(16, racing(Some(winner)), None)
        };
        run_stopped(&request(DeviceChoice::Gpu), |done, _| done >= stop_at);
        let body = checkpoint_body(&path);
        assert_eq!(body["run"]["engine"], "quadrant");
        assert!(body.get("device_choice").is_none(), "{body}");
        // the CPU's finished subtasks resume on the CPU, and the race is not run again
        let resumed = run(&request(DeviceChoice::Gpu), &Hooks::default()).unwrap();
        assert_eq!(resumed.counts.total, known(16).0, "stopped at {stop_at}");
        assert_eq!(resumed.counts.engine.name(), "quadrant");
        assert_eq!(resumed.counts.device_choice, None);
        assert!(
            resumed.resumed_subtasks >= stop_at,
            "{}",
            resumed.resumed_subtasks
        );
        // the CPU's shard, and what the GPUs' finished of theirs before the stop reached them
        assert!(resumed.resumed_subtasks <= 2 * calibration + 1);
    }
}

#[test]
fn shards_never_race() {
    if adapter("race_shards").is_none() {
        return;
    }
    let request = RunRequest {
        shard: Shard::new(1, 4).unwrap(),
        ..RunRequest::new(15, racing(Some(DeviceChoice::Gpu)), None)
    };
    let outcome = run(&request, &Hooks::default()).unwrap();
    let c = &outcome.counts;
    assert_eq!((c.engine.name(), c.device.as_str()), ("quadrant", "cpu"));
    assert_eq!(c.device_choice, None);
}

#[test]
fn the_command_line_says_what_the_race_measured_and_chose() {
    if adapter("race_cli").is_none() {
        return;
    }
    let (v, err) = count_json(&["count", "15", "--json", "--stats", "-t", "2"], &GPU_WINS);
    assert_eq!(v["total"], known(15).0.to_string());
    assert_eq!(
        (v["engine"].as_str(), v["device_choice"]["chose"].as_str()),
        (Some("quadrant"), Some("gpu"))
    );
    assert_ne!(v["device"], "cpu", "{v}");
    assert_eq!(v["device_choice"]["shards"], 100);
    assert!(v["device_choice"]["cpu_s"].as_f64().unwrap() > 0.0, "{v}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("device auto:")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].starts_with("nqueens: note: device auto: 1/100 of the count took"));
    assert!(err.contains(" device_choice=gpu race_shards=100 "), "{err}");
    // without the variables this machine's software adapter never races
    let (code, out, _) = crate::util::run(&["count", "15", "--json"]);
    assert_eq!(code, 0);
    assert!(json(&out).get("device_choice").is_none(), "{out}");
}

#[test]
fn a_resume_whose_gpu_no_longer_opens_counts_on_the_cpu_and_says_so() {
    if adapter("race_gpu_gone").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ck").display().to_string();
    let args = ["count", "15", "--json", "-t", "2", "--checkpoint", &path];
    // a checkpoint whose race chose the GPU, one subtask of it forgotten so there is work left
    count_json(&args, &GPU_WINS);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut body = json(text.lines().next().unwrap());
    assert_eq!(body["device_choice"]["chose"], "gpu");
    body["done"][0]["first"] = (body["done"][0]["first"].as_u64().unwrap() + 1).into();
    for list in ["total", "unique", "nodes"] {
        body["done"][0][list].as_array_mut().unwrap().remove(0);
    }
    let body = body.to_string();
    let crc = crc32fast::hash(body.as_bytes());
    std::fs::write(&path, format!("{body}\ncrc32 {crc:08x}\n")).unwrap();
    // no Vulkan driver now: the GPU the race chose does not open
    let no_driver = [
        ("NQUEENS_RACE_SOFTWARE_GPU", "1"),
        ("VK_DRIVER_FILES", "/nonexistent/icd.json"),
        ("VK_ICD_FILENAMES", "/nonexistent/icd.json"),
    ];
    let (v, err) = count_json(&args, &no_driver);
    assert_eq!(v["total"], known(15).0.to_string());
    assert_eq!(
        (v["engine"].as_str(), v["device"].as_str()),
        (Some("quadrant"), Some("cpu"))
    );
    assert!(
        err.contains(
            "chose the GPU, and none opens now (no GPU adapter is found): counted on the CPU"
        ),
        "{err}"
    );
    // the adapter opens again: a GPU counts at once, a software one (lavapipe) only with
    // NQUEENS_RACE_SOFTWARE_GPU
    let devices = nqueens().arg("devices").output().unwrap();
    let software = String::from_utf8_lossy(&devices.stdout).contains(" software ");
    let (v, err) = count_json(&args, &[]);
    assert_eq!(v["total"], known(15).0.to_string());
    if software {
        assert!(
            err.contains("none opens now (the only adapter, ")
                && err.contains(", runs on the CPU; NQUEENS_RACE_SOFTWARE_GPU=1 lets it count)"),
            "{err}"
        );
    } else {
        assert!(
            !err.contains("none opens now") && v["device"] != "cpu",
            "{err}"
        );
    }
}

/// What the race measured is said as soon as it is decided: the library hands it to
/// `Hooks::on_race` before the rest is counted, and a run stopped then says it.
#[test]
fn a_run_stopped_after_the_race_says_what_it_measured() {
    if adapter("race_stopped").is_none() {
        return;
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let seen = std::sync::Mutex::new(Vec::new());
    let on_race = |race: &nqueens::DeviceRace| {
        seen.lock().unwrap().push(race.chose);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    };
    let hooks = Hooks {
        cancel: Some(&stop),
        on_race: Some(&on_race),
        on_plan: None,
        ..Hooks::default()
    };
    let request = RunRequest::new(16, racing(Some(DeviceChoice::Cpu)), None);
    assert!(matches!(
        run(&request, &hooks),
        Err(nqueens::Error::Interrupted)
    ));
    assert_eq!(*seen.lock().unwrap(), [DeviceChoice::Cpu]);
    // the command line: the race's line comes first; once it is read, a SIGINT stops the
    // rest (N = 20 on the CPU: tens of seconds left) and the run ends with both said
    let cpu_wins = [
        ("NQUEENS_RACE_SOFTWARE_GPU", "1"),
        ("NQUEENS_RACE_MIN_SECONDS", "0"),
        ("NQUEENS_RACE_WINNER", "cpu"),
    ];
    let mut command = std::process::Command::new(crate::util::bin());
    command.args(["count", "20", "-t", "2"]).envs(cpu_wins);
    command
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        let read = std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(
            read > 0,
            "the run ended before its race was said: {lines:?}"
        );
        let said = line.contains("device auto: 1/100 of the count took");
        lines.push(line);
        if said {
            break;
        }
    }
    crate::util::kill("-INT", child.id());
    let rest = std::io::read_to_string(stderr).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{lines:?} {rest}");
    assert!(rest.contains("nqueens: interrupted"), "{rest}");
    assert!(!rest.contains("device auto:"), "said once: {rest}");
}

#[test]
fn both_calibration_shards_are_part_of_the_count_and_of_its_checkpoint() {
    if adapter("race_reuse").is_none() {
        return;
    }
    let n = 16;
    let plan = CountOptions::default().plan(n, None).unwrap();
    let calibration = cpu_calibration(n) + Shard::new(1, 100).unwrap().len(plan.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ck");
    let request = RunRequest {
        checkpoint: Some(path.clone()),
        ..RunRequest::new(n, racing(Some(DeviceChoice::Gpu)), None)
    };
    // stopped at the first subtask the GPUs count after the race
    run_stopped(&request, |done, _| done > calibration);
    // the plan's checkpoint holds both shards: the CPU's ids 0, 100, ..., the GPUs' 1, 101, ...
    let body = checkpoint_body(&path);
    assert_eq!(body["run"]["engine"], "quadrant");
    assert_eq!(body["device_choice"]["chose"], "gpu");
    let mut held = Vec::new();
    for run in body["done"].as_array().unwrap() {
        let first = run["first"].as_u64().unwrap() as usize;
        held.extend(first..first + run["total"].as_array().unwrap().len());
    }
    let shards: Vec<usize> = (0..plan.len()).filter(|id| id % 100 < 2).collect();
    assert!(shards.iter().all(|id| held.contains(id)), "{held:?}");
    assert!(held.len() > shards.len() && held.len() < plan.len());
    let resumed = run(&request, &Hooks::default()).unwrap();
    assert_eq!(resumed.counts.total, known(n).0);
    assert_eq!(resumed.counts.engine.name(), "quadrant");
    assert_eq!(resumed.resumed_subtasks, held.len());
}
