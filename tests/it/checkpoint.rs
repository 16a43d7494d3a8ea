//! Checkpoints: what is saved and resumed, and every file that cannot be one (corrupt,
//! foreign, unwritable, locked, a link) refused or handled in one line.

use crate::oeis::known;
use crate::util::{
    bin, json, kill, merge_files, resume, run, start_long_count, wait_for_checkpoint, write,
};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

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

/// `nodes` is the whole run's, as an uninterrupted run reports it; `searched_nodes` and
/// `nodes_per_s` are this run's alone.
#[test]
fn a_resumed_run_reports_only_the_nodes_it_searched() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    let (_, fresh, _) = run(&["count", "12", "--json", "--checkpoint", &ck]);
    let fresh = json(&fresh);
    assert_eq!(fresh["searched_nodes"], fresh["nodes"]);
    assert_ne!(fresh["nodes"], "0");
    let (_, out, _) = run(&["count", "12", "--json", "--checkpoint", &ck]);
    let v = json(&out);
    assert_eq!(v["resumed_subtasks"], v["subtasks"]);
    assert_eq!(v["nodes_per_s"], 0.0);
    assert_eq!(
        (&v["nodes"], &v["searched_nodes"]),
        (&fresh["nodes"], &"0".into())
    );
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
/// never named. Where a new run would refuse the flag too (`--kernel avx512` on a CPU
/// without AVX-512), it is the user's usage error, exit 2.
#[test]
fn flags_the_quadrant_engine_does_not_take_name_its_checkpoint_as_another_run() {
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck").display().to_string();
    let (code, _, err) = run(&["count", "14", "--checkpoint", &ck]);
    assert_eq!(code, 0, "{err}");
    let avx512 = (nqueens::Kernel::available().iter()).any(|k| k.name() == "avx512");
    for flag in [&["--split-depth", "3"][..], &["--kernel", "avx512"]] {
        let mut args = vec!["count", "14", "--checkpoint", &ck];
        args.extend_from_slice(flag);
        let (code, out, err) = run(&args);
        if flag[1] == "avx512" && !avx512 {
            assert_eq!((code, out.as_str()), (2, ""), "{flag:?}: {err}");
            assert!(err.starts_with("nqueens: --kernel avx512: "), "{err}");
            continue;
        }
        assert_eq!((code, out.as_str()), (1, ""), "{flag:?}: {err}");
        assert!(
            err.contains(&ck) && err.contains("another run") && err.contains("quadrant"),
            "{flag:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
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

/// Item 8: No usage error ends in an empty list of allowed values.
#[cfg(unix)]
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

/// Item 10: Temporary files of a checkpoint left by a killed save (`FILE.tmpXXXXXX`) are removed
/// by the next run that holds the lock, and only those.
#[cfg(unix)]
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
#[cfg(unix)]
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

/// A lock file that is a FIFO, a directory or a device is refused at once (a FIFO used to
/// block the open forever, deaf to SIGINT), naming the lock file and what stands there.
#[cfg(unix)]
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
#[cfg(unix)]
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

/// A checkpoint of another run is refused with exit 1, naming the file, what wrote it and
/// what this run asks for (a mirror checkpoint resumed with `--engine quadrant` was told, exit
/// 2, that no split depth was allowed; a quadrant one resumed with `--device gpu` was told to
/// use `--engine quadrant`, which was then refused again).
#[cfg(unix)]
#[test]
fn a_checkpoint_of_another_run_names_both_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).display().to_string();
    let (mirror, quadrant) = (path("m.ckpt"), path("q.ckpt"));
    for (ckpt, engine) in [(&mirror, "mirror"), (&quadrant, "quadrant")] {
        let (code, out, err) = run(&["count", "13", "--engine", engine, "--checkpoint", ckpt]);
        assert_eq!((code, out.trim()), (0, "73712"), "{err}");
    }
    let cases: [(&[&str], &str, &str); 2] = [
        (
            &["--engine", "quadrant"],
            &mirror,
            "engine mirror (split depth",
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

/// Every name the file system takes is a checkpoint name: at 246 to 255 bytes the saves'
/// temporary files (the name and a suffix) did not fit, and the count failed.
#[test]
fn a_checkpoint_name_as_long_as_the_file_system_takes_saves_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    for len in [246, 250, 255] {
        let name = "c".repeat(len);
        let path = dir.path().join(&name).display().to_string();
        let (code, out, err) = run(&["count", "10", "--checkpoint", &path]);
        assert_eq!((code, out.as_str()), (0, "724\n"), "{len}: {err}");
        let (code, out, err) = run(&["count", "10", "--json", "--checkpoint", &path]);
        assert_eq!(code, 0, "{len}: {err}");
        assert_eq!(
            json(&out)["resumed_subtasks"],
            json(&out)["subtasks"],
            "{len}"
        );
    }
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}
