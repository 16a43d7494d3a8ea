//! Shards, merge, checkpoints and signals, through the library and the real binary.

use crate::cli::{nqueens, run};
use crate::oeis::known;
use nqueens::count_subtasks;
use nqueens::Shard;
use nqueens::{CountOptions, EngineChoice};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("nqueens")
}

#[test]
fn shards_are_disjoint_cover_everything_and_sum_to_the_count() {
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        let opts = CountOptions {
            threads: Some(2),
            engine,
            unique: true,
            ..Default::default()
        };
        for n in 8..=13 {
            let plan = opts.plan(n, None).unwrap();
            for m in 1..=7 {
                let mut seen = vec![0u8; plan.len()];
                let (mut total, mut unique) = (0, 0);
                for i in 0..m {
                    let shard = Shard::new(i, m).unwrap();
                    let ids: Vec<usize> = shard.ids(plan.len()).collect();
                    assert_eq!(ids.len(), shard.len(plan.len()));
                    for &id in &ids {
                        seen[id] += 1;
                    }
                    let c = count_subtasks(&plan, &ids, &opts).unwrap();
                    total += c.total;
                    unique += c.unique.unwrap();
                }
                assert!(seen.iter().all(|&s| s == 1), "n={n} m={m}");
                assert_eq!((total, unique), known(n), "n={n} m={m} {engine:?}");
            }
        }
    }
}

#[test]
fn binary_shards_merge_to_the_full_count() {
    let dir = tempfile::tempdir().unwrap();
    for (n, m) in [(8, 3), (11, 7), (13, 2)] {
        let mut files = Vec::new();
        for i in 0..m {
            let (code, out, err) = run(&[
                "count",
                &n.to_string(),
                "--shard",
                &format!("{i}/{m}"),
                "--json",
                "--unique",
            ]);
            assert_eq!(code, 0, "{err}");
            let v: serde_json::Value = serde_json::from_str(&out).unwrap();
            assert_eq!(v["shard"]["index"], i);
            assert_eq!(v["shard"]["count"], m);
            let path = dir.path().join(format!("{n}-{i}.json"));
            std::fs::write(&path, out).unwrap();
            files.push(path.display().to_string());
        }
        let mut args = vec!["merge"];
        args.extend(files.iter().map(String::as_str));
        let (total, unique) = known(n);
        assert_eq!(run(&args).1, format!("{total} {unique}\n"));
        args.push("--json");
        let v: serde_json::Value = serde_json::from_str(&run(&args).1).unwrap();
        assert_eq!(v["total"], total.to_string());
        assert!(v.get("shard").is_none());
    }
}

#[test]
fn dry_run_names_the_plan_the_count_runs_and_refuses_what_it_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("c.ckpt");
    let ckpt = ckpt.to_str().unwrap();
    for args in [
        &["15", "--shard", "2/3"][..],
        &["12", "--engine", "d4", "--split-depth", "2"],
        &["9", "--engine", "mirror", "--unique"],
    ] {
        let with = |extra: &[&str]| {
            let mut all = vec!["count"];
            all.extend_from_slice(args);
            all.extend_from_slice(extra);
            run(&all)
        };
        let (code, out, err) = with(&["--dry-run", "--checkpoint", ckpt]);
        assert_eq!((code, err.as_str()), (0, ""), "{args:?}");
        assert!(!Path::new(ckpt).exists(), "a dry run opened its checkpoint");
        let (_, json, _) = with(&["--json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let shard = match v.get("shard") {
            Some(s) => format!("{}/{}", s["index"], s["count"]),
            None => "0/1".into(),
        };
        let expect = format!(
            "n={} engine={} split_depth={} plan_subtasks={} plan_digest={} shard={shard} subtasks={}\n",
            v["n"],
            v["engine"].as_str().unwrap(),
            v["split_depth"],
            v["plan_subtasks"],
            v["plan_digest"].as_str().unwrap(),
            v["subtasks"]
        );
        assert_eq!(out, expect, "{args:?}");
    }
    for bad in [
        &["33"][..],
        &["17", "--engine", "quadrant", "--unique"],
        &["12", "--shard", "3/2"],
        &["12", "--threads", "0"],
    ] {
        let mut all = vec!["count", "--dry-run"];
        all.extend_from_slice(bad);
        let (code, out, err) = run(&all);
        assert_eq!(
            (code, out.as_str(), err.lines().count()),
            (2, "", 1),
            "{bad:?}: {err}"
        );
    }
}

/// A dry run on a checkpoint shows the plan the run resumes: a d4 checkpoint's, though
/// auto would take the quadrant engine for a new run of that N.
#[test]
fn dry_run_shows_the_plan_a_checkpoint_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = dir.path().join("d4.ckpt");
    let ckpt = ckpt.to_str().unwrap();
    let (code, _, err) = run(&["count", "14", "--engine", "d4", "--checkpoint", ckpt]);
    assert_eq!(code, 0, "{err}");
    let (code, fresh, err) = run(&["count", "14", "--dry-run"]);
    assert_eq!(code, 0, "{err}");
    assert!(fresh.contains("engine=quadrant"), "{fresh}");
    let (code, resumed, err) = run(&["count", "14", "--dry-run", "--checkpoint", ckpt]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (_, json, _) = run(&["count", "14", "--json", "--checkpoint", ckpt]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["engine"], "d4");
    let digest = format!("plan_digest={} ", v["plan_digest"].as_str().unwrap());
    assert!(
        resumed.contains("engine=d4") && resumed.contains(&digest),
        "{resumed}"
    );
    // and it refuses what the run refuses
    let (code, out, err) = run(&[
        "count",
        "14",
        "--dry-run",
        "--engine",
        "quadrant",
        "--checkpoint",
        ckpt,
    ]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("another run"), "{err}");
}

#[test]
fn scheduler_variables_select_the_same_shard_as_the_flag() {
    let shard_json = |envs: &[(&str, &str)], extra: &[&str]| {
        let mut cmd = nqueens();
        cmd.args(["count", "11", "--json"]).args(extra);
        for (k, v) in envs {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        (v["total"].clone(), v["shard"].clone())
    };
    let flag = shard_json(&[], &["--shard", "2/5"]);
    assert_eq!(
        flag,
        shard_json(
            &[
                ("SLURM_ARRAY_TASK_ID", "2"),
                ("SLURM_ARRAY_TASK_COUNT", "5")
            ],
            &[]
        )
    );
    assert_eq!(
        flag,
        shard_json(
            &[
                ("SLURM_ARRAY_TASK_ID", "3"),
                ("SLURM_ARRAY_TASK_COUNT", "5"),
                ("SLURM_ARRAY_TASK_MIN", "1")
            ],
            &[]
        )
    );
    assert_eq!(
        flag,
        shard_json(
            &[("JOB_COMPLETION_INDEX", "2"), ("NQUEENS_SHARDS", "5")],
            &[]
        )
    );
    // the flag wins over the environment
    assert_eq!(
        flag,
        shard_json(
            &[("JOB_COMPLETION_INDEX", "0"), ("NQUEENS_SHARDS", "5")],
            &["--shard", "2/5"]
        )
    );
}

#[test]
fn bad_shards_are_usage_errors() {
    for s in ["4/4", "1/0", "x/2", "1", "-1/2", "1/2/3"] {
        let (code, out, err) = run(&["count", "8", "--shard", s]);
        assert_eq!(code, 2, "{s}: {err}");
        assert!(out.is_empty());
    }
    let out = nqueens()
        .args(["count", "8"])
        .env("JOB_COMPLETION_INDEX", "3")
        .env("NQUEENS_SHARDS", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

pub fn shard_record(n: usize, i: usize, m: usize, extra: &[&str]) -> String {
    let mut args = vec![
        "count".to_string(),
        n.to_string(),
        "--json".into(),
        "--shard".into(),
        format!("{i}/{m}"),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = run(&args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// Writes `text` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// Runs the binary with `args` and returns (exit code, stdout, stderr).
fn run_owned(args: &[String]) -> (i32, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

/// `merge FILES EXTRA`: (exit code, stdout, stderr).
pub fn merge_files(files: &[String], extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().cloned());
    args.extend(extra.iter().map(|s| s.to_string()));
    run_owned(&args)
}

/// The shard files of `count n --shard i/m --json EXTRA` for every i.
pub fn shard_files(dir: &Path, tag: &str, n: usize, m: usize, extra: &[&str]) -> Vec<String> {
    (0..m)
        .map(|i| {
            write(
                dir,
                &format!("{tag}-{i}.json"),
                &shard_record(n, i, m, extra),
            )
        })
        .collect()
}

#[test]
fn merge_refuses_every_bad_case() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.display().to_string()
    };
    let a0 = write("a0", &shard_record(10, 0, 2, &[]));
    let a1 = write("a1", &shard_record(10, 1, 2, &[]));
    let other_n = write("n11", &shard_record(11, 1, 2, &[]));
    let other_engine = write("mirror", &shard_record(10, 1, 2, &["--engine", "mirror"]));
    let other_count = write("m3", &shard_record(10, 1, 3, &[]));
    let other_unique = write("u", &shard_record(10, 1, 2, &["--unique"]));
    let incomplete = write(
        "inc",
        &shard_record(10, 1, 2, &[]).replace("\"complete\":true", "\"complete\":false"),
    );
    let garbage = write("garbage", "not json\n");
    assert_eq!(run(&["merge", &a0, &a1]).1, "724\n");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec![&a0], "missing shard"),
        (vec![&a0, &a1, &a1], "given twice"),
        (vec![&a0, &other_n], "N differs"),
        (vec![&a0, &other_engine], "engine differs"),
        (vec![&a0, &other_count], "shard count differs"),
        (
            vec![&a0, &other_unique],
            "fundamental solutions (counted in one, not the other) differs",
        ),
        (vec![&a0, &incomplete], "incomplete"),
        (vec![&a0, &garbage], "not a JSON count record"),
        (vec![&a0, "/no/such/file"], "cannot read"),
    ];
    for (files, why) in cases {
        let mut args = vec!["merge"];
        args.extend(files);
        let (code, out, err) = run(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(why), "{args:?}: expected '{why}' in {err}");
        assert_eq!(err.lines().count(), 1);
    }
}

/// Starts a count that lasts many seconds (N = 17 on one scalar thread) with a fast-saving
/// checkpoint; returns the child.
pub fn start_long_count(checkpoint: &Path) -> std::process::Child {
    Command::new(bin())
        .args([
            "count", "17", "-t", "1", "--kernel", "scalar", "--engine", "d4", "--json",
        ])
        .args(["--checkpoint-every", "0.1", "--checkpoint"])
        .arg(checkpoint)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until the checkpoint has at least one finished subtask.
pub fn wait_for_checkpoint(path: &Path) {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        if std::fs::read_to_string(path).is_ok_and(|t| t.contains("\"first\"")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("no checkpoint written");
}

/// Finishes the run on every core with the fastest kernel: checkpoints do not depend on it.
pub fn resume(checkpoint: &Path) -> serde_json::Value {
    let out = Command::new(bin())
        .args([
            "count",
            "17",
            "-t",
            "2",
            "--engine",
            "d4",
            "--json",
            "--checkpoint",
        ])
        .arg(checkpoint)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn sigint_saves_and_the_run_resumes_to_the_right_total() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let child = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    let sent = Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "stopped in {:?}",
        sent.elapsed()
    );
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("resume"));
    let v = resume(&ck);
    assert_eq!(v["total"], known(17).0.to_string());
    assert_eq!(v["complete"], true);
    assert!(v["resumed_subtasks"].as_u64().unwrap() > 0);
}

#[test]
fn sigkill_loses_only_the_last_moments() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let mut child = start_long_count(&ck);
    wait_for_checkpoint(&ck);
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let v = resume(&ck);
    assert_eq!(v["total"], known(17).0.to_string());
    assert!(v["resumed_subtasks"].as_u64().unwrap() > 0);
}

#[test]
fn corrupt_truncated_and_foreign_checkpoints_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    let ck_arg = ck.display().to_string();
    assert_eq!(run(&["count", "11", "--checkpoint", &ck_arg]).1, "2680\n");
    // resuming a finished checkpoint recounts nothing
    let v: serde_json::Value =
        serde_json::from_str(&run(&["count", "11", "--json", "--checkpoint", &ck_arg]).1).unwrap();
    assert_eq!(v["resumed_subtasks"], v["subtasks"]);
    assert_eq!(v["total"], "2680");
    let good = std::fs::read_to_string(&ck).unwrap();
    let refuse = |text: &str, args: &[&str], why: &str| {
        std::fs::write(&ck, text).unwrap();
        let mut all = vec!["count"];
        all.extend(args);
        all.extend(["--checkpoint", &ck_arg]);
        let (code, out, err) = run(&all);
        assert_eq!(code, 1, "{why}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(why), "expected '{why}' in {err}");
    };
    let digit = good.find("\"total\":").unwrap() + 8;
    let mut corrupt = good.clone().into_bytes();
    corrupt[digit] = if corrupt[digit] == b'1' { b'2' } else { b'1' };
    refuse(std::str::from_utf8(&corrupt).unwrap(), &["11"], "checksum");
    refuse(&good[..good.len() / 2], &["11"], "truncated");
    refuse("", &["11"], "truncated");
    refuse("hello\nworld\n", &["11"], "checksum");
    refuse(&good, &["12"], "another run");
    refuse(&good, &["11", "--engine", "mirror"], "another run");
    refuse(&good, &["11", "--unique"], "another run");
    refuse(&good, &["11", "--shard", "0/2"], "another run");
    refuse(&good, &["11", "--split-depth", "2"], "another run");
}

#[test]
fn sigterm_stops_even_inside_huge_subtasks() {
    let child = Command::new(bin())
        .args(["count", "32", "-t", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let sent = Instant::now();
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "took {:?}",
        sent.elapsed()
    );
    assert!(out.stdout.is_empty());
}
