//! Every input gets a clear answer (round five): the GPU path under an address-space limit,
//! one rule for every environment variable, one true note on a resumed race, a stop while
//! the plan is made, and the small answers (a forced race's `--stats`, the kernels a
//! refusal offers, the switch to `d4` said up front).

#[cfg(feature = "gpu")]
use crate::oeis::known;
use crate::util::{bin, kill, wait_until_caught, SIZES_NOT_KEPT};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A race on lavapipe, for every count where both ways apply.
#[cfg(feature = "gpu")]
const RACE: [(&str, &str); 2] = [
    ("NQUEENS_RACE_SOFTWARE_GPU", "1"),
    ("NQUEENS_RACE_MIN_SECONDS", "0"),
];

/// Environment variables a command runs with.
type Vars<'a> = &'a [(&'a str, &'a str)];

/// `nqueens ARGS` under `ulimit -v KIB`, with the environment `vars`.
fn limited(kib: u64, args: &str, vars: Vars) -> Output {
    let script = format!("ulimit -v {kib} && exec '{}' {args}", bin().display());
    let mut command = Command::new("sh");
    command.args(["-c", &script]);
    for (name, value) in vars {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// Item 1: the quadrant engine on a GPU, `--device gpu` beside the CPU and a race the GPU
/// must win, under address-space limits from 150 MB to 3 GB: each ends with the exact total
/// (exit 0) or with one line naming what did not fit and what to do (exit 1), never by a
/// signal (SIGSEGV inside the driver's failed mapping before, or an abort in wgpu).
#[cfg(feature = "gpu")]
#[test]
fn the_gpu_path_under_an_address_space_limit_counts_or_says_what_did_not_fit() {
    if crate::gpu::adapter("gpu path under ulimit -v").is_none() {
        return;
    }
    let race = [RACE[0], RACE[1], ("NQUEENS_RACE_WINNER", "gpu")];
    let runs: [(&str, usize, Vars); 4] = [
        ("count 16 --engine quadrant --device gpu-only", 16, &[]),
        ("count 17 --engine quadrant --device gpu", 17, &[]),
        ("count 15 --engine d4 --device gpu-only", 15, &[]),
        ("count 16", 16, &race),
    ];
    let mut counted = 0;
    for mb in [150, 300, 600, 900, 1000, 1100, 1200, 1300, 1500, 2000, 3000] {
        for (args, n, vars) in runs {
            let out = limited(mb * 1000, args, vars);
            let err = String::from_utf8_lossy(&out.stderr);
            let what = format!("{args} under {mb} MB: {err}");
            match out.status.code() {
                Some(0) => {
                    let total = String::from_utf8_lossy(&out.stdout);
                    assert_eq!(total.trim(), known(n).0.to_string(), "{what}");
                    counted += 1;
                }
                Some(1) => {
                    let lines: Vec<&str> = err.lines().filter(|l| !l.contains("note:")).collect();
                    assert_eq!(lines.len(), 1, "{what}");
                    assert!(lines[0].contains("(ulimit -v)"), "{what}");
                    assert!(lines[0].contains("--device cpu"), "{what}");
                    assert!(out.stdout.is_empty(), "{what}");
                }
                other => panic!("ended by {other:?} ({:?}): {what}", out.status),
            }
        }
    }
    // the limits that leave room count on the GPU
    assert!(counted >= 8, "only {counted} of the runs counted");
    // listing the adapters alone aborted in wgpu at 300 MB
    for mb in [150, 300, 600] {
        let out = limited(mb * 1000, "devices", &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert!(!out.stdout.is_empty(), "devices under {mb} MB"),
            Some(1) => assert!(err.trim().ends_with("raise the limit"), "{mb} MB: {err}"),
            other => panic!("devices under {mb} MB ended by {other:?}: {err}"),
        }
    }
}

/// Item 1: the race that chose the GPU, under a limit its later buffers do not fit, counts
/// the rest on the CPU with a note (exact total, exit 0); and `auto` whose GPU cannot open
/// there says why.
#[cfg(feature = "gpu")]
#[test]
fn auto_counts_on_the_cpu_where_the_gpu_has_no_room() {
    if crate::gpu::adapter("auto without room").is_none() {
        return;
    }
    for mb in [150, 900, 1100, 1200] {
        let out = limited(mb * 1000, "count 16 --json", &RACE);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{mb} MB: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["total"], known(16).0.to_string(), "{mb} MB: {err}");
        if v["device"] == "cpu" {
            assert!(err.contains("counted on the CPU"), "{mb} MB: {err}");
        }
    }
}

/// Item 2: `NQUEENS_THREADS` set to nothing or to spaces is as if unset, in every command
/// that takes threads (it was a usage error in `count`, `list`, `merge` and `--dry-run`); a
/// bad value is a usage error naming the variable in each.
#[test]
fn an_empty_threads_variable_is_unset_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let shards = crate::util::shard_files(dir.path(), "shard", 10, 2, &["--engine", "d4"]);
    let commands: [&[&str]; 5] = [
        &["count", "8"],
        &["count", "8", "--dry-run"],
        &["list", "6", "--limit", "1"],
        &["merge", &shards[0], &shards[1], "--verify", "1"],
        &["scale", "6", "--repeat", "1", "--format", "csv"],
    ];
    for args in commands {
        for value in ["", "  "] {
            let out = Command::new(bin())
                .args(args)
                .env("NQUEENS_THREADS", value)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?} with '{value}': {err}");
            assert!(!out.stdout.is_empty(), "{args:?}");
        }
        let out = Command::new(bin())
            .args(args)
            .env("NQUEENS_THREADS", "abc")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let named = "invalid value 'abc' for the variable NQUEENS_THREADS";
        assert!(err.contains(named), "{args:?}: {err}");
    }
    // a list is scale's; a count takes one
    let out = Command::new(bin())
        .args(["count", "8"])
        .env("NQUEENS_THREADS", "1,2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one thread count"));
}

/// Item 3: a checkpoint whose race chose the GPU, resumed without the race's variables,
/// with `--device cpu` and with them: one note on the race each time, true to where the
/// count ran (JSON `device`); it said "counted on the GPU (as NQUEENS_RACE_WINNER says)"
/// beside "counted on the CPU" before. `--stats` says the race was forced, as JSON does.
#[cfg(feature = "gpu")]
#[test]
fn a_resumed_race_gets_one_true_note() {
    if crate::gpu::adapter("a resumed race").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let forced = [RACE[0], RACE[1], ("NQUEENS_RACE_WINNER", "gpu")];
    // the race decided and recorded, then a stop: the file holds the GPU's choice
    let mut child = Command::new(bin())
        .args(["count", "18", "--checkpoint"])
        .arg(&ck)
        .args(["--checkpoint-every", "0.1"])
        .envs(forced)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let raced = crate::util::read_stderr_until(&mut child, "counted on the GPU");
    assert!(raced.contains("as NQUEENS_RACE_WINNER says"), "{raced}");
    while !std::fs::read_to_string(&ck).is_ok_and(|t| t.contains("\"chose\":\"gpu\"")) {
        std::thread::sleep(Duration::from_millis(20));
    }
    kill("-INT", child.id());
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let saved = std::fs::read(&ck).unwrap();
    let cases: [(&[&str], Vars, &str); 3] = [
        (&[], &[], "cpu"),
        (&["--device", "cpu"], &[], "cpu"),
        (&[], &[("NQUEENS_RACE_SOFTWARE_GPU", "1")], "gpu"),
    ];
    for (flags, vars, side) in cases {
        std::fs::write(&ck, &saved).unwrap();
        let out = Command::new(bin())
            .args(["count", "18", "--json", "--stats", "--checkpoint"])
            .arg(&ck)
            .args(flags)
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{flags:?} {vars:?}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["total"], known(18).0.to_string());
        let device = v["device"].as_str().unwrap();
        assert_eq!(
            device == "cpu",
            side == "cpu",
            "{flags:?} {vars:?}: {device}"
        );
        let notes: Vec<&str> = err.lines().filter(|l| l.contains("race")).collect();
        let stats: Vec<&&str> = notes
            .iter()
            .filter(|l| l.contains("race_forced=true"))
            .collect();
        assert_eq!(stats.len(), 1, "{flags:?} {vars:?}: {err}");
        let said: Vec<&&str> = notes.iter().filter(|l| l.contains("note:")).collect();
        assert_eq!(said.len(), 1, "{flags:?} {vars:?}: {err}");
        let want = format!("counted on the {}", side.to_uppercase());
        assert!(said[0].contains(&want), "{flags:?} {vars:?}: {err}");
        assert!(!said[0].contains("NQUEENS_RACE_WINNER says"), "{err}");
    }
}

/// Item 4: a stop while the plan of a large shard is made ends the run at once with
/// `--checkpoint` as without it (with one it took 0.06 to 0.44 s, the planning polling the
/// stop, where without one the process ends in milliseconds). Signalled at several moments
/// of N = 27's plan (seconds on any machine where its quarters are sized), each pair run under the same load: the stops
/// with a checkpoint are, at the median, no slower than those without by more than 20 ms.
#[test]
fn a_stop_while_the_plan_is_made_ends_at_once_with_a_checkpoint_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut with = Vec::new();
    let mut without = Vec::new();
    for (k, after) in [50u64, 300, 700, 1200, 1800].into_iter().enumerate() {
        let ck = dir.path().join(format!("ck{k}"));
        for checkpoint in [true, false] {
            let mut command = Command::new(bin());
            command.args(["count", "27", "--shard", "5/24268067"]);
            // the quarters' sizes counted, as by the first process on a machine
            command.env(SIZES_NOT_KEPT.0, SIZES_NOT_KEPT.1);
            if checkpoint {
                command.arg("--checkpoint").arg(&ck);
            }
            let child = command
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            wait_until_caught(child.id(), 2);
            std::thread::sleep(Duration::from_millis(after));
            let sent = Instant::now();
            kill("-INT", child.id());
            let out = child.wait_with_output().unwrap();
            let took = sent.elapsed();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(130), "{err}");
            if checkpoint {
                // stopped while the plan was made: nothing was saved
                assert!(
                    err.contains("before the count began: nothing to save"),
                    "{err}"
                );
                assert!(!ck.exists());
                with.push(took);
            } else {
                without.push(took);
            }
        }
    }
    with.sort();
    without.sort();
    let median = |v: &[Duration]| v[v.len() / 2];
    assert!(
        median(&with) <= median(&without) + Duration::from_millis(20),
        "with a checkpoint {with:?}, without {without:?}"
    );
}

/// Item 5: `--engine quadrant --kernel avx512` offers the kernels it takes on this CPU (it
/// said "auto or scalar" where avx2 is taken too).
#[test]
fn a_refused_kernel_offers_what_the_engine_takes_here() {
    let out = Command::new(bin())
        .args(["count", "12", "--engine", "quadrant", "--kernel", "avx512"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let vector = nqueens::Kernel::available().len() > 1;
    let offered = match vector {
        true => "use --kernel auto, avx2 or scalar",
        false => "use --kernel auto or scalar",
    };
    assert!(err.contains(offered), "{err}");
    // and what it offers runs
    if vector {
        let out = Command::new(bin())
            .args(["count", "12", "--engine", "quadrant", "--kernel", "avx2"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "14200");
    }
}

/// Item 5: under an address-space limit that holds the quadrant tables back, the switch to
/// `d4` is said on stderr by `--dry-run` and by the count before it begins (it ran minutes
/// with no word of it); the note is said once.
#[cfg(unix)]
#[test]
fn the_switch_to_d4_under_an_address_space_limit_is_said_up_front() {
    let switched = "the quadrant engine's tables for N = 24";
    let out = limited(400_000, "count 24 --shard 303/1048576 --dry-run", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("engine=d4"));
    assert!(
        err.contains(switched) && err.contains("counted with d4"),
        "{err}"
    );
    // the count says it before it begins: the note comes while the shard still counts
    let script = format!(
        "ulimit -v 400000 && exec '{}' count 24 --shard 303/1048576",
        bin().display()
    );
    let mut child = Command::new("sh")
        .args(["-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = crate::util::read_stderr_until(&mut child, switched);
    assert!(child.try_wait().unwrap().is_none(), "ended before: {said}");
    kill("-TERM", child.id());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // a short count says it once
    let out = limited(200_000, "count 20 --shard 0/1000", &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("counted with d4").count(), 1, "{err}");
}
