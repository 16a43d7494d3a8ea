//! Hostile inputs, faults and signals: each test closes one hole a hostile run found (plots
//! written in place, tables lost to a plot error, merge outside the signal contract, shard
//! records trusted blindly or holding impossible numbers, thousands of idle threads, a table
//! build deaf to SIGINT, an empty list of allowed values, help written nowhere with success,
//! stale temporary files, a lock error naming the wrong file, a note for a 1-way shard).

use crate::cli::run;
use crate::cluster::bin;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

fn signal(name: &str, child: &Child) {
    let status = Command::new("kill")
        .args([name, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for `child` at most `limit`; kills it and fails when it runs on.
fn wait_at_most(child: &mut Child, limit: Duration, what: &str) -> (ExitStatus, Duration) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, start.elapsed());
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running {limit:?} after the signal");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends SIGINT to `command`'s process `after` its start and checks that it ends within
/// `bound` of the signal, with exit code 130 and the message.
fn interrupt(command: &mut Command, after: Duration, bound: Duration) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    signal("-INT", &child);
    let what = format!("{command:?}");
    let (status, took) = wait_at_most(&mut child, bound * 10, &what);
    assert_eq!(status.code(), Some(130), "{what}");
    assert!(took < bound, "{what}: SIGINT took {took:?}");
    assert!(stderr_of(child).contains("interrupted"), "{what}");
}

fn stderr_of(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The lines of a JSON-lines file of `count --json` records.
fn shard_records(dir: &Path, args: &[&str], shards: usize) -> Vec<String> {
    (0..shards)
        .map(|i| {
            let shard = format!("{i}/{shards}");
            let mut all = args.to_vec();
            all.extend(["--shard", &shard, "--json"]);
            let (code, out, err) = run(&all);
            assert_eq!(code, 0, "{err}");
            let path = dir.join(format!("shard-{i}.json"));
            std::fs::write(&path, out).unwrap();
            path.display().to_string()
        })
        .collect()
}

fn edit(path: &str, change: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    change(&mut v);
    std::fs::write(path, format!("{v}\n")).unwrap();
}

fn merge(files: &[String], flags: &[&str]) -> (i32, String, String) {
    let mut args = vec!["merge"];
    args.extend(flags);
    args.extend(files.iter().map(String::as_str));
    run(&args)
}

/// Item 1: A plot replaces its file whole (a temporary file and a rename: another link to the old
/// file keeps the old plot), and a device is written straight to, never renamed over.
#[test]
fn a_plot_replaces_its_file_whole_and_writes_a_device_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("speedup.svg");
    let other_link = dir.path().join("old.svg");
    std::fs::write(&plot, "the earlier plot").unwrap();
    std::fs::hard_link(&plot, &other_link).unwrap();
    let scale_plot = |to: &str| {
        let (code, _, err) = run(&["scale", "8", "-t", "1", "--repeat", "1", "--plot", to]);
        assert_eq!(code, 0, "{err}");
    };
    scale_plot(plot.to_str().unwrap());
    assert!(std::fs::read_to_string(&plot).unwrap().starts_with("<svg"));
    assert_eq!(
        std::fs::read_to_string(&other_link).unwrap(),
        "the earlier plot",
        "the plot was written into the old file instead of replacing it"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "a temporary file was left: {names:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        scale_plot("/dev/null");
        let null = std::fs::metadata("/dev/null").unwrap().file_type();
        assert!(null.is_char_device(), "/dev/null was replaced");
    }
}

/// Item 2: A plot place that takes nothing (/dev/full) is refused before measuring; a plot that
/// fails after the measurements still leaves the table on stdout (and exit 1).
#[test]
fn the_table_survives_a_plot_error_and_a_full_device_is_refused_first() {
    if Path::new("/dev/full").exists() {
        let (code, out, err) = run(&["scale", "10", "--repeat", "1", "--plot", "/dev/full"]);
        assert_eq!(code, 1, "{err}");
        assert!(out.is_empty(), "{out}");
        assert!(err.contains("/dev/full") && !err.contains("run="), "{err}");
    }
    // the plot's directory disappears while the runs are measured
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("plots");
    std::fs::create_dir(&sub).unwrap();
    let plot = sub.join("speedup.svg");
    let mut child = Command::new(bin())
        .args(["scale", "15", "-t", "1", "--repeat", "3", "--format", "csv"])
        .args(["--engine", "d4", "--kernel", "scalar", "--plot"])
        .arg(&plot)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).unwrap();
    assert!(first.starts_with("threads=1 run=1"), "{first}");
    std::fs::remove_dir_all(&sub).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{rest}");
    assert!(stdout.starts_with("threads,runs,median_s"), "{stdout}");
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
    assert!(rest.contains("cannot write the plot"), "{rest}");
}

/// Item 3: `merge` keeps the signal contract of `count`: SIGTERM or SIGINT, also a SIGINT the
/// shell set to be ignored (a background job), ends it with a message and 130.
#[cfg(unix)]
#[test]
fn merge_keeps_the_signal_contract_in_the_foreground_and_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_records(dir.path(), &["count", "12", "--engine", "d4"], 2);
    for (how, background) in [("-TERM", false), ("-INT", false), ("-INT", true)] {
        // reading standard input that never ends: merge waits until the signal
        let mut command = if background {
            let mut sh = Command::new("sh");
            sh.args(["-c", "trap '' INT; exec \"$0\" merge \"$@\" -"])
                .arg(bin())
                .args(&files);
            sh
        } else {
            let mut direct = Command::new(bin());
            direct.arg("merge").args(&files).arg("-");
            direct
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        signal(how, &child);
        let what = format!("merge {how} background={background}");
        let (status, _) = wait_at_most(&mut child, Duration::from_secs(5), &what);
        assert_eq!(status.code(), Some(130), "{what}");
        assert!(stderr_of(child).contains("interrupted"), "{what}");
    }
}

/// Item 4: A shard of several without per-subtask parts is refused, naming the file, unless
/// `--trust-totals`: nothing else checks its total.
#[test]
fn a_sharded_record_without_parts_is_refused_unless_totals_are_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_records(dir.path(), &["count", "10"], 4);
    edit(&files[1], |v| {
        v.as_object_mut().unwrap().remove("parts");
        let total: u64 = v["total"].as_str().unwrap().parse().unwrap();
        v["total"] = Value::String((total + 8).to_string());
    });
    let (code, out, err) = merge(&files, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.is_empty());
    assert!(
        err.contains(&files[1]) && err.contains("--trust-totals"),
        "{err}"
    );
    edit(&files[1], |v| v["parts"] = Value::Null);
    let (code, _, err) = merge(&files, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("no per-subtask parts"), "{err}");
    // trusted, the hand-made total is added as it stands (and the user asked for that)
    let (code, out, err) = merge(&files, &["--trust-totals"]);
    assert_eq!((code, out.as_str()), (0, "732\n"), "{err}");
}

/// Item 5: Numbers nqueens could never have written are refused with file, field and reason: a
/// part of 2^64 or more, a unique count above its total (record or part).
#[test]
fn parts_past_2_64_and_unique_above_total_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_records(dir.path(), &["count", "10", "--unique"], 4);
    let original = std::fs::read_to_string(&files[1]).unwrap();
    let restore = || std::fs::write(&files[1], &original).unwrap();
    let bump = |v: &mut Value, field: &str, k: usize, by: u128| {
        let part: u128 = v["parts"][field][k].as_str().unwrap().parse().unwrap();
        v["parts"][field][k] = Value::String((part + by).to_string());
        let whole: u128 = v[field].as_str().unwrap().parse().unwrap();
        v[field] = Value::String((whole + by).to_string());
    };
    edit(&files[1], |v| bump(v, "total", 0, 1 << 64));
    let (code, out, err) = merge(&files, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(err.contains(&files[1]) && err.contains("total part") && err.contains("2^64"));
    restore();
    // a unique part above its total part, the sums kept consistent
    edit(&files[1], |v| {
        let total: u128 = v["parts"]["total"][0].as_str().unwrap().parse().unwrap();
        let unique: u128 = v["parts"]["unique"][0].as_str().unwrap().parse().unwrap();
        bump(v, "unique", 0, total + 1 - unique);
    });
    let (code, _, err) = merge(&files, &[]);
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
    let (code, _, err) = merge(&files, &["--trust-totals"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("unique") && err.contains("more than its total"),
        "{err}"
    );
    restore();
    let (code, out, _) = merge(&files, &[]);
    assert_eq!((code, out.as_str()), (0, "724 92\n"));
}

/// Item 6: Never more workers than subtasks, idle ones cheap, and a stop acted on at once with
/// thousands of threads.
#[cfg(unix)]
#[test]
fn thousands_of_threads_cost_little_and_stop_at_once() {
    for n in ["4", "12"] {
        let start = Instant::now();
        let (code, out, err) = run(&["count", n, "-t", "4096", "--json"]);
        let took = start.elapsed();
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let (threads, subtasks) = (
            v["threads"].as_u64().unwrap(),
            v["subtasks"].as_u64().unwrap(),
        );
        assert_eq!(threads, subtasks.min(4096), "N = {n}");
        // 8 s and 60 s before workers were capped and started per job (0.01 and 0.2 s now)
        assert!(took < Duration::from_secs(4), "N = {n}: {took:?}");
    }
    let start = Instant::now();
    let (code, out, _) = run(&["list", "11", "-t", "4096"]);
    assert_eq!((code, out.lines().count()), (0, 2680));
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    interrupt(
        Command::new(bin()).args(["count", "18", "-t", "4096", "--engine", "d4"]),
        Duration::from_millis(500),
        Duration::from_secs(1),
    );
}

/// Item 7: SIGINT while the quadrant engine builds its tables stops the build (N = 23's
/// north table takes about a second to build on two threads).
#[cfg(unix)]
#[test]
fn sigint_stops_the_quadrant_table_build() {
    // with a checkpoint the run itself winds down (without one the process ends at once)
    let dir = tempfile::tempdir().unwrap();
    interrupt(
        Command::new(bin())
            .args(["count", "23", "--engine", "quadrant", "--shard", "1/65536"])
            .args(["--memory-limit", "2G", "-t", "2", "--checkpoint"])
            .arg(dir.path().join("ck")),
        Duration::from_millis(300),
        Duration::from_secs(1),
    );
}

/// Item 8: No usage error ends in an empty list of allowed values.
#[test]
fn an_empty_checkpoint_path_names_nothing_empty() {
    let (code, out, err) = run(&["count", "8", "--checkpoint", ""]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--checkpoint"), "{err}");
    assert!(
        !err.contains("allowed values: \n") && !err.trim_end().ends_with(':'),
        "{err}"
    );
}

/// Item 9: Help and version that cannot be written are a failure, as for every other output.
#[test]
fn help_and_version_to_a_full_stdout_exit_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    for args in [
        &["--help"][..],
        &["--version"],
        &["count", "--help"],
        &["merge", "--help"],
        &["help"],
    ] {
        let out = Command::new(bin())
            .args(args)
            .stdout(full.try_clone().unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let (code, out, _) = run(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("nqueens "));
}

/// Item 10: Temporary files of a checkpoint left by a killed save (`FILE.tmpXXXXXX`) are removed
/// by the next run that holds the lock, and only those.
#[test]
fn stale_checkpoint_temporaries_are_removed_by_the_lock_holder() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    for stale in ["ck.tmpAbC123", "ck.tmp000000"] {
        std::fs::write(at(stale), "{\"half\": ").unwrap();
    }
    for other in ["ck.tmpAbC1234", "ck.tmp", "other.tmpAbC123", "ck.tmpAb-123"] {
        std::fs::write(at(other), "not ours").unwrap();
    }
    let ck = at("ck");
    let (code, out, err) = run(&["count", "9", "--checkpoint", ck.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, "352\n"), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ck",
            "ck.lock",
            "ck.tmp",
            "ck.tmpAb-123",
            "ck.tmpAbC1234",
            "other.tmpAbC123"
        ]
    );
}

/// Item 11: A lock file that cannot be opened is named, with the reason the OS gave.
#[test]
fn an_unopenable_lock_file_is_named_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    // a link to a file in a folder that does not exist: the open fails whoever runs the test
    // (root included); a directory there is refused as no regular file, before any open
    std::os::unix::fs::symlink(dir.path().join("none/lock"), dir.path().join("ck.lock")).unwrap();
    let (code, out, err) = run(&["count", "8", "--checkpoint", ck.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("ck.lock cannot be opened"), "{err}");
    assert!(err.contains("os error"), "{err}");
}

/// Item 12: `--shard 0/1` is the whole count: no shard note, no shard identity.
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
