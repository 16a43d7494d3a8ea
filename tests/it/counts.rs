//! Counts through the library: known tables, engines, splits and threads.

use crate::naive;
use crate::oeis::known;
use nqueens::{count, count_completions, CountOptions, KernelChoice};
use nqueens::{EngineChoice, Plan};

/// Every kernel this machine runs, named on stderr so a run shows which were tested.
pub fn kernels(test: &str) -> Vec<KernelChoice> {
    let available = nqueens::Kernel::available();
    let names: Vec<&str> = available.iter().map(|k| k.name()).collect();
    eprintln!("{test}: kernels tested: {}", names.join(", "));
    available
        .into_iter()
        .map(|k| match k {
            nqueens::Kernel::Scalar => KernelChoice::Scalar,
            nqueens::Kernel::Avx2 => KernelChoice::Avx2,
            nqueens::Kernel::Avx512 => KernelChoice::Avx512,
        })
        .collect()
}

fn opts(engine: EngineChoice, threads: usize) -> CountOptions {
    CountOptions {
        threads: Some(threads),
        engine,
        kernel: KernelChoice::Scalar,
        unique: true,
        split_depth: None,
        pin: false,
        device: nqueens::DeviceChoice::Cpu,
        gpus: None,
        memory_limit: None,
        race: nqueens::RaceOptions::default(),
    }
}

#[test]
fn a000170_and_a002562_with_every_engine_and_kernel() {
    for kernel in kernels("tables") {
        for engine in [EngineChoice::Auto, EngineChoice::Mirror, EngineChoice::D4] {
            for n in engine_sizes(engine, 1..=15) {
                for unique in [false, true] {
                    let o = CountOptions {
                        kernel,
                        unique,
                        ..opts(engine, 2)
                    };
                    let c = count(n, &o).unwrap();
                    let (total, classes) = known(n);
                    assert_eq!(c.total, total, "total n={n} {engine:?} {kernel:?}");
                    assert_eq!(
                        c.unique,
                        unique.then_some(classes),
                        "unique n={n} {engine:?} {kernel:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn kernels_agree_on_every_subtask_and_its_nodes() {
    let available = nqueens::Kernel::available();
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        for n in [5, 9, 13] {
            let plan = Plan::new(n, engine, None, Some(2)).unwrap();
            for id in 0..plan.len() {
                let results: Vec<_> = available
                    .iter()
                    .map(|&k| plan.count_subtask(id, false, k).unwrap())
                    .collect();
                assert!(
                    results.windows(2).all(|w| w[0] == w[1]),
                    "n={n} id={id} {results:?}"
                );
            }
        }
    }
}

/// The board sides of `range` an engine asked for by name takes (d4 needs N ≥ 4).
fn engine_sizes(
    engine: EngineChoice,
    range: std::ops::RangeInclusive<usize>,
) -> impl Iterator<Item = usize> {
    range.filter(move |&n| engine != EngineChoice::D4 || n >= nqueens::D4_MIN_N)
}

#[test]
fn an_engine_asked_for_by_name_runs_or_is_refused() {
    for n in 1..4 {
        let err = count(n, &opts(EngineChoice::D4, 1)).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("needs N of at least 4"),
            "{err}"
        );
    }
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        let err = count_completions(8, &[0], &opts(engine, 1)).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("without symmetry"),
            "{err}"
        );
    }
    let c = count_completions(8, &[0], &opts(EngineChoice::Auto, 1)).unwrap();
    assert_eq!((c.total, c.engine.name()), (4, "plain"));
}

#[test]
fn a_huge_prefix_column_is_refused_not_overflowed() {
    let err = count_completions(8, &[usize::MAX], &opts(EngineChoice::Auto, 1)).unwrap_err();
    assert!(
        err.to_string().contains("column 18446744073709551616"),
        "{err}"
    );
}

#[test]
fn the_default_plan_depends_on_n_engine_and_prefix_only() {
    for n in [8, 16, 20] {
        let plans: Vec<_> = [1, 64, 256, 4096]
            .iter()
            .map(|&t| opts(EngineChoice::Auto, t).plan(n, None).unwrap())
            .collect();
        assert!(
            plans.windows(2).all(|w| w[0].digest() == w[1].digest()),
            "n={n}"
        );
    }
}

#[test]
fn auto_runs_full_symmetry_from_n4_and_mirror_below() {
    for n in 1..=10 {
        let c = count(n, &opts(EngineChoice::Auto, 1)).unwrap();
        let expected = if n >= 4 { "d4" } else { "mirror" };
        assert_eq!(c.engine.name(), expected, "n={n}");
    }
}

#[test]
fn unique_counts_match_brute_force_classes() {
    for n in 1..=10 {
        let classes = naive::unique_count(n) as u128;
        for engine in [EngineChoice::Mirror, EngineChoice::D4] {
            if !engine_sizes(engine, n..=n).any(|_| true) {
                continue;
            }
            assert_eq!(
                count(n, &opts(engine, 2)).unwrap().unique,
                Some(classes),
                "n={n}"
            );
        }
    }
}

#[test]
fn parallel_equals_sequential_for_every_split_and_thread_count() {
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        for n in [9, 12] {
            let reference = count(
                n,
                &CountOptions {
                    split_depth: Some(1),
                    ..opts(engine, 1)
                },
            )
            .unwrap();
            for depth in 1..=4 {
                for threads in 1..=4 {
                    let o = CountOptions {
                        split_depth: Some(depth),
                        ..opts(engine, threads)
                    };
                    let c = count(n, &o).unwrap();
                    assert_eq!((c.total, c.unique), (reference.total, reference.unique));
                    assert_eq!(c.split_depth, depth);
                    assert_eq!(c.threads, threads);
                }
            }
        }
    }
}

#[test]
fn subtask_ids_are_stable_and_ordered() {
    let a = Plan::new(12, EngineChoice::D4, None, Some(3)).unwrap();
    let b = Plan::new(12, EngineChoice::D4, None, Some(3)).unwrap();
    assert_eq!(a.len(), b.len());
    for id in 0..a.len() {
        assert_eq!(a.subtask(id), b.subtask(id));
    }
    // within a frame, prefixes come in lexicographic order
    for id in 1..a.len() {
        let (x, y) = (a.subtask(id - 1).unwrap(), a.subtask(id).unwrap());
        assert!((x.frame, &x.prefix[..3]) < (y.frame, &y.prefix[..3]));
    }
}

#[test]
fn subtask_ranges_sum_to_the_whole_however_cut() {
    use nqueens::count_subtasks;
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        let o = opts(engine, 2);
        let plan = o.plan(11, None).unwrap();
        let whole = count(11, &o).unwrap();
        for cuts in [1, 2, 3, 7, 50] {
            let chunk = plan.len().div_ceil(cuts);
            let ids: Vec<usize> = (0..plan.len()).collect();
            let (mut total, mut unique) = (0, 0);
            for part in ids.chunks(chunk) {
                let c = count_subtasks(&plan, part, &o).unwrap();
                total += c.total;
                unique += c.unique.unwrap();
            }
            assert_eq!(
                (total, Some(unique)),
                (whole.total, whole.unique),
                "cuts={cuts}"
            );
        }
    }
}

#[test]
fn prefix_completions_match_the_naive_solver() {
    for kernel in kernels("prefixes") {
        let o = CountOptions {
            kernel,
            ..opts(EngineChoice::Auto, 2)
        };
        for n in 4..=9 {
            for a in 0..n {
                for b in 0..n {
                    let expected = naive::solutions_from(n, &[a, b]).len() as u128;
                    match count_completions(n, &[a, b], &o) {
                        Ok(c) => assert_eq!(c.total, expected, "n={n} prefix={a},{b}"),
                        Err(_) => assert!(a.abs_diff(b) <= 1, "only attacking prefixes fail"),
                    }
                }
            }
        }
    }
}

#[test]
fn n32_completions_use_the_top_bits_of_the_masks() {
    for kernel in kernels("n32") {
        n32_completions_with(CountOptions {
            kernel,
            ..opts(EngineChoice::Auto, 2)
        });
    }
}

fn n32_completions_with(o: CountOptions) {
    for n in 4..=32 {
        assert!(naive::is_solution(&naive::explicit_solution(n)), "n={n}");
    }
    let solution = naive::explicit_solution(32);
    let mut flipped = solution.clone();
    flipped.reverse();
    for board in [&solution, &flipped] {
        for free_rows in [1, 6, 9, 11] {
            let prefix = &board[..32 - free_rows];
            let free_cols: Vec<usize> = board[32 - free_rows..].to_vec();
            let expected = naive::solutions_from(32, prefix);
            let c = count_completions(32, prefix, &o).unwrap();
            assert_eq!(
                c.total,
                expected.len() as u128,
                "free columns {free_cols:?}"
            );
            assert!(c.total >= 1);
        }
        // the free rows of one board reach column 32 or 31, of the other column 1 or 2
    }
    let tail = |b: &[usize]| b[32 - 11..].iter().copied().max().unwrap();
    assert!(tail(&solution).max(tail(&flipped)) >= 30);
    let low = |b: &[usize]| b[32 - 11..].iter().copied().min().unwrap();
    assert!(low(&solution).min(low(&flipped)) <= 1);
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let o = CountOptions::default();
    assert!(count(0, &o).is_err());
    assert!(count(33, &o).is_err());
    assert!(count(
        8,
        &CountOptions {
            threads: Some(0),
            ..o.clone()
        }
    )
    .is_err());
    assert!(count(
        8,
        &CountOptions {
            split_depth: Some(0),
            ..o.clone()
        }
    )
    .is_err());
    assert!(count(
        8,
        &CountOptions {
            split_depth: Some(9),
            ..o.clone()
        }
    )
    .is_err());
    assert!(count_completions(8, &[8], &o).is_err());
    assert!(count_completions(8, &[0, 0], &o).is_err());
    let d4 = CountOptions {
        engine: EngineChoice::D4,
        ..o
    };
    assert!(count_completions(8, &[0], &d4).is_err());
}
