//! The quadrant engine: totals against d4 and the known table, shards, memory limit, refusals.

use crate::oeis::known;
use crate::util::{merge_files, run, shard_files, shard_record, write};
use nqueens::KernelChoice;
use nqueens::{count, CountOptions, EngineChoice};

fn opts(engine: EngineChoice, kernel: KernelChoice) -> CountOptions {
    CountOptions {
        threads: Some(2),
        engine,
        kernel,
        ..CountOptions::default()
    }
}

#[test]
fn quadrant_equals_d4_on_every_kernel() {
    for kernel in [KernelChoice::Scalar, KernelChoice::Auto] {
        for n in 4..=14 {
            let q = count(n, &opts(EngineChoice::Quadrant, kernel)).unwrap();
            let d4 = count(n, &opts(EngineChoice::D4, kernel)).unwrap();
            assert_eq!(q.total, d4.total, "n={n} {kernel:?}");
            assert_eq!(q.engine.name(), "quadrant");
        }
    }
}

#[test]
fn quadrant_counts_the_known_table_to_17() {
    for n in (1..=3).chain(15..=17) {
        let q = count(n, &opts(EngineChoice::Quadrant, KernelChoice::Auto)).unwrap();
        assert_eq!(q.total, known(n).0, "n={n}");
    }
}

/// Release-only (about 5 s on two threads): CI runs it with `--ignored`.
#[test]
#[ignore]
fn quadrant_18() {
    let q = count(18, &opts(EngineChoice::Quadrant, KernelChoice::Auto)).unwrap();
    assert_eq!(q.total, known(18).0);
}

/// A random unit of N = 24 and one of 25 counted from the tables agree with the row search
/// that `merge --verify` runs, which shares nothing with them (the first id of each N that
/// counts something). Nearly all the time is the row searches, each on one thread, so the
/// two run side by side: on a Zen 3 core (AVX2) 225 s for N = 24's, some 300 to 400 s for
/// a unit of 25 (two units of each took 1,126 s one after another, too long for CI's half
/// hour beside the rest). Release-only: CI runs it with `--ignored`.
#[test]
#[ignore]
fn quadrant_24_and_25_units_agree_with_the_row_search() {
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x2545_F491_4F6C_DD1D_u64;
    let mut units = Vec::new();
    // the plans' sizes (tests/it/golden.rs pins them)
    for (n, ids) in [(24, 1_352_078), (25, 17_577_014)] {
        let (id, record, total) = loop {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let id = (seed % ids) as usize;
            let record = shard_record(n, id, ids as usize, &["--engine", "quadrant"]);
            let fields = json(&record);
            // no patterns: an id that counts nothing
            if fields["nodes"] != "0" {
                break (id, record, fields["total"].as_str().unwrap().to_string());
            }
        };
        let file = write(dir.path(), &format!("{n}-{id}.json"), &record);
        units.push((n, id, file, total));
    }
    std::thread::scope(|scope| {
        for (n, id, file, total) in &units {
            scope.spawn(move || {
                let (code, out, err) =
                    merge_files(std::slice::from_ref(file), &["--partial", "--verify", "1"]);
                assert_eq!(
                    (code, out.trim()),
                    (0, total.as_str()),
                    "N = {n} unit {id}: {err}"
                );
            });
        }
    });
}

/// A unit of N = 28 counted by the tables and again by the row search restricted to it
/// (`merge --verify`): the unit 1000, 65,632 solutions, 2.6 s by the tables (after 21 s of
/// sizing) and 11 minutes by rows on a Zen 3 core, too long for CI: run by hand with
/// `--ignored`.
#[test]
#[ignore]
fn a_unit_of_n28_agrees_with_the_row_search() {
    let dir = tempfile::tempdir().unwrap();
    let record = shard_record(28, 1000, 20_058_300, &["--engine", "quadrant"]);
    assert_eq!(json(&record)["total"], "65632");
    let file = write(dir.path(), "28-1000.json", &record);
    let (code, out, err) = merge_files(&[file], &["--partial", "--verify", "1"]);
    assert_eq!((code, out.trim()), (0, "65632"), "{err}");
}

/// N = 28's plan under `auto`: the quadrant engine, one plan whatever the threads (its
/// quarters are sized once a process: about 21 s on 2 cores, then shared).
#[test]
fn n28_is_planned_on_the_quadrant_engine_whatever_the_threads() {
    let plans: Vec<_> = [1, 2, 5]
        .map(|threads| {
            let options = CountOptions {
                threads: Some(threads),
                ..CountOptions::default()
            };
            let (plan, notes) = nqueens::RunRequest::new(28, options, None).plan().unwrap();
            assert!(notes.is_empty(), "{notes:?}");
            (plan.engine().name(), plan.len(), plan.digest())
        })
        .into();
    assert_eq!(plans[0], ("quadrant", 20_058_300, "8c6c4079".to_string()));
    assert!(plans.iter().all(|p| *p == plans[0]), "{plans:?}");
}

#[test]
fn auto_takes_quadrant_from_14_to_28_unless_asked_otherwise() {
    let plan = |o: &CountOptions, n| o.plan(n, None).unwrap().engine().name();
    let auto = CountOptions::default();
    assert_eq!(plan(&auto, 13), "d4");
    assert_eq!(plan(&auto, 14), "quadrant");
    assert_eq!(plan(&auto, 16), "quadrant");
    assert_eq!(plan(&auto, 20), "quadrant");
    assert_eq!(plan(&auto, 21), "quadrant");
    assert_eq!(plan(&auto, 24), "quadrant");
    assert_eq!(plan(&auto, 29), "d4");
    // N = 21's tables take about 70 MB
    let tight = CountOptions {
        memory_limit: Some(32 << 20),
        ..CountOptions::default()
    };
    assert_eq!(plan(&tight, 21), "d4");
    let unique = CountOptions {
        unique: true,
        ..CountOptions::default()
    };
    assert_eq!(plan(&unique, 16), "d4");
    let depth = CountOptions {
        split_depth: Some(3),
        ..CountOptions::default()
    };
    assert_eq!(plan(&depth, 16), "d4");
    // (a build without the GPU refuses a GPU asked for by name)
    if !cfg!(feature = "gpu") {
        return;
    }
    let gpu = CountOptions {
        device: nqueens::DeviceChoice::Gpu,
        ..CountOptions::default()
    };
    assert_eq!(plan(&gpu, 16), "d4");
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

#[test]
fn random_shards_merge_to_the_total_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    for (n, m) in [(11usize, 3usize), (13, 7), (14, 2)] {
        let files = shard_files(
            dir.path(),
            &format!("q{n}"),
            n,
            m,
            &["--engine", "quadrant"],
        );
        for file in &files {
            assert_eq!(
                json(&std::fs::read_to_string(file).unwrap())["engine"],
                "quadrant"
            );
        }
        let (code, out, err) = merge_files(&files, &["--verify", "3"]);
        assert_eq!(
            (code, out.trim()),
            (0, known(n).0.to_string().as_str()),
            "{err}"
        );
    }
}

/// A record whose unit says two more solutions than it has, its total raised to match: the
/// recount (a row search restricted to the unit, not the tables) refuses it.
#[test]
fn verify_recounts_quadrant_units_without_trusting_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "t", 13, 2, &["--engine", "quadrant"]);
    let mut record = json(&std::fs::read_to_string(&files[1]).unwrap());
    let raise = |v: &mut serde_json::Value| {
        let said: u64 = v.as_str().unwrap().parse().unwrap();
        *v = (said + 2).to_string().into();
    };
    raise(&mut record["parts"]["total"][7]);
    raise(&mut record["total"]);
    std::fs::write(&files[1], record.to_string()).unwrap();
    let (code, out, err) = merge_files(&files, &[]);
    assert_eq!(
        (code, out.trim()),
        (0, "73714"),
        "adds up without a recount: {err}"
    );
    let (code, out, err) = merge_files(&files, &["--verify", "100000"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("subtask 15 records total"), "{err}");
}

#[test]
fn quadrant_shards_are_refused_beside_d4_shards() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["quadrant", "d4"]
        .iter()
        .enumerate()
        .map(|(i, engine)| {
            let record = shard_record(12, i, 2, &["--engine", engine]);
            write(dir.path(), &format!("s{i}"), &record)
        })
        .collect();
    let (code, out, err) = merge_files(&files, &[]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("engine"), "{err}");
}

#[test]
fn a_quadrant_checkpoint_resumes_and_is_refused_by_d4() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    let first = run(&["count", "14", "--engine", "quadrant", "--checkpoint", &ck]);
    assert_eq!(first.1.trim(), "365596", "{}", first.2);
    let (code, out, err) = run(&[
        "count",
        "14",
        "--engine",
        "quadrant",
        "--json",
        "--checkpoint",
        &ck,
    ]);
    assert_eq!(code, 0, "{err}");
    let v = json(&out);
    assert_eq!(v["total"], "365596");
    assert_eq!(v["resumed_subtasks"], v["subtasks"]);
    let (code, _, err) = run(&["count", "14", "--engine", "d4", "--checkpoint", &ck]);
    assert_eq!(code, 1);
    assert!(err.contains("engine"), "{err}");
}

#[test]
fn the_memory_limit_is_honoured_and_the_count_stays_right() {
    // N = 16's quarter tables take about 3.4 MB: under a 1 KiB limit the halves are searched,
    // with a note on stderr
    let run_json = |limit: &str| {
        let (code, out, err) = run(&[
            "count",
            "16",
            "--engine",
            "quadrant",
            "-t",
            "2",
            "--json",
            "--memory-limit",
            limit,
        ]);
        assert_eq!(code, 0, "{err}");
        let searched =
            err.contains("over the memory limit of 1 KiB: each unit's halves are searched");
        assert_eq!(searched, limit == "1K", "{err}");
        assert!(err.lines().count() <= 1, "{err}");
        json(&out)
    };
    let small = run_json("1K");
    let large = run_json("1G");
    assert_eq!(small["total"], "14772512");
    assert_eq!(large["total"], "14772512");
    if let (Some(s), Some(l)) = (
        small["peak_memory_bytes"].as_u64(),
        large["peak_memory_bytes"].as_u64(),
    ) {
        assert!(s + (2 << 20) < l, "peak {s} under 1K, {l} under 1G");
    }
    assert_eq!(large["tables_bytes"], 3_381_592, "N = 16's counted tables");
    // auto takes d4 where the tables do not fit, and says so
    let (code, out, err) = run(&["count", "16", "--memory-limit", "1M", "--stats"]);
    assert_eq!((code, out.trim()), (0, "14772512"), "{err}");
    assert!(
        err.contains("over the memory limit of 1 MiB: counted with d4"),
        "{err}"
    );
    assert!(err.contains("engine=d4"), "{err}");
    let (_, _, err) = run(&["count", "12", "--engine", "quadrant", "--stats"]);
    assert!(err.contains("peak_memory="), "{err}");
}

#[test]
fn what_the_engine_cannot_do_is_a_usage_error() {
    for (args, words) in [
        (
            &["count", "12", "--engine", "quadrant", "--unique"][..],
            "--engine quadrant counts totals only",
        ),
        (
            &["count", "29", "--engine", "quadrant"],
            "--engine quadrant takes N up to 28, got 29: a count past it would cost",
        ),
        (
            &["count", "12", "--engine", "quadrant", "--split-depth", "3"],
            "no split depth",
        ),
        (
            &["count", "12", "--engine", "quadrant", "--prefix", "1"],
            "prefix",
        ),
        (&["count", "12", "--memory-limit", "12X"], "memory limit"),
        (&["count", "12", "--memory-limit", "-1"], "memory limit"),
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert!(err.contains(words), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

/// A small shard of N = 22 or 23 builds only the north row sets its units use, two a unit,
/// instead of the whole 551 MB north table (its peak was 700 MB however small the shard), and
/// counts what the same shard counts with halves searched (no tables at all).
#[test]
fn a_small_shard_of_22_or_23_holds_only_the_row_sets_its_units_use() {
    for n in ["22", "23"] {
        let shard = [
            "count", n, "--engine", "quadrant", "--shard", "1/65536", "-t", "2",
        ];
        let (code, out, err) = run(&[&shard[..], &["--json"]].concat());
        assert_eq!(code, 0, "{err}");
        let tables = json(&out);
        let bytes = |field: &str| tables[field].as_u64().unwrap();
        assert!(bytes("tables_bytes") < 200 << 20, "N = {n}: {out}");
        if tables["peak_memory_bytes"].is_u64() {
            assert!(bytes("peak_memory_bytes") < 400 << 20, "N = {n}: {out}");
        }
        let (code, out, err) = run(&[&shard[..], &["--json", "--memory-limit", "1M"]].concat());
        assert_eq!(code, 0, "{err}");
        let searched = json(&out);
        assert_eq!(searched["tables_bytes"], 0, "{out}");
        assert_eq!(tables["total"], searched["total"], "N = {n}");
    }
}

/// The quarters' sizes are kept in `NQUEENS_CACHE_DIR` for the next process: written by
/// the first plan of N = 24, read by the next, written anew where the file was damaged,
/// and where the directory cannot be written the count goes on, saying nothing.
#[test]
fn the_quarters_sizes_are_kept_for_the_next_process() {
    let dir = tempfile::tempdir().unwrap();
    let plan = |cache: &std::path::Path| {
        let out = crate::util::nqueens()
            .env("NQUEENS_CACHE_DIR", cache)
            .args(["count", "24", "--dry-run", "--memory-limit", "64G"])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!((out.status.code(), err.as_str()), (Some(0), ""));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = plan(dir.path());
    let file = dir.path().join("quarter-placements-12x12.txt");
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(
        kept.starts_with("nqueens quarter placements 12x12"),
        "{kept}"
    );
    assert_eq!(kept.lines().count(), 1 + 4096 + 1);
    assert_eq!(plan(dir.path()), first);
    // a count changed: the file no longer checks out, and is counted and written again
    let damaged = kept.replacen("\n12\n", "\n13\n", 1);
    assert_ne!(damaged, kept);
    std::fs::write(&file, damaged).unwrap();
    assert_eq!(plan(dir.path()), first);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), kept);
    // a file that checks out is what the plan is made by: a hundred times as many
    // placements put N = 24's tables over 1 GiB, which `auto` then leaves to d4
    let engine = |out: &std::process::Output| String::from_utf8_lossy(&out.stdout).into_owned();
    let at_1g = || {
        crate::util::nqueens()
            .env("NQUEENS_CACHE_DIR", dir.path())
            .args(["count", "24", "--dry-run", "--memory-limit", "1G"])
            .output()
            .unwrap()
    };
    assert!(engine(&at_1g()).contains("engine=quadrant"));
    let mut larger = String::from("nqueens quarter placements 12x12, one row set a line\n");
    for (i, count) in kept.lines().skip(1).take(4096).enumerate() {
        let count: u64 = count.parse().unwrap();
        larger += &format!("{}\n", if i == 0 { count } else { count * 100 });
    }
    larger += &format!("crc32 {:08x}\n", crc32fast::hash(larger.as_bytes()));
    std::fs::write(&file, larger).unwrap();
    let out = at_1g();
    assert!(engine(&out).contains("engine=d4"), "{}", engine(&out));
    let note = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(note.contains("take 29 GiB"), "{note}");
    // a file where the directory should be
    let not_a_dir = dir.path().join("plain");
    std::fs::write(&not_a_dir, "").unwrap();
    assert_eq!(plan(&not_a_dir), first);
}
