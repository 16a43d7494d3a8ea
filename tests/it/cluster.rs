//! Shards: disjoint, covering, summing to the count, chosen by flag or by a batch scheduler's
//! variables; dry runs; the scripts that run them.

use crate::oeis::known;
use crate::util::{bin, json, nqueens, run};
use nqueens::{count_subtasks, CountOptions, EngineChoice, Shard};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

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

/// An index without its count, or a count without its index, is refused in one line naming
/// both; a variable set to nothing is unset (the whole count, no word of a shard).
#[test]
fn a_shard_index_without_its_count_is_refused() {
    let count_8 = |vars: &[(&str, &str)]| {
        let out = Command::new(bin())
            .args(["count", "8"])
            .envs(vars.iter().copied())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), out.stdout, err)
    };
    for (var, value, missing) in [
        ("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT"),
        ("SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_ID"),
        ("JOB_COMPLETION_INDEX", "0", "NQUEENS_SHARDS"),
    ] {
        let (code, out, err) = count_8(&[(var, value)]);
        assert_eq!(code, Some(2), "{var}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(var) && err.contains(missing), "{err}");
    }
    let (code, _, err) = count_8(&[("SLURM_ARRAY_TASK_ID", ""), ("SLURM_ARRAY_TASK_COUNT", "4")]);
    assert_eq!(code, Some(2), "an empty index is unset: {err}");
    let (code, out, err) = count_8(&[("SLURM_ARRAY_TASK_ID", ""), ("SLURM_ARRAY_TASK_COUNT", "")]);
    assert_eq!((code, &out[..]), (Some(0), &b"92\n"[..]));
    assert!(err.is_empty(), "{err}");
}

#[test]
fn a_sharded_plain_count_says_it_is_partial() {
    let (code, out, err) = run(&["count", "10", "--shard", "1/3"]);
    assert_eq!(code, 0);
    assert!(out.trim().parse::<u64>().unwrap() < 724);
    assert!(err.contains("shard 1/3 only"), "{err}");
}

/// Item 12: `--shard 0/1` is the whole count: no shard note, no shard identity.
#[cfg(unix)]
#[test]
fn shard_0_of_1_is_the_whole_count() {
    let (code, out, err) = run(&["count", "10", "--shard", "0/1"]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "724\n", ""));
    let whole: Value = serde_json::from_str(&run(&["count", "10", "--json"]).1).unwrap();
    let one: Value =
        serde_json::from_str(&run(&["count", "10", "--shard", "0/1", "--json"]).1).unwrap();
    for v in [&whole, &one] {
        assert!(v.get("shard").is_none() && v.get("parts").is_none(), "{v}");
    }
    assert_eq!(one["total"], whole["total"]);
    let out = Command::new(bin())
        .args(["count", "10"])
        .env("JOB_COMPLETION_INDEX", "0")
        .env("NQUEENS_SHARDS", "1")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "724\n");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Scheduler variables that cannot select one shard are refused with one line naming them:
/// a count without its index (the whole board was counted silently), Slurm and Kubernetes
/// selecting different shards (Slurm won silently), a step of 0.
#[cfg(unix)]
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
