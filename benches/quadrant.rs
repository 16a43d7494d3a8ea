//! Criterion benchmarks of the quadrant engine on one thread: N = 13..16 on its fastest pair
//! loops and N = 15 on every pair loop (`--kernel scalar` and the default), the tables built
//! in each iteration as in a run; and the sieve where it is most of the time: units of N = 18
//! (two thirds of their time is the pair count), on tables the plan keeps from one iteration
//! to the next. Every iteration asserts its count (OEIS A000170; the units of N = 18: their
//! count on the portable loops, taken once).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nqueens::{count, count_subtasks, CountOptions, EngineChoice, KernelChoice, Plan};
use std::time::Duration;

#[path = "../tests/it/oeis.rs"]
mod oeis;

fn options(kernel: KernelChoice) -> CountOptions {
    CountOptions {
        threads: Some(1),
        engine: EngineChoice::Quadrant,
        kernel,
        ..CountOptions::default()
    }
}

fn sizes(c: &mut Criterion) {
    let mut group = c.benchmark_group("quadrant");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    let opts = options(KernelChoice::Auto);
    for n in 13..=16 {
        group.bench_with_input(BenchmarkId::new("auto", n), &n, |b, &n| {
            b.iter(|| {
                assert_eq!(
                    count(black_box(n), &opts).unwrap().total,
                    oeis::TOTAL[n - 1]
                )
            })
        });
    }
    group.finish();
}

fn pair_loops(c: &mut Criterion) {
    let mut group = c.benchmark_group("quadrant-pair-loops");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    for (name, kernel) in [
        ("scalar", KernelChoice::Scalar),
        ("auto", KernelChoice::Auto),
    ] {
        let opts = options(kernel);
        group.bench_function(BenchmarkId::new(name, 15), |b| {
            b.iter(|| assert_eq!(count(black_box(15), &opts).unwrap().total, oeis::TOTAL[14]))
        });
    }
    group.finish();
}

/// Units of N = 18, a sample across the plan (every 1024th: 12 units), on the fastest pair
/// loops: their half lists joined, sorted and sliced, and their pairs counted.
fn sieve(c: &mut Criterion) {
    let mut group = c.benchmark_group("quadrant-sieve");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(6));
    let plan = Plan::new(18, EngineChoice::Quadrant, None, None).unwrap();
    let ids: Vec<usize> = (0..plan.len()).step_by(1024).collect();
    let portable = count_subtasks(&plan, &ids, &options(KernelChoice::Scalar)).unwrap();
    let opts = options(KernelChoice::Auto);
    group.bench_function(BenchmarkId::new("units-of-18", ids.len()), |b| {
        b.iter(|| {
            let counted = count_subtasks(black_box(&plan), &ids, &opts).unwrap();
            assert_eq!(counted.total, portable.total);
        })
    });
    group.finish();
}

criterion_group!(benches, sizes, pair_loops, sieve);
criterion_main!(benches);
