//! `scale`: the measurement, its formats and plot, and a stopped measurement.

use crate::util::{bin, run, signalled};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

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

/// Item 1: A plot replaces its file whole (a temporary file and a rename: another link to the old
/// file keeps the old plot), and a device is written straight to, never renamed over.
#[cfg(unix)]
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
#[cfg(unix)]
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

/// `scale` stopped by SIGINT prints the rows measured so far (JSON says `complete: false`),
/// then exits 130 (it printed no table).
#[cfg(unix)]
#[test]
fn a_stopped_scale_prints_what_it_measured() {
    let args = [
        "scale",
        "14",
        "--threads",
        "1,2",
        "--repeat",
        "100000",
        "--format",
        "json",
    ];
    let (code, out, err) = signalled(&args, Duration::from_millis(1500), "-INT");
    assert_eq!(code, Some(130), "{err}");
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(report["complete"], false);
    assert_eq!(report["total"], "365596");
    let runs = report["rows"][0]["runs"].as_u64().unwrap();
    assert!((1..100_000).contains(&runs), "{report}");
    assert_eq!(err.matches("interrupted").count(), 1, "{err}");
}

#[test]
fn scale_end_to_end_with_csv_json_and_plot() {
    let dir = tempfile::tempdir().unwrap();
    let plot = dir.path().join("speedup.svg");
    let plot_arg = plot.display().to_string();
    let (code, out, err) = run(&[
        "scale",
        "11",
        "--threads",
        "1,2,3",
        "--repeat",
        "2",
        "--format",
        "csv",
        "--plot",
        &plot_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "threads,runs,median_s,min_s,max_s,speedup,efficiency"
    );
    assert_eq!(lines.len(), 4);
    for (line, threads) in lines[1..].iter().zip(["1", "2", "3"]) {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!((fields[0], fields[1]), (threads, "2"));
    }
    assert!(err.contains("threads=3 run=2"));
    let svg = std::fs::read_to_string(&plot).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    for expected in [
        "ideal",
        "measured",
        "threads",
        "speedup",
        "<polyline",
        "<circle",
    ] {
        assert!(svg.contains(expected), "{expected} missing from the plot");
    }
    assert_eq!(
        svg.matches("<circle").count(),
        3,
        "one point per thread count"
    );

    let (code, out, _) = run(&[
        "scale",
        "10",
        "--threads",
        "1,2",
        "--repeat",
        "1",
        "--format",
        "json",
        "--pin",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["total"], "724");
    assert_eq!(v["pinned"], true);
    assert!(v["machine"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert_eq!(v["rows"].as_array().unwrap().len(), 2);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
}

#[test]
fn scale_usage_errors() {
    for args in [
        &["scale", "10", "--threads", "0"][..],
        &["scale", "10", "--threads", "1,x"],
        &["scale", "10", "--repeat", "0"],
        &["scale", "10", "--format", "xml"],
        &["scale", "40"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
    }
}

/// A thread count the board has too few subtasks for gives no row, and says why.
#[test]
fn scale_says_why_a_thread_count_gave_no_row() {
    let (code, out, err) = run(&[
        "scale", "4", "-t", "1,7", "--repeat", "1", "--format", "csv",
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        err.contains("no row for 7 threads: the count ran on 2: the count has 2 subtasks, and a run starts no more workers than subtasks"),
        "{err}"
    );
}
