//! `scale`, its exporters and plot, the progress bar and shell completions.

use crate::cli::{nqueens, run};
use nqueens::export::scale::{to_csv, to_json, to_markdown, to_table};
use nqueens::scale::{rows, Machine, ScaleReport};

fn fixed_rows() -> Vec<nqueens::scale::ScaleRow> {
    rows(&[
        (1, vec![4.0, 4.2, 3.8]),
        (2, vec![2.1, 2.0, 2.5]),
        (4, vec![1.25, 1.0]),
    ])
}

#[test]
fn rows_summarise_medians_speedup_and_efficiency() {
    let r = fixed_rows();
    assert_eq!((r[0].median_s, r[0].min_s, r[0].max_s), (4.0, 3.8, 4.2));
    assert_eq!(
        (r[1].median_s, r[1].speedup, r[1].efficiency),
        (2.1, 4.0 / 2.1, 4.0 / 2.1 / 2.0)
    );
    assert_eq!((r[2].median_s, r[2].runs), (1.125, 2));
}

#[test]
fn exporters_give_exact_text() {
    let r = fixed_rows();
    assert_eq!(
        to_csv(&r),
        "threads,runs,median_s,min_s,max_s,speedup,efficiency\n\
         1,3,4.000000,3.800000,4.200000,1.000,1.000\n\
         2,3,2.100000,2.000000,2.500000,1.905,0.952\n\
         4,2,1.125000,1.000000,1.250000,3.556,0.889\n"
    );
    assert_eq!(
        to_markdown(&r),
        "| threads | runs | median s | min s | max s | speedup | efficiency |\n\
         |--:|--:|--:|--:|--:|--:|--:|\n\
         | 1 | 3 | 4.000 | 3.800 | 4.200 | 1.00 | 1.00 |\n\
         | 2 | 3 | 2.100 | 2.000 | 2.500 | 1.90 | 0.95 |\n\
         | 4 | 2 | 1.125 | 1.000 | 1.250 | 3.56 | 0.89 |\n"
    );
    assert_eq!(
        to_table(&r),
        "threads runs   median_s      min_s      max_s  speedup efficiency\n      \
         1    3      4.000      3.800      4.200     1.00       1.00\n      \
         2    3      2.100      2.000      2.500     1.90       0.95\n      \
         4    2      1.125      1.000      1.250     3.56       0.89\n"
    );
    let report = ScaleReport {
        n: 12,
        total: "14200".into(),
        engine: nqueens::Engine::D4,
        kernel: nqueens::Kernel::Scalar,
        device: "cpu".into(),
        subtasks: 5078,
        pinned: false,
        version: "0.1.0".into(),
        machine: Machine {
            logical_cpus: 2,
            physical_cores: 1,
            cpu_model: Some("Test CPU".into()),
            kernel: None,
            os: "linux-x86_64".into(),
        },
        rows: r[..1].to_vec(),
        complete: true,
        refused: Vec::new(),
    };
    assert_eq!(
        to_json(&report),
        "{\"schema_version\":1,\"n\":12,\"total\":\"14200\",\"engine\":\"d4\",\"kernel\":\"scalar\",\"device\":\"cpu\",\
         \"subtasks\":5078,\"pinned\":false,\"version\":\"0.1.0\",\"machine\":{\"logical_cpus\":2,\
         \"physical_cores\":1,\"cpu_model\":\"Test CPU\",\"kernel\":null,\"os\":\"linux-x86_64\"},\
         \"rows\":[{\"threads\":1,\"runs\":3,\"median_s\":4.0,\"min_s\":3.8,\"max_s\":4.2,\
         \"speedup\":1.0,\"efficiency\":1.0}],\"complete\":true}\n"
    );
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

#[test]
fn scale_runs_thread_counts_in_alternating_rounds() {
    let mut order = Vec::new();
    let report = nqueens::scale::measure(
        8,
        &nqueens::CountOptions::default(),
        &[2],
        3,
        &std::sync::atomic::AtomicBool::new(false),
        |threads, run, _| order.push((threads, run)),
    )
    .unwrap();
    assert_eq!(order, [(1, 1), (2, 1), (1, 2), (2, 2), (1, 3), (2, 3)]);
    assert_eq!(
        report
            .rows
            .iter()
            .map(|r| (r.threads, r.runs))
            .collect::<Vec<_>>(),
        [(1, 3), (2, 3)]
    );
}
