//! The holes found by fault injection, each closed: wrong totals, lost work, crashes, hangs
//! and messages, through the real binary and scripts.

use crate::cli::run;
use crate::cluster::{
    bin, merge_files, resume, shard_files, shard_record, start_long_count, wait_for_checkpoint,
    write,
};
use crate::oeis::known;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn edit(path: &str, change: impl FnOnce(&mut Value)) {
    let mut v = json(&std::fs::read_to_string(path).unwrap());
    change(&mut v);
    std::fs::write(path, format!("{v}\n")).unwrap();
}

fn kill(signal: &str, pid: u32) {
    Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
}

#[test]
fn run_shards_reuses_a_shard_only_for_the_same_run_and_quotes_extra_flags() {
    let dir = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/run-shards.sh");
    if Command::new("parallel").arg("--version").output().is_err() {
        eprintln!("GNU parallel is not installed: .ci/run installs it");
        return;
    }
    let shards = |extra: &[&str]| {
        let mut cmd = Command::new("bash");
        cmd.arg(script).args(["12", "3", "--"]).args(extra);
        cmd.current_dir(dir.path())
            .env("NQUEENS_BIN", bin())
            .env("NQUEENS_SHARD_DIR", "shards")
            .output()
            .unwrap()
    };
    let first = shards(&[]);
    assert_eq!(
        String::from_utf8_lossy(&first.stdout).lines().last(),
        Some("14200")
    );
    // the same run again is read back from its checkpoints
    assert_eq!(
        String::from_utf8_lossy(&shards(&[]).stdout).lines().last(),
        Some("14200")
    );
    for other in [&["--prefix", "1"][..], &["--unique"]] {
        let out = shards(other);
        assert_ne!(out.status.code(), Some(0), "{other:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("another run"),
            "{other:?}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("14200"));
    }
    std::fs::remove_dir_all(dir.path().join("shards")).unwrap();
    let out = shards(&["--prefix", "1 3"]);
    let want = run(&["count", "12", "--prefix", "1 3"]).1;
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        want,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn merge_refuses_shards_of_other_prefixes_and_records_without_identity() {
    let dir = tempfile::tempdir().unwrap();
    let two = shard_files(dir.path(), "p2", 12, 3, &["--prefix", "2"]);
    let eleven = shard_files(dir.path(), "p11", 12, 3, &["--prefix", "11"]);
    assert_eq!(
        merge_files(&two, &[]).1,
        run(&["count", "12", "--prefix", "2"]).1
    );
    let mixed = vec![two[0].clone(), two[1].clone(), eleven[2].clone()];
    let (code, out, err) = merge_files(&mixed, &[]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("the prefix differs"), "{err}");
    // an older record without the plan's size and digest is refused as such
    edit(&two[0], |v| {
        v.as_object_mut().unwrap().remove("plan_subtasks");
        v.as_object_mut().unwrap().remove("plan_digest");
    });
    let (code, _, err) = merge_files(&two, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("older nqueens"), "{err}");
    // another program's subtask order: same sizes, other digest
    let plain = shard_files(dir.path(), "d", 10, 2, &[]);
    edit(&plain[1], |v| v["plan_digest"] = "00000000".into());
    let (code, _, err) = merge_files(&plain, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("plan digest"), "{err}");
}

#[test]
fn sums_never_wrap_in_merge_or_in_resumed_checkpoints() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "s", 10, 2, &[]);
    // totals near 2^128 (no part may reach 2^64, so only totals taken on trust get there):
    // the sum does not fit
    let max = u128::MAX.to_string();
    for f in &files {
        edit(f, |v| {
            v.as_object_mut().unwrap().remove("parts");
            v["total"] = max.clone().into();
        });
    }
    let (code, out, err) = merge_files(&files, &["--trust-totals"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("does not fit"), "{err}");
    // a checkpoint count past u64 is refused, not summed
    let ck = dir.path().join("ck");
    let ck_arg = ck.display().to_string();
    run(&["count", "10", "--checkpoint", &ck_arg]);
    let text = std::fs::read_to_string(&ck).unwrap();
    let body = text.lines().next().unwrap();
    let mut v = json(body);
    v["done"][0]["total"][0] =
        serde_json::from_str("170141183460469231731687303715884105728").unwrap();
    let body = v.to_string();
    std::fs::write(
        &ck,
        format!("{body}\ncrc32 {:08x}\n", crc32fast::hash(body.as_bytes())),
    )
    .unwrap();
    let (code, out, err) = run(&["count", "10", "--checkpoint", &ck_arg]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
}

#[test]
fn altered_results_are_caught_by_their_parts_or_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "s", 11, 3, &["--unique"]);
    assert_eq!(merge_files(&files, &["--verify", "5"]).1, "2680 341\n");
    // a total edited alone disagrees with its parts: refused without recounting
    edit(&files[0], |v| {
        let t: u128 = v["total"].as_str().unwrap().parse().unwrap();
        v["total"] = (t + 1).to_string().into();
    });
    let (code, _, err) = merge_files(&files, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("not the sum of its subtasks' parts"), "{err}");
    // a part edited with its total agrees on paper: only recounting finds it
    let files = shard_files(dir.path(), "t", 11, 3, &["--unique"]);
    let mut bad_id = 0;
    edit(&files[1], |v| {
        let parts = v["parts"]["total"].as_array_mut().unwrap();
        let k = parts.iter().position(|p| p != "0").unwrap();
        let p: u64 = parts[k].as_str().unwrap().parse().unwrap();
        parts[k] = (p + 8).to_string().into();
        let t: u128 = v["total"].as_str().unwrap().parse().unwrap();
        v["total"] = (t + 8).to_string().into();
        bad_id = 1 + 3 * k;
    });
    assert_eq!(merge_files(&files, &[]).0, 0);
    let (code, out, err) = merge_files(&files, &["--verify", "100000"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains(&files[1]) && err.contains(&format!("subtask {bad_id} ")),
        "{err}"
    );
    // verify needs the parts that only sharded runs record
    let whole = write(dir.path(), "whole.json", &run(&["count", "9", "--json"]).1);
    let (code, _, err) = merge_files(&[whole], &["--verify", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("no per-subtask parts"), "{err}");
}

#[test]
fn an_altered_checkpoint_count_is_carried_into_the_shard_and_caught_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let ck_arg = ck.display().to_string();
    let shard = |extra: &[&str]| {
        let mut args = vec![
            "count",
            "11",
            "--shard",
            "0/2",
            "--json",
            "--checkpoint",
            &ck_arg,
        ];
        args.extend(extra);
        run(&args)
    };
    assert_eq!(shard(&[]).0, 0);
    let other = run(&["count", "11", "--shard", "1/2", "--json"]).1;
    let other = write(dir.path(), "other.json", &other);
    let text = std::fs::read_to_string(&ck).unwrap();
    let mut v = json(text.lines().next().unwrap());
    let totals = v["done"][0]["total"].as_array_mut().unwrap();
    let k = totals.iter().position(|t| t != 0).unwrap();
    totals[k] = (totals[k].as_u64().unwrap() + 8).into();
    let body = v.to_string();
    std::fs::write(
        &ck,
        format!("{body}\ncrc32 {:08x}\n", crc32fast::hash(body.as_bytes())),
    )
    .unwrap();
    let (code, out, _) = shard(&[]);
    assert_eq!(code, 0);
    let file = write(dir.path(), "shard.json", &out);
    let both = [file, other];
    assert_eq!(merge_files(&both, &[]).1, "2688\n");
    let (code, _, err) = merge_files(&both, &["--verify", "100000"]);
    assert_eq!(code, 1);
    // position k of shard 0/2 is subtask 2k
    assert!(err.contains(&format!("subtask {} ", 2 * k)), "{err}");
}

#[test]
fn an_unwritable_checkpoint_fails_before_counting() {
    let started = Instant::now();
    let (code, out, err) = run(&["count", "18", "--checkpoint", "no/such/dir/ck"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("ck.lock cannot be opened"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "it counted first"
    );
    for device in ["/dev/full", "/dev/zero", "/dev/null"] {
        let (code, out, err) = run(&["count", "8", "--checkpoint", device]);
        assert_eq!((code, out.as_str()), (1, ""), "{device}: {err}");
        assert!(err.contains("not a regular file"), "{err}");
    }
}

#[test]
fn a_save_that_fails_mid_run_is_reported_retried_and_the_total_printed() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let ck = sub.join("ck");
    let child = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    // the directory goes away under the run: every later save fails. Moved, not removed:
    // removing it raced with a save's temporary file (DirectoryNotEmpty), a move is atomic
    std::fs::rename(&sub, dir.path().join("moved")).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("trying again at every save"), "{err}");
    assert!(err.contains("the total above is complete"), "{err}");
    assert_eq!(
        json(&String::from_utf8_lossy(&out.stdout))["total"],
        known(17).0.to_string()
    );
}

#[test]
fn a_second_run_on_one_checkpoint_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let mut first = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    let (code, out, err) = run(&[
        "count",
        "17",
        "--engine",
        "d4",
        "--checkpoint",
        &ck.display().to_string(),
    ]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("in use by another nqueens run"), "{err}");
    first.kill().unwrap();
    first.wait().unwrap();
    // no temporary files are left beside it, and the lock went with the process
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names.iter().all(|n| n == "ck" || n == "ck.lock"),
        "{names:?}"
    );
    let (code, out, _) = run(&[
        "count",
        "17",
        "--engine",
        "d4",
        "--json",
        "--checkpoint",
        &ck.display().to_string(),
    ]);
    assert_eq!(code, 0);
    assert!(json(&out)["resumed_subtasks"].as_u64().unwrap() > 0);
}

#[test]
fn a_symlinked_checkpoint_writes_its_target_and_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let target_dir = dir.path().join("store");
    std::fs::create_dir(&target_dir).unwrap();
    let link = dir.path().join("ck");
    std::os::unix::fs::symlink("store/real.ckpt", &link).unwrap();
    let (code, out, err) = run(&["count", "10", "--checkpoint", &link.display().to_string()]);
    assert_eq!((code, out.as_str()), (0, "724\n"), "{err}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(target_dir.join("real.ckpt"))
        .unwrap()
        .contains("crc32"));
    let (_, out, _) = run(&[
        "count",
        "10",
        "--json",
        "--checkpoint",
        &link.display().to_string(),
    ]);
    assert_eq!(json(&out)["resumed_subtasks"], json(&out)["subtasks"]);
}

// scripts/slurm-array.sh itself (requeue on SIGTERM, a task resubmitted alone, a failed task)
// is tested on a real Slurm by tests/slurm.sh, which .ci/run starts.
#[test]
fn an_array_with_a_step_counts_the_shard_of_its_position() {
    let out = Command::new(bin())
        .args(["count", "8", "--json"])
        .env("SLURM_ARRAY_TASK_ID", "5")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .env("SLURM_ARRAY_TASK_MIN", "1")
        .env("SLURM_ARRAY_TASK_STEP", "2")
        .output()
        .unwrap();
    assert_eq!(
        json(&String::from_utf8_lossy(&out.stdout))["shard"]["index"],
        2
    );
}

#[test]
fn a_shard_index_without_its_count_is_refused() {
    for (var, value) in [("SLURM_ARRAY_TASK_ID", "1"), ("JOB_COMPLETION_INDEX", "0")] {
        let out = Command::new(bin())
            .args(["count", "8"])
            .env(var, value)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{var}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn shards_from_machines_of_any_size_merge() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = [(0, "1"), (1, "300")]
        .iter()
        .map(|&(i, threads)| {
            let out = run(&[
                "count",
                "13",
                "--shard",
                &format!("{i}/2"),
                "--json",
                "-t",
                threads,
            ])
            .1;
            write(dir.path(), &format!("{i}.json"), &out)
        })
        .collect();
    assert_eq!(merge_files(&files, &[]).1, "73712\n");
}

#[test]
fn hostile_merge_input_is_refused_without_panic_hang_or_huge_memory() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &shard_record(9, 0, 2, &[]));
    for (index, count, why) in [
        ("5", "2", "index must be below"),
        ("0", "0", "at least 1"),
        ("0", "1152921504606846976", "subtasks"),
        ("0", "400000000", "subtasks"),
    ] {
        let path = write(
            dir.path(),
            "bad.json",
            &std::fs::read_to_string(&good).unwrap(),
        );
        edit(&path, |v| {
            v["shard"]["index"] = index.parse::<u64>().unwrap().into();
            v["shard"]["count"] = count.parse::<u64>().unwrap().into();
        });
        let (code, out, err) = merge_files(&[path], &[]);
        assert_eq!((code, out.as_str()), (1, ""), "{index}/{count}: {err}");
        assert!(err.contains(why), "{err}");
    }
    let fifo = dir.path().join("fifo");
    Command::new("mkfifo").arg(&fifo).status().unwrap();
    for path in ["/dev/zero".into(), fifo.display().to_string()] {
        let started = Instant::now();
        let (code, _, err) = merge_files(std::slice::from_ref(&path), &[]);
        assert_eq!(code, 1, "{path}: {err}");
        assert!(err.contains("not a regular file"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
    // a line without end on standard input is cut at the bound
    let mut child = Command::new(bin())
        .arg("merge")
        .arg("-")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        use std::io::Write;
        let block = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            if stdin.write_all(&block).is_err() {
                break;
            }
        }
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line longer than"));
}

#[test]
fn absurd_threads_and_save_intervals_are_usage_errors() {
    for args in [
        &["count", "8", "-t", "18446744073709551615"][..],
        &["count", "8", "-t", "5000"],
        &["list", "8", "-t", "99999"],
        &["scale", "8", "-t", "1,100000"],
        &["count", "8", "--checkpoint-every", "1e20"],
        &["count", "8", "--checkpoint-every", "1e-9"],
        &["count", "8", "--checkpoint-every", "NaN"],
    ] {
        let started = Instant::now();
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn a_resumed_run_reports_only_the_nodes_it_searched() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    run(&["count", "12", "--checkpoint", &ck]);
    let (_, out, _) = run(&["count", "12", "--json", "--checkpoint", &ck]);
    let v = json(&out);
    assert_eq!(v["resumed_subtasks"], v["subtasks"]);
    assert_eq!(v["nodes_per_s"], 0.0);
    assert_ne!(v["nodes"], "0");
}

#[test]
fn the_progress_bar_of_a_resumed_run_estimates_from_its_own_pace() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let child = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    kill("-INT", child.id());
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let mut resumed = Command::new(bin())
        .args([
            "count",
            "17",
            "-t",
            "1",
            "--kernel",
            "scalar",
            "--engine",
            "d4",
            "--progress",
            "always",
        ])
        .arg("--checkpoint")
        .arg(&ck)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // stopped once it has drawn a bar with an estimate (an event, not a delay)
    let mut stderr = std::io::BufReader::new(resumed.stderr.take().unwrap());
    let mut err = String::new();
    while !err.contains(" eta ") {
        let mut line = Vec::new();
        let read = std::io::BufRead::read_until(&mut stderr, b'\n', &mut line).unwrap();
        assert!(read > 0, "no progress bar before the end: {err}");
        err.push_str(&String::from_utf8_lossy(&line));
    }
    kill("-INT", resumed.id());
    std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
    assert_eq!(resumed.wait().unwrap().code(), Some(130), "{err}");
    let bars: Vec<&str> = err.lines().filter(|l| l.contains(" eta ")).collect();
    assert!(!bars.is_empty(), "{err}");
    assert!(bars.iter().all(|l| !l.ends_with("eta 0s")), "{err}");
}

#[test]
fn a_foreign_checkpoint_is_named_before_its_split_depth_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    run(&["count", "11", "--split-depth", "7", "--checkpoint", &ck]);
    let (code, _, err) = run(&["count", "5", "--checkpoint", &ck]);
    assert_eq!(code, 1);
    assert!(err.contains(&ck) && err.contains("another run"), "{err}");
}

/// Auto resumes a checkpoint with its engine: a flag the quadrant engine does not take is
/// the checkpoint's run being another, exit 1, never a usage error about an engine the user
/// never named.
#[test]
fn flags_the_quadrant_engine_does_not_take_name_its_checkpoint_as_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    let (code, _, err) = run(&["count", "14", "--checkpoint", &ck]);
    assert_eq!(code, 0, "{err}");
    for flag in [&["--split-depth", "3"][..], &["--kernel", "avx512"]] {
        let mut args = vec!["count", "14", "--checkpoint", &ck];
        args.extend_from_slice(flag);
        let (code, out, err) = run(&args);
        assert_eq!((code, out.as_str()), (1, ""), "{flag:?}: {err}");
        assert!(
            err.contains(&ck) && err.contains("another run") && err.contains("quadrant"),
            "{flag:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_sharded_plain_count_says_it_is_partial() {
    let (code, out, err) = run(&["count", "10", "--shard", "1/3"]);
    assert_eq!(code, 0);
    assert!(out.trim().parse::<u64>().unwrap() < 724);
    assert!(err.contains("shard 1/3 only"), "{err}");
}

#[test]
fn usage_errors_name_the_bad_value_and_what_is_allowed() {
    for (args, wants) in [
        (
            &["count", "8", "--engine", "foo"][..],
            &["'foo'", "auto, mirror, d4"][..],
        ),
        (&["count", "8", "--kernel", "gpu"], &["'gpu'", "scalar"]),
        (
            &["list", "8", "--format", "xml"],
            &["'xml'", "seq, board, json"],
        ),
        (
            &["count", "8", "--progress", "maybe"],
            &["'maybe'", "never"],
        ),
        (&["completions", "tcsh"], &["'tcsh'", "bash"]),
        (&["count"], &["<N>"]),
        (&["count", "-1"], &["'-1'", "from 1 to 32"]),
        (&["count", "8", "-t", "-1"], &["'-1'", "from 1 to"]),
        (&["count", "16", "--split-depth", "10"], &["split depth 10"]),
        (
            &["count", "8", "--prefix", "1", "--engine", "mirror"],
            &["without symmetry"],
        ),
        (&["count", "3", "--engine", "d4"], &["at least 4"]),
        // too large is not malformed: the maximum is named
        (
            &["count", "8", "--memory-limit", "99999999999T"],
            &["'99999999999T'", "too large", "at most 16777215T"],
        ),
        (
            &["count", "8", "--memory-limit", "99999999999999999999"],
            &["too large", "at most 18446744073709551615"],
        ),
        (
            &["count", "8", "--memory-limit", "12Q"],
            &["'12Q'", "whole number of bytes"],
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        for want in wants {
            assert!(err.contains(want), "{args:?}: want {want} in {err}");
        }
    }
    let (_, out, _) = run(&["count", "3", "--json"]);
    assert_eq!(json(&out)["engine"], "mirror");
}

#[test]
fn a_full_stderr_never_crashes_the_program() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for (args, code) in [
        (&["count", "0"][..], 2),
        (&["count", "8", "--stats"], 0),
        (&["scale", "8", "--repeat", "1", "-t", "1"], 0),
        (&["merge", "/nonexistent"], 1),
    ] {
        let out = Command::new(bin())
            .args(args)
            .stderr(full())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}

/// A standard output that cannot take the output (a full disk) is named as what failed,
/// one line, exit 1, for every command that prints.
#[test]
fn a_full_stdout_is_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<String> = (0..2)
        .map(|i| {
            let path = dir.path().join(format!("s{i}.json"));
            let (code, out, err) = run(&["count", "10", "--json", "--shard", &format!("{i}/2")]);
            assert_eq!(code, 0, "{err}");
            std::fs::write(&path, out).unwrap();
            path.display().to_string()
        })
        .collect();
    let merge = ["merge", shards[0].as_str(), shards[1].as_str()];
    for args in [
        &["count", "12"][..],
        &["count", "12", "--json"],
        &["count", "12", "--dry-run"],
        &["list", "6", "--limit", "2"],
        &merge,
        &["scale", "8", "--repeat", "1", "-t", "1"],
        &["devices"],
        &["completions", "bash"],
        &["--help"],
        &["--version"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(bin())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            last.starts_with("nqueens: cannot write to standard output: "),
            "{args:?}: {err}"
        );
    }
}

/// A second signal ends a run at once, and says so (it ended silently, exit 130: whether the
/// save after the first was made could not be told). Both signals are made pending together,
/// the process stopped meanwhile, so the test does not hang on timing.
#[test]
fn a_second_signal_ends_the_run_with_a_line_saying_so() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let child = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    for signal in ["-STOP", "-INT", "-TERM", "-CONT"] {
        kill(signal, child.id());
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with("nqueens: interrupted")),
        "{err}"
    );
    // the checkpoint holds a save either way: the same command resumes
    let v = resume(&ck);
    assert_eq!(v["total"], known(17).0.to_string());
    assert!(v["resumed_subtasks"].as_u64().unwrap() > 0);
}

/// Waits until process `pid` catches `signal` (its handler is installed: Linux's
/// `/proc/PID/status`, `SigCgt`), so a signal sent next reaches the handler.
fn wait_until_caught(pid: u32, signal: u32) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0);
        if caught >> (signal - 1) & 1 != 0 {
            return;
        }
        std::thread::yield_now();
    }
    panic!("process {pid} never caught signal {signal}");
}

/// N = 23's plan takes half a second to make (its quarter tables are sized first): a dry
/// run stops at a signal instead of finishing it (it went on and exited 0).
#[test]
fn a_dry_run_stops_at_sigterm_while_it_makes_the_plan() {
    let child = Command::new(bin())
        .args(["count", "23", "--dry-run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_caught(child.id(), 15);
    kill("-TERM", child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
}

/// A run stopped while its plan is made (before its checkpoint's first save) ends without
/// writing the checkpoint: nothing was counted.
#[test]
fn a_run_stopped_before_counting_leaves_its_checkpoint_as_it_was() {
    use nqueens::{run as run_count, CountOptions, Error, Hooks, RunRequest};
    use std::sync::atomic::AtomicBool;
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let request = RunRequest {
        checkpoint: Some(ck.clone()),
        ..RunRequest::new(23, CountOptions::default(), None)
    };
    let stopped = AtomicBool::new(true);
    let hooks = Hooks {
        cancel: Some(&stopped),
        ..Hooks::default()
    };
    assert!(matches!(
        run_count(&request, &hooks),
        Err(Error::Interrupted)
    ));
    assert!(!ck.exists(), "a checkpoint was written");
}

#[test]
fn sigterm_ends_list_and_scale_with_130() {
    for args in [
        &["list", "16"][..],
        &[
            "scale", "17", "-t", "1", "--kernel", "scalar", "--engine", "d4",
        ],
    ] {
        let child = Command::new(bin())
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_until_caught(child.id(), 15);
        kill("-TERM", child.id());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(130), "{args:?}");
    }
}

#[test]
fn scale_always_measures_one_thread_once_and_checks_the_plot_first() {
    let (code, out, err) = run(&[
        "scale", "9", "-t", "2,2", "--repeat", "1", "--format", "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    let threads: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(threads, ["1", "2"]);
    assert!(err.contains("adding a 1-thread run"), "{err}");
    assert!(
        out.lines().nth(1).unwrap().contains(",1.000,1.000"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "scale", "9", "-t", "1,1,2", "--repeat", "1", "--format", "csv",
    ]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(!err.contains("adding"));
    let (code, _, err) = run(&["scale", "14", "--plot", "no/such/dir/x.svg"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot write") && !err.contains("run="),
        "{err}"
    );
}

#[test]
fn the_command_line_reference_documents_every_flag() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    for command in ["count", "list", "merge", "scale", "completions", "man"] {
        assert!(doc.contains(&format!("nqueens {command}")), "{command}");
        let help = run(&[command, "--help"]).1;
        for flag in help.split_whitespace().filter(|w| w.starts_with("--")) {
            let flag = flag.trim_end_matches(|c: char| !c.is_alphanumeric());
            if flag == "--help" || flag == "--version" {
                continue;
            }
            assert!(
                doc.contains(flag),
                "docs/cli.md does not document {command} {flag}"
            );
        }
    }
}
