//! Memory limits: the address space (`ulimit -v`) and the tables' budget size the threads and
//! the plan; a run short of memory ends in one line, never an abort.

use crate::util::bin;
use std::process::Command;

/// Under an address-space limit the table budget shrinks with it, a `--memory-limit` past
/// it too (with a note): the quadrant engine searches halves (or `auto` takes d4), with a
/// note, instead of aborting on a failed allocation (exit 134 with a garbled message before).
#[cfg(unix)]
#[test]
fn an_address_space_limit_shrinks_the_table_budget() {
    let bin = bin();
    for (engine, limit) in [
        ("quadrant", ""),
        ("auto", ""),
        ("quadrant", "--memory-limit 10G"),
    ] {
        let script = format!(
            "ulimit -v 200000 && exec '{}' count 22 --engine {engine} --shard 1/65536 {limit}",
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
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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
#[cfg(unix)]
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

/// Nor from the threads: under `ulimit -v` of about 1 GB, N = 24 took quadrant on 4 threads
/// and d4 on 7, 16 and 64, and shards of nodes with other core counts would not merge.
#[cfg(unix)]
#[test]
fn the_plan_under_an_address_space_limit_does_not_depend_on_the_threads() {
    let plan = |threads: usize| {
        let script = format!(
            "ulimit -v 1000000 && exec '{}' count 24 --dry-run -t {threads}",
            bin().display()
        );
        let out = Command::new("sh").args(["-c", &script]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let one = plan(1);
    assert!(one.contains("engine=quadrant"), "{one}");
    for threads in [4, 7, 16, 64] {
        assert_eq!(plan(threads), one, "{threads} threads");
    }
}

/// `scale` under an address-space limit that holds a count to fewer threads gives no row for
/// the thread count that did not run (it printed a `threads: 64` row measured on one): the
/// rows measured, a line saying why the other has none, `complete: false`, exit 1.
#[cfg(unix)]
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
#[cfg(unix)]
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

/// Large quadrant counts in little address space: a unit's half-board patterns, the finished
/// set that cannot be had end the run with one line (exit 1), or it counts; the sizing of
/// N = 24's quarters, on every core, counts on the threads it can start; never an abort (each
/// of these aborted before).
#[cfg(unix)]
#[test]
fn large_counts_short_of_memory_end_in_one_line() {
    for (limit, args) in [
        (40000, "count 23 --engine quadrant --shard 9/262144"),
        (48000, "count 23 --engine quadrant --shard 9/262144"),
        (150000, "count 23 --engine quadrant"),
        (40000, "count 24 --engine quadrant --dry-run"),
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
