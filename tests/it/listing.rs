//! `list` and the solution iterator: golden output, order, validity, streaming.

use crate::naive;
use crate::oeis::known;
use crate::util::{bin, run};
use nqueens::Format;
use nqueens::Solution;
use nqueens::{ListOptions, Lister};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/golden/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

#[test]
fn the_contract_example_byte_for_byte() {
    let (code, out, err) = run(&["list", "6", "--limit", "3", "--total"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert_eq!(out, "2 4 6 1 3 5\n3 6 2 5 1 4\n4 1 5 2 6 3\n4\n");
}

#[test]
fn golden_files_for_every_format() {
    for n in ["4", "5", "6"] {
        for format in ["seq", "board", "json"] {
            for threads in ["1", "2", "3"] {
                let (code, out, _) = run(&["list", n, "--format", format, "-t", threads]);
                assert_eq!(code, 0);
                assert_eq!(out, golden(&format!("list-{n}.{format}")), "n={n} {format}");
            }
        }
        let (_, out, _) = run(&["list", n, "--unique", "--total"]);
        assert_eq!(out, golden(&format!("list-{n}-unique-total.seq")));
    }
}

fn list(n: usize, opts: &ListOptions) -> String {
    let mut out = Vec::new();
    Lister::new(n, opts).unwrap().write_to(&mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn listed_solutions_are_valid_sorted_distinct_and_complete() {
    for n in 1..=10 {
        let text = list(
            n,
            &ListOptions {
                threads: Some(2),
                ..ListOptions::default()
            },
        );
        let sols: Vec<Solution> = text.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(sols.len() as u128, known(n).0, "n={n}");
        assert!(
            sols.windows(2).all(|w| w[0] < w[1]),
            "sorted and distinct, n={n}"
        );
        let expected: Vec<Vec<u8>> = naive::solutions(n)
            .into_iter()
            .map(|q| q.into_iter().map(|c| c as u8).collect())
            .collect();
        let got: Vec<Vec<u8>> = sols.iter().map(|s| s.columns().to_vec()).collect();
        assert_eq!(got, expected, "n={n}");
    }
}

/// Large boards, where the head subtask searches long for its first solution and gives its
/// untried branches to the other threads: any thread count lists what one thread lists,
/// valid and in order, for the first solutions of every subtask split that way.
#[test]
fn split_heads_keep_the_order_on_large_boards() {
    for n in [26, 28, 30, 32] {
        let first = |threads: usize| {
            list(
                n,
                &ListOptions {
                    threads: Some(threads),
                    limit: Some(5),
                    ..ListOptions::default()
                },
            )
        };
        let one = first(1);
        let sols: Vec<Solution> = one.lines().map(|l| l.parse().unwrap()).collect();
        assert_eq!(sols.len(), 5, "n={n}");
        assert!(sols.windows(2).all(|w| w[0] < w[1]), "n={n}");
        for s in &sols {
            let c = s.columns();
            let safe = (0..n)
                .all(|i| (i + 1..n).all(|j| c[i] != c[j] && c[i].abs_diff(c[j]) as usize != j - i));
            assert!(safe, "n={n}: {c:?}");
        }
        for threads in [2, 4] {
            assert_eq!(first(threads), one, "n={n} threads={threads}");
        }
    }
}

#[test]
fn unique_lists_exactly_the_canonical_forms() {
    for n in 1..=10 {
        let text = list(
            n,
            &ListOptions {
                unique: true,
                ..ListOptions::default()
            },
        );
        let got: Vec<Vec<usize>> = text
            .lines()
            .map(|l| {
                l.parse::<Solution>()
                    .unwrap()
                    .columns()
                    .iter()
                    .map(|&c| c as usize)
                    .collect()
            })
            .collect();
        let mut expected: Vec<Vec<usize>> = naive::solutions(n)
            .iter()
            .map(|q| naive::canonical(q))
            .collect();
        expected.sort();
        expected.dedup();
        assert_eq!(got, expected, "n={n}");
    }
    assert_eq!(run(&["list", "8", "--unique"]).1.lines().count(), 12);
    assert_eq!(run(&["list", "9", "--unique"]).1.lines().count(), 46);
}

#[test]
fn parallel_and_one_thread_output_are_byte_identical() {
    for format in [Format::Seq, Format::Board, Format::Json] {
        for n in [8, 11] {
            let one = list(
                n,
                &ListOptions {
                    threads: Some(1),
                    format,
                    ..ListOptions::default()
                },
            );
            for threads in [2, 3, 4] {
                let many = list(
                    n,
                    &ListOptions {
                        threads: Some(threads),
                        format,
                        ..ListOptions::default()
                    },
                );
                assert!(one == many, "n={n} threads={threads} {format:?}");
            }
        }
    }
}

#[test]
fn limits_cut_exactly_in_every_format() {
    for format in [Format::Seq, Format::Board, Format::Json] {
        let all = list(
            9,
            &ListOptions {
                format,
                ..ListOptions::default()
            },
        );
        let per = format.lines_per_solution(9);
        for k in [0u64, 1, 2, 17, 351, 352, 1000] {
            let some = list(
                9,
                &ListOptions {
                    limit: Some(k),
                    format,
                    threads: Some(2),
                    ..ListOptions::default()
                },
            );
            let lines = (k.min(352) as usize) * per;
            let expected: String = all.split_inclusive('\n').take(lines).collect();
            assert_eq!(some, expected, "k={k} {format:?}");
        }
    }
}

#[test]
fn total_counts_everything_even_past_the_limit() {
    assert_eq!(
        run(&["list", "8", "--limit", "2", "--total"])
            .1
            .lines()
            .last(),
        Some("92")
    );
    assert_eq!(
        run(&["list", "8", "--limit", "200", "--total"])
            .1
            .lines()
            .count(),
        93
    );
    assert_eq!(
        run(&["list", "8", "--unique", "--limit", "1", "--total"]).1,
        "1 5 8 6 3 7 2 4\n12\n"
    );
    assert_eq!(run(&["list", "3", "--total"]).1, "0\n");
}

#[test]
fn the_iterator_matches_the_listing() {
    let text = list(7, &ListOptions::default());
    let iter: String = nqueens::solutions(7)
        .unwrap()
        .map(|s| format!("{s}\n"))
        .collect();
    assert_eq!(text, iter);
    assert!(nqueens::solutions(0).is_err());
    assert!(nqueens::solutions(33).is_err());
}

#[test]
fn solution_parses_validates_and_canonicalises() {
    let s: Solution = "5 3 1 6 4 2".parse().unwrap();
    assert_eq!(s.n(), 6);
    assert_eq!(s.canonical().to_string(), "2 4 6 1 3 5");
    assert!(!s.is_canonical());
    for bad in ["", "1", "1 2", "2 4 1 3 3", "0 2 4 1", "2 4 x 3", "2 4 1 5"] {
        assert!(bad.parse::<Solution>().is_err() || bad == "1", "{bad}");
    }
    assert!("1".parse::<Solution>().is_ok());
    assert!(Solution::new(vec![1, 3, 0, 2]).is_ok());
    assert!(Solution::new(vec![0, 1]).is_err());
}

#[test]
fn head_closing_the_pipe_is_a_quiet_success() {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("nqueens"))
        .args(["list", "14"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout); // what `head -1` does after its line
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(first.starts_with(b"1 3 5 7 12 10 13"));
}

#[test]
fn list_usage_errors_exit_2() {
    for args in [
        &["list", "8", "--format", "xml"][..],
        &["list", "8", "--limit", "-1"],
        &["list", "8", "--limit", "x"],
        &["list", "0"],
        &["list", "33"],
        &["list", "8", "-t", "0"],
    ] {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `list 32 | head -1`: the first line comes as soon as it is found, and the process is gone
/// soon after its reader closes the pipe (8 s and 8 s more before: its output sat in a 64 KiB
/// buffer). The bounds leave room for a loaded machine; 0.6 s and 0.1 s on two cores.
#[cfg(unix)]
#[test]
fn a_listing_reader_that_stops_early_is_not_kept_waiting() {
    use std::io::BufRead;
    let mut child = Command::new(bin())
        .args(["list", "32", "-t", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    let first_after = start.elapsed();
    assert_eq!(first.split_whitespace().count(), 32, "{first}");
    assert!(
        first_after < Duration::from_secs(4),
        "first line after {first_after:?}"
    );
    drop(reader);
    let closed = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if closed.elapsed() > Duration::from_secs(3) {
            child.kill().unwrap();
            panic!("still running 3 s after its reader closed the pipe");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
