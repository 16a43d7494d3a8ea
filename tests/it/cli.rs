//! The real binary: output formats, known counts and usage errors.

use crate::oeis::known;
use assert_cmd::Command;

pub fn nqueens() -> Command {
    Command::cargo_bin("nqueens").unwrap()
}

/// Runs the binary and returns (exit code, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = nqueens().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

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
    for command in ["count", "list", "merge", "scale"] {
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
