//! The signal contract: SIGINT, SIGTERM and SIGHUP stop every command with its exit code and
//! one line, a run saves first, a second signal ends it at once.

use crate::oeis::known;
use crate::util::{
    bin, interrupt, kill, resume, run, shard_files, signal_number, signalled, signalled_when,
    start_long_count, stderr_of, wait_at_most, wait_for_checkpoint, wait_until_caught,
};
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
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

/// A small filesystem of its own (tmpfs), unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
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
fn sigterm_stops_even_inside_huge_subtasks() {
    let child = Command::new(bin())
        .args(["count", "32", "-t", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_caught(child.id(), signal_number("-TERM"));
    // well into the search of N = 32's first subtasks, which take hours each
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    kill("-TERM", child.id());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        sent.elapsed() < Duration::from_secs(2),
        "took {:?}",
        sent.elapsed()
    );
    assert!(out.stdout.is_empty());
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

/// N = 27's plan takes seconds to make where its quarters' sizes are counted (the first
/// process on a machine): a dry run stops at a signal instead of finishing it (it went on
/// and exited 0).
#[test]
fn a_dry_run_stops_at_sigterm_while_it_makes_the_plan() {
    let (var, value) = crate::util::SIZES_NOT_KEPT;
    let child = Command::new(bin())
        .args(["count", "27", "--dry-run"])
        .env(var, value)
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

/// Item 3: `merge` keeps the signal contract of `count`: SIGTERM or SIGINT, also a SIGINT the
/// shell set to be ignored (a background job), ends it with a message and 130.
#[cfg(unix)]
#[test]
fn merge_keeps_the_signal_contract_in_the_foreground_and_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let files = shard_files(dir.path(), "shard", 12, 2, &["--engine", "d4"]);
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
        wait_until_caught(child.id(), signal_number(how));
        kill(how, child.id());
        let what = format!("merge {how} background={background}");
        let (status, _) = wait_at_most(&mut child, Duration::from_secs(5), &what);
        assert_eq!(status.code(), Some(130), "{what}");
        assert!(stderr_of(child).contains("interrupted"), "{what}");
    }
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

/// `nqueens: interrupted` is said once, whichever of the signal thread and the run that saw
/// the stop gets there first (twice in about half the runs of a hostile pass).
#[cfg(unix)]
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

/// SIGHUP (a closed terminal or ssh session) stops `count --checkpoint` as SIGTERM does:
/// saved, said, exit 129 (it ended with 129 and no save), and the same command resumes.
#[cfg(unix)]
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

/// SIGINT while the checkpoint's disk is full: exit 130, "interrupted", why the last save
/// failed and what the file on disk still holds (which is what it holds); resumed while the
/// disk is still full: exit 1 saying the same, nothing counted; a failing save said once.
#[cfg(unix)]
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

/// The stop signals are caught from the first line of `main` on, before the arguments are
/// read (a signal in the first milliseconds took the default action): a signal sent as soon
/// as the process catches it ends every kind of run by the contract, whether it lands
/// before the command's own handling or after.
#[cfg(unix)]
#[test]
fn a_signal_from_mains_first_line_on_follows_the_contract() {
    let commands: [&[&str]; 3] = [
        &[
            "count", "17", "-t", "1", "--engine", "d4", "--kernel", "scalar",
        ],
        &[
            "count", "17", "-t", "1", "--engine", "d4", "--json", "--stats",
        ],
        &["scale", "17", "-t", "1", "--repeat", "1"],
    ];
    for args in commands {
        for signal in ["-TERM", "-INT", "-HUP"] {
            // sent the moment the process catches it
            let (code, out, err) = signalled_when(args, || {}, signal);
            let want = if signal == "-HUP" { 129 } else { 130 };
            assert_eq!(code, Some(want), "{args:?} {signal}: {err}");
            assert!(out.is_empty(), "{args:?} {signal}: a result was printed");
            assert!(
                err.contains("nqueens: interrupted"),
                "{args:?} {signal}: {err}"
            );
        }
    }
}
