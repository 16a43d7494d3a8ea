//! The command line through the real binary: output formats and streams, known counts,
//! flags from the line and the environment, usage errors, and the reference that documents them.

use crate::oeis::known;
use crate::util::{bin, json, nqueens, run};
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn count_prints_a000170_for_n_1_to_15() {
    for n in 1..=15 {
        let (code, out, err) = run(&["count", &n.to_string(), "--threads", "2"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out, format!("{}\n", known(n).0));
        assert!(err.is_empty());
    }
}

#[test]
fn count_unique_prints_total_and_unique() {
    for engine in ["mirror", "d4", "auto"] {
        let (code, out, _) = run(&["count", "8", "--unique", "--engine", engine]);
        assert_eq!((code, out.as_str()), (0, "92 12\n"));
    }
}

#[test]
fn count_json_has_the_contract_fields() {
    let (code, out, _) = run(&["count", "10", "--json", "--unique", "-t", "2"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["n"], 10);
    assert_eq!(v["total"], "724");
    assert_eq!(v["unique"], "92");
    assert_eq!(v["threads"], 2);
    assert_eq!(v["engine"], "d4");
    let best = nqueens::Kernel::resolve(nqueens::KernelChoice::Auto).unwrap();
    assert_eq!(v["kernel"], best.name());
    let (_, scalar, _) = run(&["count", "10", "--json", "--kernel", "scalar"]);
    assert!(scalar.contains("\"kernel\":\"scalar\""));
    assert_eq!(v["complete"], true);
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert!(v["elapsed_s"].is_number());
    assert!(v["subtasks"].as_u64().unwrap() > 0);
    assert!(v["nodes"].as_str().unwrap().parse::<u128>().unwrap() > 0);
    let (_, plain, _) = run(&["count", "10", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&plain).unwrap();
    assert!(v.get("unique").is_none());
}

#[test]
fn count_prefix_and_engines_agree() {
    assert_eq!(run(&["count", "8", "--prefix", "1"]).1, "4\n");
    assert_eq!(run(&["count", "8", "--prefix", "1 5"]).1, "1\n");
    assert_eq!(run(&["count", "8", "--prefix", ""]).1, "92\n");
    for engine in ["mirror", "d4"] {
        for depth in ["1", "2", "3"] {
            let (code, out, _) = run(&["count", "11", "--engine", engine, "--split-depth", depth]);
            assert_eq!((code, out.as_str()), (0, "2680\n"));
        }
    }
}

#[test]
fn kernels_tested() {
    // `cargo test kernels_tested -- --nocapture` (run by .ci/run) names the kernels this
    // machine runs, which every kernel-aware test iterates over
    let names: Vec<&str> = nqueens::Kernel::available()
        .iter()
        .map(|k| k.name())
        .collect();
    println!("kernels tested on this machine: {}", names.join(", "));
    assert_eq!(names[0], "scalar");
    let (code, _, err) = run(&["count", "8", "--kernel", "simd"]);
    if names.len() > 1 {
        assert_eq!(code, 0);
    } else {
        assert_eq!(
            code, 2,
            "--kernel simd without a vector kernel is a usage error: {err}"
        );
    }
}

#[test]
fn threads_come_from_the_environment() {
    let out = nqueens()
        .args(["count", "9", "--json"])
        .env("NQUEENS_THREADS", "3")
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["threads"], 3);
}

#[test]
fn stats_go_to_stderr() {
    let (code, out, err) = run(&["count", "10", "--stats"]);
    assert_eq!((code, out.as_str()), (0, "724\n"));
    for word in [
        "elapsed",
        "engine=d4",
        "kernel=",
        "threads",
        "subtasks",
        "nodes",
        "nodes/s",
    ] {
        assert!(err.contains(word), "{word} missing in {err}");
    }
}

#[test]
fn usage_errors_exit_2_with_one_line_and_no_stdout() {
    let cases: &[&[&str]] = &[
        &["count", "0"],
        &["count", "33"],
        &["count", "-1"],
        &["count", "eight"],
        &["count", "8", "--threads", "0"],
        &["count", "8", "--threads", "x"],
        &["count", "8", "--prefix", "1 2"],
        &["count", "8", "--prefix", "9"],
        &["count", "8", "--prefix", "0"],
        &["count", "8", "--prefix", "1 1"],
        &["count", "8", "--prefix", "a"],
        &["count", "4", "--prefix", "2 4 1 3 1"],
        &["count", "8", "--split-depth", "0"],
        &["count", "8", "--split-depth", "99"],
        &["count", "8", "--engine", "fast"],
        &["count", "8", "--kernel", "gpu"],
        &["count", "8", "--prefix", "1", "--engine", "d4"],
        &["count", "8", "--no-such-flag"],
        &["count"],
        &["frobnicate"],
    ];
    for args in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} printed {out}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn zero_threads_from_the_environment_is_a_usage_error() {
    let out = nqueens()
        .args(["count", "8"])
        .env("NQUEENS_THREADS", "0")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

/// The library speaks of options, the command line of its flags: each refusal through the
/// binary names the flag, and the same refusal from the library names none.
#[test]
fn refusals_name_flags_on_the_command_line_and_not_in_the_library() {
    use nqueens::{count, count_completions, CountOptions, EngineChoice};
    let library = [
        count(
            3,
            &CountOptions {
                engine: EngineChoice::D4,
                ..Default::default()
            },
        ),
        count(
            12,
            &CountOptions {
                engine: EngineChoice::Quadrant,
                unique: true,
                ..Default::default()
            },
        ),
        count(
            8,
            &CountOptions {
                threads: Some(0),
                ..Default::default()
            },
        ),
        count(
            8,
            &CountOptions {
                split_depth: Some(9),
                ..Default::default()
            },
        ),
        count_completions(
            8,
            &[0],
            &CountOptions {
                engine: EngineChoice::Mirror,
                ..Default::default()
            },
        ),
    ];
    for result in library {
        let message = result.unwrap_err().to_string();
        assert!(!message.contains("--"), "{message}");
    }
    for (args, flag) in [
        (&["count", "3", "--engine", "d4"][..], "--engine d4"),
        (
            &["count", "12", "--engine", "quadrant", "--unique"],
            "--engine quadrant",
        ),
        (&["count", "8", "--split-depth", "9"], "--split-depth"),
        (
            &["count", "8", "--prefix", "1", "--engine", "mirror"],
            "--engine mirror",
        ),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("nqueens: {flag}")),
            "{args:?}: {err}"
        );
    }
    let missing = ["avx2", "avx512"].into_iter().find(|name| {
        !nqueens::Kernel::available()
            .iter()
            .any(|k| k.name() == *name)
    });
    if let Some(kernel) = missing {
        let (code, _, err) = run(&["count", "8", "--kernel", kernel]);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.starts_with(&format!("nqueens: --kernel {kernel}: ")),
            "{err}"
        );
    }
}

/// Numbers on the command line: spaces around, a leading `+` and leading zeros are read as
/// decimal (docs/cli.md); anything else is a usage error.
#[test]
fn numbers_on_the_command_line_follow_the_documented_rule() {
    for n in [" 5", "5 ", "+5", "005"] {
        assert_eq!(
            run(&["count", n]),
            (0, "10\n".into(), String::new()),
            "{n:?}"
        );
    }
    assert_eq!(run(&["count", "8", "-t", "+02"]).1, "92\n");
    for n in ["0x5", "5.0", "-5", "", "5e0"] {
        let (code, out, err) = run(&["count", n]);
        assert_eq!((code, out.as_str()), (2, ""), "{n:?}: {err}");
    }
}

/// `nqueens man` prints the program's page and `nqueens man COMMAND` that command's, with
/// every flag its `--help` lists; another name is a usage error.
#[test]
fn man_pages_come_from_the_command_definitions() {
    let (code, page, err) = run(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(page.contains(".TH nqueens 1"), "{page}");
    for command in ["count", "list", "merge", "scale", "estimate"] {
        assert!(
            page.contains(&format!("nqueens\\-{command}(1)")),
            "{command}"
        );
        let (code, page, err) = run(&["man", command]);
        assert_eq!(code, 0, "{err}");
        assert!(page.contains(&format!(".TH nqueens-{command} 1")), "{page}");
        let help = run(&[command, "--help"]).1;
        for flag in help.split_whitespace().filter(|w| w.starts_with("--")) {
            let flag = flag.trim_end_matches(|c: char| !c.is_alphanumeric());
            // roff escapes the dashes
            let roff = flag.replace('-', "\\-");
            assert!(page.contains(&roff), "man {command} lacks {flag}");
        }
    }
    let (code, out, err) = run(&["man", "bogus"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("'bogus'") && err.contains("count, list"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn absurd_threads_and_save_intervals_are_usage_errors() {
    for args in [
        &["count", "8", "-t", "18446744073709551615"][..],
        &["count", "8", "-t", "5000"],
        &["list", "8", "-t", "99999"],
        &["scale", "8", "-t", "1,100000"],
        &["count", "8", "--checkpoint-every", "1e20"],
        &["count", "8", "--checkpoint-every", "1e-9"],
        &["count", "8", "--checkpoint-every", "NaN"],
    ] {
        let started = Instant::now();
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[test]
fn usage_errors_name_the_bad_value_and_what_is_allowed() {
    for (args, wants) in [
        (
            &["count", "8", "--engine", "foo"][..],
            &["'foo'", "auto, mirror, d4"][..],
        ),
        (&["count", "8", "--kernel", "gpu"], &["'gpu'", "scalar"]),
        (
            &["list", "8", "--format", "xml"],
            &["'xml'", "seq, board, json"],
        ),
        (
            &["count", "8", "--progress", "maybe"],
            &["'maybe'", "never"],
        ),
        (&["completions", "tcsh"], &["'tcsh'", "bash"]),
        (&["count"], &["<N>"]),
        (&["count", "-1"], &["'-1'", "from 1 to 32"]),
        (&["count", "8", "-t", "-1"], &["'-1'", "from 1 to"]),
        (&["count", "16", "--split-depth", "10"], &["split depth 10"]),
        (
            &["count", "8", "--prefix", "1", "--engine", "mirror"],
            &["without symmetry"],
        ),
        (&["count", "3", "--engine", "d4"], &["at least 4"]),
        // too large is not malformed: the maximum is named
        (
            &["count", "8", "--memory-limit", "99999999999T"],
            &["'99999999999T'", "too large", "at most 16777215T"],
        ),
        (
            &["count", "8", "--memory-limit", "99999999999999999999"],
            &["too large", "at most 18446744073709551615"],
        ),
        (
            &["count", "8", "--memory-limit", "12Q"],
            &["'12Q'", "whole number of bytes"],
        ),
    ] {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        for want in wants {
            assert!(err.contains(want), "{args:?}: want {want} in {err}");
        }
    }
    let (_, out, _) = run(&["count", "3", "--json"]);
    assert_eq!(json(&out)["engine"], "mirror");
}

#[test]
fn a_full_stderr_never_crashes_the_program() {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for (args, code) in [
        (&["count", "0"][..], 2),
        (&["count", "8", "--stats"], 0),
        (&["scale", "8", "--repeat", "1", "-t", "1"], 0),
        (&["merge", "/nonexistent"], 1),
    ] {
        let out = Command::new(bin())
            .args(args)
            .stderr(full())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}");
    }
}

/// A standard output that cannot take the output (a full disk) is named as what failed,
/// one line, exit 1, for every command that prints.
#[test]
fn a_full_stdout_is_named_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let shards: Vec<String> = (0..2)
        .map(|i| {
            let path = dir.path().join(format!("s{i}.json"));
            let (code, out, err) = run(&["count", "10", "--json", "--shard", &format!("{i}/2")]);
            assert_eq!(code, 0, "{err}");
            std::fs::write(&path, out).unwrap();
            path.display().to_string()
        })
        .collect();
    let merge = ["merge", shards[0].as_str(), shards[1].as_str()];
    for args in [
        &["count", "12"][..],
        &["count", "12", "--json"],
        &["count", "12", "--dry-run"],
        &["list", "6", "--limit", "2"],
        &merge,
        &["scale", "8", "--repeat", "1", "-t", "1"],
        &["devices"],
        &["completions", "bash"],
        &["--help"],
        &["--version"],
    ] {
        // (a build without the GPU lists no adapter: nothing to write)
        if args == ["devices"] && !cfg!(feature = "gpu") {
            continue;
        }
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(bin())
            .args(args)
            .stdout(full)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or_default();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            last.starts_with("nqueens: cannot write to standard output: "),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn the_command_line_reference_documents_every_flag() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md")).unwrap();
    for command in [
        "count",
        "list",
        "merge",
        "scale",
        "estimate",
        "completions",
        "man",
    ] {
        assert!(doc.contains(&format!("nqueens {command}")), "{command}");
        let help = run(&[command, "--help"]).1;
        for flag in help.split_whitespace().filter(|w| w.starts_with("--")) {
            let flag = flag.trim_end_matches(|c: char| !c.is_alphanumeric());
            if flag == "--help" || flag == "--version" {
                continue;
            }
            assert!(
                doc.contains(flag),
                "docs/cli.md does not document {command} {flag}"
            );
        }
    }
}

/// Item 9: Help and version that cannot be written are a failure, as for every other output.
#[cfg(unix)]
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

/// Every numeric flag answers a bad value with one line naming the flag, the value and the
/// range allowed (clap's own "unexpected argument '-1' found" and "invalid digit found in
/// string" named neither); the range stated is the real one.
#[cfg(unix)]
#[test]
fn numeric_flags_name_the_flag_the_value_and_the_range() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["count", "8", "--split-depth", "-1"],
            "--split-depth",
            "from 1",
        ),
        (&["merge", "x", "--verify", "-1"], "--verify", "from 1"),
        (&["merge", "x", "--verify", "abc"], "--verify", "from 1"),
        (
            &["count", "8", "--checkpoint-every", "-1"],
            "--checkpoint-every",
            "from 0.1",
        ),
        (&["scale", "8", "--repeat", "-1"], "--repeat", "from 1"),
        (&["scale", "8", "--repeat", "1e3"], "--repeat", "from 1"),
        (&["list", "8", "--limit", "-1"], "--limit", "from 0"),
        (
            &["list", "8", "--limit", "18446744073709551616"],
            "--limit",
            "from 0",
        ),
        (&["count", "8", "--gpus", "-1"], "--gpus", "from 0"),
        (&["count", "8", "--shard", "-1/2"], "--shard", "0 <= I < M"),
        (
            &["count", "8", "--split-depth", ""],
            "--split-depth",
            "from 1",
        ),
        (
            &["count", "8", "--memory-limit", "4 G"],
            "--memory-limit",
            "like 512M",
        ),
        // past a small board's rows, and past what keeps N = 32's subtasks few enough
        (
            &["count", "8", "--split-depth", "99"],
            "--split-depth",
            "from 1 to 8",
        ),
        (
            &["count", "32", "--split-depth", "12"],
            "--split-depth",
            "from 1 to 4",
        ),
        (
            &["count", "32", "--split-depth", "6"],
            "--split-depth",
            "from 1 to 4",
        ),
    ];
    for &(args, flag, range) in cases {
        let (code, out, err) = run(args);
        assert_eq!((code, out.as_str()), (2, ""), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        let value = args[args.len() - 1];
        assert!(err.contains(flag) && err.contains(value), "{args:?}: {err}");
        assert!(err.contains(range), "{args:?}: {err}");
    }
    let out = Command::new(bin())
        .args(["count", "8"])
        .env("NQUEENS_THREADS", "abc")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NQUEENS_THREADS") && err.contains("'abc'") && err.contains("from 1 to"),
        "{err}"
    );
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

/// By `count` and by `scale` (which takes `--device` too) alike; set to nothing, each is
/// unset.
#[test]
fn a_race_variable_with_a_bad_value_is_a_usage_error_naming_it() {
    for (name, value) in [
        ("NQUEENS_RACE_WINNER", "tpu"),
        ("NQUEENS_RACE_MIN_SECONDS", "soon"),
        ("NQUEENS_RACE_MIN_SECONDS", "inf"),
        ("NQUEENS_RACE_MIN_SECONDS", "1e3"),
        ("NQUEENS_RACE_SOFTWARE_GPU", "yes"),
    ] {
        for command in [
            &["count", "8"][..],
            &["scale", "8", "-t", "1", "--repeat", "1"],
        ] {
            let out = nqueens().args(command).env(name, value).output().unwrap();
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!((out.status.code(), out.stdout.len()), (Some(2), 0), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&format!("{name}={value}")) && err.contains("allowed"),
                "{command:?}: {err}"
            );
        }
    }
    let mut empty = nqueens();
    empty.args(["count", "8"]);
    for name in [
        "NQUEENS_RACE_WINNER",
        "NQUEENS_RACE_MIN_SECONDS",
        "NQUEENS_RACE_SOFTWARE_GPU",
    ] {
        empty.env(name, "");
    }
    let out = empty.output().unwrap();
    assert_eq!(
        (out.status.code(), &out.stdout[..]),
        (Some(0), &b"92\n"[..])
    );
}
