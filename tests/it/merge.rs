//! `merge`: shard records added up, and every record that does not belong (altered, foreign,
//! impossible numbers, hostile input) refused; `--verify` recounts.

use crate::oeis::known;
use crate::util::{bin, edit, json, merge_files, run, shard_files, shard_record, write};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// Item 4: A shard of several without per-subtask parts is refused, naming the file, unless
/// `--trust-totals`: nothing else checks its total.
#[cfg(unix)]
#[test]
fn a_sharded_record_without_parts_is_refused_unless_totals_are_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "shard", 10, 4, &[]);
    edit(&files[1], |v| {
        v.as_object_mut().unwrap().remove("parts");
        let total: u64 = v["total"].as_str().unwrap().parse().unwrap();
        v["total"] = Value::String((total + 8).to_string());
    });
    let (code, out, err) = merge_files(&files, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.is_empty());
    assert!(
        err.contains(&files[1]) && err.contains("--trust-totals"),
        "{err}"
    );
    edit(&files[1], |v| v["parts"] = Value::Null);
    let (code, _, err) = merge_files(&files, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("no per-subtask parts"), "{err}");
    // trusted, the hand-made total is added as it stands (and the user asked for that)
    let (code, out, err) = merge_files(&files, &["--trust-totals"]);
    assert_eq!((code, out.as_str()), (0, "732\n"), "{err}");
}

/// Item 5: Numbers nqueens could never have written are refused with file, field and reason: a
/// part of 2^64 or more, a unique count above its total (record or part).
#[cfg(unix)]
#[test]
fn parts_past_2_64_and_unique_above_total_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "shard", 10, 4, &["--unique"]);
    let original = std::fs::read_to_string(&files[1]).unwrap();
    let restore = || std::fs::write(&files[1], &original).unwrap();
    let bump = |v: &mut Value, field: &str, k: usize, by: u128| {
        let part: u128 = v["parts"][field][k].as_str().unwrap().parse().unwrap();
        v["parts"][field][k] = Value::String((part + by).to_string());
        let whole: u128 = v[field].as_str().unwrap().parse().unwrap();
        v[field] = Value::String((whole + by).to_string());
    };
    edit(&files[1], |v| bump(v, "total", 0, 1 << 64));
    let (code, out, err) = merge_files(&files, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains(&files[1]) && err.contains("total part") && err.contains("2^64"));
    restore();
    // a unique part above its total part, the sums kept consistent
    edit(&files[1], |v| {
        let total: u128 = v["parts"]["total"][0].as_str().unwrap().parse().unwrap();
        let unique: u128 = v["parts"]["unique"][0].as_str().unwrap().parse().unwrap();
        bump(v, "unique", 0, total + 1 - unique);
    });
    let (code, _, err) = merge_files(&files, &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&files[1]) && err.contains("more than its total"),
        "{err}"
    );
    restore();
    // a record whose unique count is above its total, trusted parts or not
    edit(&files[1], |v| {
        v.as_object_mut().unwrap().remove("parts");
        let total: u128 = v["total"].as_str().unwrap().parse().unwrap();
        v["unique"] = Value::String((total + 1).to_string());
    });
    let (code, _, err) = merge_files(&files, &["--trust-totals"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unique") && err.contains("more than its total"),
        "{err}"
    );
    restore();
    let (code, out, _) = merge_files(&files, &[]);
    assert_eq!((code, out.as_str()), (0, "724 92\n"));
}

/// `--verify` on a record without parts says which runs record them (sharded ones).
#[cfg(unix)]
#[test]
fn verify_without_parts_names_the_runs_that_record_them() {
    let dir = tempfile::tempdir().unwrap();
    let (code, whole, _) = run(&["count", "9", "--json"]);
    assert_eq!(code, 0);
    let file = crate::util::write(dir.path(), "whole.json", &whole);
    let (code, out, err) = merge_files(&[file], &["--trust-totals", "--verify", "3"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("only sharded runs record them"), "{err}");
}

/// Counts with a sign or a leading zero are not what nqueens writes: refused, the field named.
#[cfg(unix)]
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

/// Records whose N was changed in every shard agree with each other, but not with the plan
/// they name: refused (they added up to an N = 15 total of 365596 before).
#[cfg(unix)]
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

/// A run still going is looked at with `--partial`: the shards given are added up with every
/// check (a foreign or altered shard is still refused), the missing ones are named, and the
/// sum is not `complete`; without the flag a missing shard is refused as before.
#[test]
fn a_partial_merge_adds_the_shards_given_and_names_the_missing() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "part", 10, 6, &[]);
    let given = [files[0].clone(), files[2].clone(), files[3].clone()];
    let sum: u128 = given
        .iter()
        .map(|f| {
            let v = json(&std::fs::read_to_string(f).unwrap());
            v["total"].as_str().unwrap().parse::<u128>().unwrap()
        })
        .sum();
    let (code, _, err) = merge_files(&given, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("missing shard(s) 1/6, 4/6, 5/6"), "{err}");
    let (code, out, err) = merge_files(&given, &["--partial", "--verify", "1"]);
    assert_eq!((code, out.trim()), (0, sum.to_string().as_str()), "{err}");
    assert!(
        err.contains("the sum of 3 of 6 shards, not the total: missing 1, 4-5"),
        "{err}"
    );
    let (code, out, _) = merge_files(&given, &["--partial", "--json"]);
    let v = json(&out);
    assert_eq!(code, 0);
    assert_eq!(
        (v["complete"].as_bool(), v["total"].as_str()),
        (Some(false), Some(sum.to_string().as_str()))
    );
    assert_eq!(v["missing_shards"], serde_json::json!([[1, 1], [4, 5]]));
    // every shard given: the whole count, complete, nothing missing
    let (code, out, err) = merge_files(&files, &["--partial", "--json"]);
    let v = json(&out);
    assert_eq!(
        (code, v["total"].as_str(), v["complete"].as_bool()),
        (0, Some("724"), Some(true)),
        "{err}"
    );
    assert!(
        v.get("missing_shards").is_none() && !err.contains("missing"),
        "{out} {err}"
    );
    // the checks still hold: an altered shard is refused in a partial merge too
    edit(&files[2], |v| v["total"] = Value::String("1".into()));
    let (code, _, err) = merge_files(&given, &["--partial"]);
    assert_eq!(code, 1);
    assert!(err.contains("not the sum of its subtasks' parts"), "{err}");
}

/// A `merge --partial --json` result given to merge is named as the partial sum it is.
#[test]
fn a_partial_sum_given_to_merge_is_refused_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let shard = write(dir.path(), "s0.json", &shard_record(10, 0, 2, &[]));
    let (code, partial, err) = run(&["merge", "--partial", "--json", &shard]);
    assert_eq!(code, 0, "{err}");
    let partial = write(dir.path(), "partial.json", &partial);
    let (code, out, err) = run(&["merge", &partial]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("partial.json") && err.contains("is a partial sum (merge --partial)"),
        "{err}"
    );
}
