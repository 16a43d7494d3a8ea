//! What the tests share: the binary run and signalled, files written and edited, shard
//! records made and merged, long counts started and waited for on events, runs stopped by
//! one.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The binary under test, as an `assert_cmd` command.
pub fn nqueens() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("nqueens").unwrap()
}

/// The variable that keeps no quarters' sizes between processes (no directory can be made
/// under `/dev/null`): a test that signals a plan while the sizes are counted needs them
/// counted, not read from an earlier test's file.
pub const SIZES_NOT_KEPT: (&str, &str) = ("NQUEENS_CACHE_DIR", "/dev/null/nqueens");

/// Runs the binary and returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = nqueens().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs the binary with `args` and returns (exit code, stdout, stderr).
pub fn run_owned(args: &[String]) -> (i32, String, String) {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

/// The path of the binary under test.
pub fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("nqueens")
}

/// Writes `text` to `dir/name`; returns the path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

pub fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

pub fn edit(path: &str, change: impl FnOnce(&mut Value)) {
    let mut v = json(&std::fs::read_to_string(path).unwrap());
    change(&mut v);
    std::fs::write(path, format!("{v}\n")).unwrap();
}

/// The number of a signal as `kill` names it.
pub fn signal_number(signal: &str) -> u32 {
    match signal {
        "-HUP" => 1,
        "-INT" => 2,
        "-KILL" => 9,
        "-TERM" => 15,
        other => panic!("no number for signal {other}"),
    }
}

/// Sends `signal` (`-INT`, `-TERM`, `-HUP`, `-KILL`) to process `pid`.
pub fn kill(signal: &str, pid: u32) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {pid}");
}

/// Waits until process `pid` runs the binary under test (a shell that execs it has done so)
/// and catches `signal` (its handler is installed: Linux's `/proc/PID/status`, `SigCgt`), so
/// a signal sent next reaches the handler.
pub fn wait_until_caught(pid: u32, signal: u32) {
    let start = Instant::now();
    let binary = bin().canonicalize().unwrap();
    while start.elapsed() < Duration::from_secs(30) {
        let exe = std::fs::read_link(format!("/proc/{pid}/exe"));
        if !exe.is_ok_and(|exe| exe == binary) {
            std::thread::yield_now();
            continue;
        }
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

/// Waits for `child` at most `limit`; kills it and fails when it runs on.
pub fn wait_at_most(child: &mut Child, limit: Duration, what: &str) -> (ExitStatus, Duration) {
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

/// Sends SIGINT to `command`'s process `after` it catches the signal (to reach a phase of
/// its work; under load the signal still comes after the handler) and checks that it ends
/// within `bound` of the signal, with exit code 130 and the message.
pub fn interrupt(command: &mut Command, after: Duration, bound: Duration) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until_caught(child.id(), signal_number("-INT"));
    std::thread::sleep(after);
    kill("-INT", child.id());
    let what = format!("{command:?}");
    let (status, took) = wait_at_most(&mut child, bound * 10, &what);
    assert_eq!(status.code(), Some(130), "{what}");
    assert!(took < bound, "{what}: SIGINT took {took:?}");
    assert!(stderr_of(child).contains("interrupted"), "{what}");
}

pub fn stderr_of(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs the binary with `args`, sends it `signal` (`-INT`, `-HUP`) `after` it catches it,
/// and gives how it ended, what it wrote on stdout and on stderr.
pub fn signalled(args: &[&str], after: Duration, signal: &str) -> (Option<i32>, Vec<u8>, String) {
    signalled_when(args, || std::thread::sleep(after), signal)
}

/// As [`signalled`], the signal sent once the process catches it and `ready` returns.
pub fn signalled_when(
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
    wait_until_caught(child.id(), signal_number(signal));
    ready();
    kill(signal, child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code(), out.stdout, err)
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

/// `merge FILES EXTRA`: (exit code, stdout, stderr).
pub fn merge_files(files: &[String], extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().cloned());
    args.extend(extra.iter().map(|s| s.to_string()));
    run_owned(&args)
}

/// Runs `request` until its progress report (finished, of) first satisfies `stop_when`, then
/// stops it there: a stop on an event, whatever the speed of the device. Asserts that it was
/// stopped (ended in `Error::Interrupted`). (Only the GPU's tests stop a run this way.)
#[cfg(feature = "gpu")]
pub fn run_stopped(request: &nqueens::RunRequest, stop_when: impl Fn(usize, usize) -> bool + Sync) {
    let stop = std::sync::atomic::AtomicBool::new(false);
    let progress = |done: usize, of: usize| {
        if stop_when(done, of) {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    };
    let hooks = nqueens::Hooks {
        cancel: Some(&stop),
        progress: Some(&progress),
        ..nqueens::Hooks::default()
    };
    let stopped = nqueens::run(request, &hooks);
    assert!(
        matches!(stopped, Err(nqueens::Error::Interrupted)),
        "{stopped:?}"
    );
}

/// Reads `child`'s stderr (piped) line by line until a line holds `needle`, and gives what
/// was read; fails where the stream ends first. The rest of the stream is left unread.
pub fn read_stderr_until(child: &mut Child, needle: &str) -> String {
    use std::io::BufRead;
    let mut stderr = std::io::BufReader::new(child.stderr.take().expect("a piped stderr"));
    let mut read = String::new();
    loop {
        let mut line = String::new();
        let got = stderr.read_line(&mut line).unwrap();
        read.push_str(&line);
        assert!(got > 0, "stderr ended before '{needle}': {read}");
        if line.contains(needle) {
            // the pipe stays open (held by a thread) so that the child's later lines go through
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            return read;
        }
    }
}
