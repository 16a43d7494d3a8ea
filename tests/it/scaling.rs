//! `scale`, its exporters and plot, the progress bar and shell completions.

use crate::cli::{nqueens, run};

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

#[test]
fn progress_goes_to_stderr_only_when_asked() {
    let (code, out, err) = run(&[
        "count",
        "15",
        "-t",
        "1",
        "--kernel",
        "scalar",
        "--progress",
        "always",
    ]);
    assert_eq!((code, out.as_str()), (0, "2279184\n"));
    assert!(err.contains("subtasks"), "no progress in {err:?}");
    for mode in ["never", "auto"] {
        // auto: stderr is a pipe here, not a terminal
        let (code, out, err) = run(&["count", "15", "-t", "1", "--progress", mode]);
        assert_eq!((code, out.as_str(), err.as_str()), (0, "2279184\n", ""));
    }
}

#[test]
fn completions_for_common_shells() {
    for shell in ["bash", "zsh", "fish"] {
        let out = nqueens().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("nqueens") && text.contains("count") && text.contains("threads"),
            "{shell}"
        );
    }
    assert_eq!(run(&["completions", "tcsh"]).0, 2);
}
