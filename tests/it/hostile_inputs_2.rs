//! Hostile inputs, round two: each test closes a class of holes a second hostile pass found
//! (a lock file that is no file, a lock message with a placeholder, a backwards reason, counts
//! written as nqueens never writes them).

use crate::cli::run;
use crate::cluster::{bin, merge_files, shard_files};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs the binary with `args`, sends it `signal` (`-INT`, `-HUP`) `after` its start, and
/// gives how it ended, what it wrote on stdout and on stderr.
fn signalled(args: &[&str], after: Duration, signal: &str) -> (Option<i32>, Vec<u8>, String) {
    signalled_when(args, || std::thread::sleep(after), signal)
}

/// As [`signalled`], the signal sent once `ready` returns.
fn signalled_when(
    args: &[&str],
    ready: impl FnOnce(),
    signal: &str,
) -> (Option<i32>, Vec<u8>, String) {
    let child = Command::new(bin())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    ready();
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "{args:?}");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), out.stdout, err)
}

/// A lock file that is a FIFO, a directory or a device is refused at once (a FIFO used to
/// block the open forever, deaf to SIGINT), naming the lock file and what stands there.
#[test]
fn a_lock_file_that_is_no_regular_file_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("f.ckpt");
    let made = Command::new("mkfifo")
        .arg(dir.path().join("f.ckpt.lock"))
        .status()
        .unwrap();
    assert!(made.success());
    let folder = dir.path().join("d.ckpt");
    std::fs::create_dir(dir.path().join("d.ckpt.lock")).unwrap();
    let device = dir.path().join("n.ckpt");
    std::os::unix::fs::symlink("/dev/null", dir.path().join("n.ckpt.lock")).unwrap();
    for (checkpoint, kind) in [
        (fifo, "a FIFO"),
        (folder, "a directory"),
        (device, "a device"),
    ] {
        let mut child = Command::new(bin())
            .args(["count", "12", "--checkpoint"])
            .arg(&checkpoint)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(10) {
                child.kill().unwrap();
                panic!("{checkpoint:?}: still waiting on its lock file");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        let lock = format!("{}.lock", checkpoint.display());
        assert!(err.contains(&lock) && err.contains(kind), "{kind}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// The lock held by another run is named by its path, not a placeholder.
#[test]
fn a_held_lock_is_named_by_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("held.ckpt");
    let lock_path = dir.path().join("held.ckpt.lock");
    let lock = std::fs::File::create(&lock_path).unwrap();
    lock.try_lock().unwrap();
    let (code, out, err) = run(&["count", "8", "--checkpoint", checkpoint.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains(lock_path.to_str().unwrap()), "{err}");
    assert!(!err.contains("FILE.lock"), "{err}");
}

/// `--verify` on a record without parts says which runs record them (sharded ones).
#[test]
fn verify_without_parts_names_the_runs_that_record_them() {
    let dir = tempfile::tempdir().unwrap();
    let (code, whole, _) = run(&["count", "9", "--json"]);
    assert_eq!(code, 0);
    let file = crate::cluster::write(dir.path(), "whole.json", &whole);
    let (code, out, err) = merge_files(&[file], &["--trust-totals", "--verify", "3"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("only sharded runs record them"), "{err}");
}

/// Counts with a sign or a leading zero are not what nqueens writes: refused, the field named.
#[test]
fn counts_with_a_sign_or_a_leading_zero_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (i, written) in ["+{}", "0{}", " {}"].iter().enumerate() {
        let files = shard_files(dir.path(), &format!("r{i}"), 10, 2, &["--engine", "d4"]);
        let text = std::fs::read_to_string(&files[0]).unwrap();
        let mut record: serde_json::Value = serde_json::from_str(&text).unwrap();
        let part = record["parts"]["total"][0].as_str().unwrap().to_string();
        record["parts"]["total"][0] = written.replace("{}", &part).into();
        std::fs::write(&files[0], record.to_string()).unwrap();
        let (code, out, err) = merge_files(&files, &[]);
        assert_eq!((code, out.as_str()), (1, ""), "{written}: {err}");
        assert!(err.contains("as nqueens writes it"), "{written}: {err}");
    }
}

/// `nqueens: interrupted` is said once, whichever of the signal thread and the run that saw
/// the stop gets there first (twice in about half the runs of a hostile pass).
#[test]
fn interrupted_is_said_once() {
    for (i, delay) in [20u64, 60, 150, 300, 20, 60, 150, 300]
        .into_iter()
        .enumerate()
    {
        let threads = if i % 2 == 0 { "2" } else { "64" };
        let args = ["count", "32", "-t", threads];
        let (code, _, err) = signalled(&args, Duration::from_millis(delay), "-INT");
        assert_eq!(code, Some(130), "{err}");
        assert_eq!(
            err.matches("interrupted").count(),
            1,
            "after {delay} ms: {err}"
        );
    }
}

/// Under an address-space limit the table budget shrinks with it, a `--memory-limit` past
/// it too (with a note): the quadrant engine searches halves (or `auto` takes d4), with a
/// note, instead of aborting on a failed allocation (exit 134 with a garbled message before).
#[test]
fn an_address_space_limit_shrinks_the_table_budget() {
    let bin = bin();
    for (engine, limit) in [
        ("quadrant", ""),
        ("auto", ""),
        ("quadrant", "--memory-limit 10G"),
    ] {
        let script = format!(
            "ulimit -v 400000 && exec '{}' count 22 --engine {engine} --shard 1/65536 {limit}",
            bin.display()
        );
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{engine}: {err}");
        let total = String::from_utf8_lossy(&out.stdout);
        assert!(total.trim().parse::<u64>().is_ok_and(|t| t > 0), "{total}");
        // the limit that held the tables is named: the address-space limit here
        let over = "this process's address-space limit (ulimit -v) leaves them";
        assert!(err.contains(over), "{engine}: {err}");
        assert!(!err.contains("memory allocation"), "{engine}: {err}");
        let held = "the memory limit of 10 GiB is held to";
        assert_eq!(
            err.contains(held),
            !limit.is_empty(),
            "{engine} {limit}: {err}"
        );
    }
}

/// Many threads under a small address-space limit: a worker whose buffers cannot be had
/// counts depth-first, threads that cannot start are named; never an abort (the 4 MiB
/// arena of each d4 worker ended the process with SIGABRT before).
#[test]
fn many_threads_under_a_small_address_space_limit_end_with_an_answer() {
    let script = format!(
        "ulimit -v 50000 && exec '{}' count 16 --engine d4 -t 16",
        bin().display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => assert_eq!(String::from_utf8_lossy(&out.stdout), "14772512\n"),
        Some(1) => assert!(err.starts_with("nqueens: cannot start") && err.lines().count() == 1),
        other => panic!("ended with {other:?}: {err}"),
    }
    assert!(!err.contains("memory allocation"), "{err}");
}

/// Under `ulimit -v` a count starts only the threads whose address space fits (glibc reserves
/// 64 MiB per thread's arena), with a note, and counts right: before, the arenas took the
/// room and a later allocation aborted the process (`-t 64` under 150 MB).
#[test]
fn threads_that_do_not_fit_the_address_space_are_not_started() {
    for (args, expect) in [
        ("count 16 --engine d4 --unique -t 64", "14772512 1846955\n"),
        ("count 17 -t 64", "95815104\n"),
    ] {
        let script = format!("ulimit -v 150000 && exec '{}' {args}", bin().display());
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), expect, "{args}");
        assert!(err.contains("64 threads do not fit the"), "{args}: {err}");
        assert!(!err.contains("memory allocation"), "{args}: {err}");
    }
}

/// `merge --verify` fits its threads to the process's room as `count` does: 64 threads under
/// a 40 MB address space failed to start (exit 1) or aborted (SIGABRT, on Zen 4).
#[test]
fn merge_verify_fits_its_threads_to_the_address_space() {
    let dir = tempfile::tempdir().unwrap();
    let mut shards = Vec::new();
    for i in 0..2 {
        let out = Command::new(bin())
            .args(["count", "15", "--json", "--shard", &format!("{i}/2")])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let path = dir.path().join(format!("s{i}.json"));
        std::fs::write(&path, &out.stdout).unwrap();
        shards.push(format!("'{}'", path.display()));
    }
    let script = format!(
        "ulimit -v 40000 && exec '{}' merge {} --verify 64 -t 64",
        bin().display(),
        shards.join(" ")
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2279184\n");
    assert!(err.contains("all agree"), "{err}");
}

/// Auto chooses the plan from the limits as set, never from what the process has mapped at
/// that moment (under `ulimit -v` the same command took d4 or quadrant from run to run, and
/// its shards would not merge): where the tables then do not fit the room left, each unit's
/// halves are searched, the same plan, with a note naming the limit.
#[test]
fn auto_takes_its_plan_from_the_limits_as_set() {
    // 75 MiB of address space: one thread's 66 MiB leaves the tables' 4 MiB as set, not once
    // the program is mapped
    let script = format!(
        "ulimit -v 76800 && exec '{}' count 16 -t 1 --json",
        bin().display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["engine"], "quadrant", "{err}");
    assert_eq!(v["total"], "14772512");
    assert!(err.contains("halves are searched"), "{err}");
    assert!(err.contains("(ulimit -v)"), "{err}");
    assert!(
        !err.contains("0 bytes of") && !err.contains("memory limit of 0"),
        "{err}"
    );
}

/// `scale` under an address-space limit that holds a count to fewer threads gives no row for
/// the thread count that did not run (it printed a `threads: 64` row measured on one): the
/// rows measured, a line saying why the other has none, `complete: false`, exit 1.
#[test]
fn scale_gives_no_row_for_threads_that_did_not_run() {
    let script = format!(
        "ulimit -v 150000 && exec '{}' scale 12 --threads 1,64 --repeat 1 --format json",
        bin().display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads: Vec<u64> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1], "{report}");
    assert_eq!(report["complete"], false);
    assert!(
        err.contains("no row for 64 threads: the count ran on"),
        "{err}"
    );
    assert!(report["refused"][0]
        .as_str()
        .unwrap()
        .contains("64 threads"));
}

/// An address-space limit too small for any run is refused at once in one line (a listing
/// aborted on its plan under 24 MB before).
#[test]
fn an_address_space_limit_too_small_for_a_run_is_refused_in_one_line() {
    for args in ["list 20 --limit 2", "count 12", "scale 8 --repeat 1"] {
        let script = format!("ulimit -v 20000 && exec '{}' {args}", bin().display());
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args}: {err}");
        assert!(out.stdout.is_empty(), "{args}");
        assert_eq!(err.lines().count(), 1, "{args}: {err}");
        assert!(
            err.contains("(ulimit -v) of 20000 KiB is below the 32 MiB"),
            "{err}"
        );
    }
}

/// Large quadrant counts in little address space: the unit list, a unit's half-board
/// patterns, the finished set that cannot be had end the run with one line (exit 1), or it
/// counts; never an abort (each of these aborted before).
#[test]
fn large_counts_short_of_memory_end_in_one_line() {
    for (limit, args) in [
        (40000, "count 23 --engine quadrant --shard 9/262144"),
        (48000, "count 23 --engine quadrant --shard 9/262144"),
        (150000, "count 23 --engine quadrant"),
    ] {
        let script = format!("ulimit -v {limit} && exec '{}' {args}", bin().display());
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = err.lines().filter(|l| !l.contains("note:")).collect();
        match out.status.code() {
            Some(0) => assert!(!out.stdout.is_empty(), "{limit} {args}"),
            Some(1) => {
                assert_eq!(said.len(), 1, "{limit} {args}: {err}");
                assert!(
                    said[0].starts_with("nqueens: memory ran short for "),
                    "{err}"
                );
            }
            other => panic!("{limit} {args}: ended with {other:?}: {err}"),
        }
        assert!(!err.contains("memory allocation"), "{limit} {args}: {err}");
    }
}

/// Records whose N was changed in every shard agree with each other, but not with the plan
/// they name: refused (they added up to an N = 15 total of 365596 before).
#[test]
fn records_that_name_another_board_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for engine in ["d4", "quadrant"] {
        let files = shard_files(dir.path(), engine, 14, 3, &["--engine", engine]);
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            std::fs::write(file, text.replace("\"n\":14,", "\"n\":15,")).unwrap();
        }
        let (code, out, err) = merge_files(&files, &[]);
        assert_eq!((code, out.as_str()), (1, ""), "{engine}: {err}");
        assert!(
            err.contains("is not the plan of what it names (N = 15"),
            "{engine}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A checkpoint of another run is refused with exit 1, naming the file, what wrote it and
/// what this run asks for (a mirror checkpoint resumed with `--engine quadrant` was told, exit
/// 2, that no split depth was allowed; a quadrant one resumed with `--device gpu` was told to
/// use `--engine quadrant`, which was then refused again).
#[test]
fn a_checkpoint_of_another_run_names_both_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (mirror, quadrant) = (path("m.ckpt"), path("q.ckpt"));
    for (ckpt, engine) in [(&mirror, "mirror"), (&quadrant, "quadrant")] {
        let (code, out, err) = run(&["count", "13", "--engine", engine, "--checkpoint", ckpt]);
        assert_eq!((code, out.trim()), (0, "73712"), "{err}");
    }
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["--engine", "quadrant"],
            &mirror,
            "engine mirror (split depth",
        ),
        (&["--device", "gpu"], &quadrant, "counts on the CPU only"),
        (
            &["--device", "gpu", "--engine", "quadrant"],
            &quadrant,
            "--device auto or cpu",
        ),
        (
            &["--engine", "d4"],
            &quadrant,
            "resume it with --engine quadrant",
        ),
    ];
    for (flags, ckpt, words) in cases {
        let mut args = vec!["count", "13", "--checkpoint", ckpt];
        args.extend(flags);
        let (code, out, err) = run(&args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert!(
            err.contains(ckpt) && err.contains("another run, written by a run of N = 13"),
            "{err}"
        );
        assert!(err.contains(words), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // the same run resumes, the engine taken from the file
    let (code, out, err) = run(&["count", "13", "--checkpoint", &quadrant, "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"engine\":\"quadrant\""), "{out}");
}

/// Every numeric flag answers a bad value with one line naming the flag, the value and the
/// range allowed (clap's own "unexpected argument '-1' found" and "invalid digit found in
/// string" named neither); the range stated is the real one.
#[test]
fn numeric_flags_name_the_flag_the_value_and_the_range() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["count", "8", "--split-depth", "-1"],
            "--split-depth",
            "from 1",
        ),
        (&["merge", "x", "--verify", "-1"], "--verify", "from 1"),
        (&["merge", "x", "--verify", "abc"], "--verify", "from 1"),
        (
            &["count", "8", "--checkpoint-every", "-1"],
            "--checkpoint-every",
            "from 0.1",
        ),
        (&["scale", "8", "--repeat", "-1"], "--repeat", "from 1"),
        (&["scale", "8", "--repeat", "1e3"], "--repeat", "from 1"),
        (&["list", "8", "--limit", "-1"], "--limit", "from 0"),
        (
            &["list", "8", "--limit", "18446744073709551616"],
            "--limit",
            "from 0",
        ),
        (&["count", "8", "--gpus", "-1"], "--gpus", "from 0"),
        (&["count", "8", "--shard", "-1/2"], "--shard", "0 <= I < M"),
        (
            &["count", "8", "--split-depth", ""],
            "--split-depth",
            "from 1",
        ),
        (
            &["count", "8", "--memory-limit", "4 G"],
            "--memory-limit",
            "like 512M",
        ),
        // past a small board's rows, and past what keeps N = 32's subtasks few enough
        (
            &["count", "8", "--split-depth", "99"],
            "--split-depth",
            "from 1 to 8",
        ),
        (
            &["count", "32", "--split-depth", "12"],
            "--split-depth",
            "from 1 to 4",
        ),
        (
            &["count", "32", "--split-depth", "6"],
            "--split-depth",
            "from 1 to 4",
        ),
    ];
    for &(args, flag, range) in cases {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let value = args[args.len() - 1];
        assert!(err.contains(flag) && err.contains(value), "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: {err}");
    }
    let out = Command::new(bin())
        .args(["count", "8"])
        .env("NQUEENS_THREADS", "abc")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NQUEENS_THREADS") && err.contains("'abc'") && err.contains("from 1 to"),
        "{err}"
    );
}

/// SIGHUP (a closed terminal or ssh session) stops `count --checkpoint` as SIGTERM does:
/// saved, said, exit 129 (it ended with 129 and no save), and the same command resumes.
#[test]
fn sighup_saves_the_checkpoint_and_exits_129() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("h.ckpt").display().to_string();
    let args = [
        "count",
        "17",
        "--engine",
        "d4",
        "-t",
        "2",
        "--checkpoint",
        &ckpt,
    ];
    let (code, out, err) = signalled(&args, Duration::from_millis(400), "-HUP");
    assert_eq!(code, Some(129), "{err}");
    assert!(
        out.is_empty() && err.contains("interrupted") && err.contains(&ckpt),
        "{err}"
    );
    let (code, out, err) = run(&[&args[..], &["--json"]].concat());
    assert_eq!(code, 0, "{err}");
    let record: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(record["total"], "95815104");
    assert!(record["resumed_subtasks"].as_u64().unwrap() > 0, "{out}");
}

/// Scheduler variables that cannot select one shard are refused with one line naming them:
/// a count without its index (the whole board was counted silently), Slurm and Kubernetes
/// selecting different shards (Slurm won silently), a step of 0.
#[test]
fn shard_variables_that_do_not_select_one_shard_are_refused() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("NQUEENS_SHARDS", "2")],
            "NQUEENS_SHARDS is set but JOB_COMPLETION_INDEX is not",
        ),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
                ("JOB_COMPLETION_INDEX", "0"),
                ("NQUEENS_SHARDS", "2"),
            ],
            "select shard 1/2 and Kubernetes",
        ),
        (
            &[
                ("SLURM_ARRAY_TASK_ID", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "2"),
                ("SLURM_ARRAY_TASK_STEP", "0"),
            ],
            "SLURM_ARRAY_TASK_STEP=0",
        ),
        (
            &[("JOB_COMPLETION_INDEX", "3"), ("NQUEENS_SHARDS", "2")],
            "not a shard of NQUEENS_SHARDS=2",
        ),
    ];
    for &(vars, words) in cases {
        let mut command = Command::new(bin());
        command.args(["count", "8"]);
        for var in [
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "JOB_COMPLETION_INDEX",
            "NQUEENS_SHARDS",
        ] {
            command.env_remove(var);
        }
        command.envs(vars.iter().copied());
        let out = command.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{vars:?}: {err}");
        assert!(out.stdout.is_empty(), "{vars:?}");
        assert!(
            err.contains(words) && err.contains("from the environment"),
            "{vars:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `scale` stopped by SIGINT prints the rows measured so far (JSON says `complete: false`),
/// then exits 130 (it printed no table).
#[test]
fn a_stopped_scale_prints_what_it_measured() {
    let args = [
        "scale",
        "14",
        "--threads",
        "1,2",
        "--repeat",
        "100000",
        "--format",
        "json",
    ];
    let (code, out, err) = signalled(&args, Duration::from_millis(1500), "-INT");
    assert_eq!(code, Some(130), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["complete"], false);
    assert_eq!(report["total"], "365596");
    let runs = report["rows"][0]["runs"].as_u64().unwrap();
    assert!((1..100_000).contains(&runs), "{report}");
    assert_eq!(err.matches("interrupted").count(), 1, "{err}");
}

/// `list 32 | head -1`: the first line comes as soon as it is found, and the process is gone
/// soon after its reader closes the pipe (8 s and 8 s more before: its output sat in a 64 KiB
/// buffer). The bounds leave room for a loaded machine; 0.6 s and 0.1 s on two cores.
#[test]
fn a_listing_reader_that_stops_early_is_not_kept_waiting() {
    use std::io::BufRead;
    let mut child = Command::new(bin())
        .args(["list", "32", "-t", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let first_after = start.elapsed();
    assert_eq!(first.split_whitespace().count(), 32, "{first}");
    assert!(
        first_after < Duration::from_secs(4),
        "first line after {first_after:?}"
    );
    drop(reader);
    let closed = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if closed.elapsed() > Duration::from_secs(3) {
            child.kill().unwrap();
            panic!("still running 3 s after its reader closed the pipe");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A small filesystem of its own (tmpfs), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` where this user may not mount (only root may; CI runs as root).
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if mounted {
            return Some(SmallDisk { dir });
        }
        let id = Command::new("id").arg("-u").output().unwrap();
        let root = String::from_utf8_lossy(&id.stdout).trim() == "0";
        assert!(
            !root,
            "root could not mount a tmpfs on {}",
            dir.path().display()
        );
        None
    }

    /// Takes every byte left.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.dir.path().join("filler")).unwrap();
        while filler.write_all(&[0; 4096]).is_ok() {}
    }

    fn free(&self) {
        std::fs::remove_file(self.dir.path().join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

/// The finished subtasks a checkpoint file holds, read from its body.
fn finished_in(checkpoint: &std::path::Path) -> usize {
    let text = std::fs::read_to_string(checkpoint).unwrap();
    let body: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let runs = body["done"].as_array().unwrap();
    runs.iter()
        .map(|r| r["total"].as_array().unwrap().len())
        .sum()
}

/// SIGINT while the checkpoint's disk is full: exit 130, "interrupted", why the last save
/// failed and what the file on disk still holds (which is what it holds); resumed while the
/// disk is still full: exit 1 saying the same, nothing counted; a failing save said once.
#[test]
fn sigint_with_the_checkpoint_disk_full_says_what_the_file_still_holds() {
    let Some(disk) = SmallDisk::mount("1m") else {
        eprintln!("skipped: mounting a small filesystem needs root");
        return;
    };
    let checkpoint = disk.dir.path().join("c.ckpt");
    let path = checkpoint.display().to_string();
    let args = [
        "count",
        "18",
        "--engine",
        "d4",
        "--kernel",
        "scalar",
        "--threads",
        "1",
        "--checkpoint",
        &path,
        "--checkpoint-every",
        "0.1",
    ];
    let full_while_counting = || {
        let start = Instant::now();
        while !checkpoint.exists() || finished_in(&checkpoint) == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "no save with work in it"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        disk.fill();
        std::thread::sleep(Duration::from_millis(600)); // saves fail meanwhile
    };
    let (code, stdout, err) = signalled_when(&args, full_while_counting, "-INT");
    assert_eq!(code, Some(130), "{err}");
    assert!(stdout.is_empty());
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        2,
        "one line for the failing saves, one at the end: {err}"
    );
    assert!(lines[0].contains("No space left on device"), "{err}");
    let last = lines[1];
    assert!(
        last.starts_with("nqueens: interrupted, and the last save failed: checkpoint ")
            && last.contains(&path)
            && last.contains("No space left on device"),
        "{last}"
    );
    let held = finished_in(&checkpoint);
    assert!(held > 0);
    let says = format!("still holds {held} of 32939 finished subtasks");
    assert!(last.contains(&says), "{last} (the file holds {held})");
    // resumed while the disk is still full: refused before counting, saying the same
    let (code, stdout, err) = run(&args);
    assert_eq!((code, stdout.as_str()), (1, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("No space left on device") && err.contains(&says),
        "{err}"
    );
    assert!(err.contains("nothing was counted"), "{err}");
    assert_eq!(finished_in(&checkpoint), held);
    // space again: the run goes on from the file
    disk.free();
    let (code, _, err) = signalled(&args, Duration::from_millis(300), "-INT");
    assert_eq!(code, Some(130), "{err}");
    assert!(finished_in(&checkpoint) >= held);
}
