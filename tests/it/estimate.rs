//! `nqueens estimate`: what a count would cost, from sampled subtasks; never a total.

use crate::util::{json, run, signalled_when};

/// The estimate's JSON for `args` (after `estimate`), checked to have ended well.
fn estimate(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["estimate"];
    all.extend_from_slice(args);
    all.push("--json");
    let (code, out, err) = run(&all);
    assert_eq!(code, 0, "{all:?}: {err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    json(&out)
}

fn number(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

#[test]
fn a_small_board_is_sampled_whole_and_its_interval_is_what_it_took() {
    let e = estimate(&["12", "--seconds", "30", "-t", "2"]);
    // every subtask fits in the time: the sample is the whole plan
    assert_eq!(e["units_sampled"], e["subtasks"]);
    let hours = number(&e, "core_hours");
    assert!(hours > 0.0);
    assert_eq!(number(&e, "core_hours_low"), hours);
    assert_eq!(number(&e, "core_hours_high"), hours);
    assert!((number(&e, "sample_core_seconds") / 3600.0 - hours).abs() < 1e-9);
    assert_eq!(e["engine"], "d4");
    assert!(number(&e, "peak_bytes") > 0.0 && number(&e, "sizing_core_seconds") >= 0.0);
    for never in ["total", "unique"] {
        assert!(e.get(never).is_none(), "an estimate gave {never}: {e}");
    }
}

#[test]
fn a_short_estimate_times_the_least_sample_and_carries_it_over_the_plan() {
    let e = estimate(&["17", "--seconds", "0", "-t", "1"]);
    assert_eq!(e["engine"], "quadrant");
    assert_eq!(e["units_sampled"], 2);
    // what is carried over is the units that count: every id but those counted under others
    let (subtasks, counting) = (number(&e, "subtasks"), number(&e, "counting"));
    assert!(counting > 0.9 * subtasks && counting < subtasks, "{e}");
    let sampled = number(&e, "sample_core_seconds");
    let [low, mid, high] =
        ["core_hours_low", "core_hours", "core_hours_high"].map(|f| number(&e, f));
    assert!((mid * 3600.0 - sampled / 2.0 * counting).abs() <= 1e-6 * mid * 3600.0);
    assert!(low * 3600.0 >= sampled - 1e-9 && low <= mid && mid <= high);
}

#[test]
fn an_estimate_takes_what_count_takes() {
    // a shard: its own subtasks, drawn from it
    let e = estimate(&["16", "--shard", "1/3", "--seconds", "0"]);
    assert_eq!(e["shard"], "1/3");
    let (_, plan, _) = run(&["count", "16", "--shard", "1/3", "--dry-run"]);
    assert!(
        plan.contains(&format!(" subtasks={}\n", e["subtasks"])),
        "{plan}"
    );
    // an even board: about half its units count nothing, and are not drawn
    let even = estimate(&["16", "--seconds", "0"]);
    let share = number(&even, "counting") / number(&even, "subtasks");
    assert!((0.4..0.6).contains(&share), "{even}");
    let d4 = estimate(&["16", "--engine", "d4", "--unique", "--seconds", "0"]);
    assert_eq!(d4["engine"], "d4");
    let mirror = estimate(&[
        "11",
        "--engine",
        "mirror",
        "--kernel",
        "scalar",
        "--seconds",
        "0",
    ]);
    assert_eq!(
        (&mirror["engine"], &mirror["kernel"]),
        (&"mirror".into(), &"scalar".into())
    );
}

#[test]
fn the_text_names_the_cost_and_the_sample() {
    let (code, out, err) = run(&["estimate", "13", "--seconds", "0", "--seed", "9"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("N = 13: "), "{out}");
    for said in [
        "90 % interval",
        "(seed 9)",
        "sizing:",
        "peak memory:",
        "on 1,000 cores:",
    ] {
        assert!(out.contains(said), "{said} missing from {out}");
    }
}

#[test]
fn bad_estimate_arguments_are_usage_errors() {
    for (args, named) in [
        (&["estimate", "33"][..], "33"),
        (&["estimate", "12", "--seconds", "-1"], "-1"),
        (&["estimate", "12", "--seconds", "x"], "'x'"),
        (&["estimate", "12", "--seed", "-3"], "-3"),
        (&["estimate", "12", "--shard", "3/3"], "3/3"),
        (&["estimate", "29", "--engine", "quadrant"], "29"),
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(named), "{args:?}: {err}");
    }
}

#[test]
fn a_stop_ends_an_estimate_at_once_with_the_signal_code() {
    let (code, out, err) = signalled_when(&["estimate", "21", "--seconds", "600"], || {}, "-INT");
    assert_eq!(code, Some(130), "{err}");
    assert!(out.is_empty());
    assert!(err.contains("interrupted"), "{err}");
}
