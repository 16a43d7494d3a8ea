//! Criterion benchmarks of the quadrant engine on one thread: N = 13..16 on its fastest pair
//! loops, and N = 15 on every pair loop (`--kernel scalar` and the default). The tables are
//! built in each iteration, as in a run. Every iteration asserts its count (OEIS A000170).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nqueens::{count, CountOptions, EngineChoice, KernelChoice};
use std::time::Duration;

const A000170: [u128; 16] = [
    1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512,
];

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
            b.iter(|| assert_eq!(count(black_box(n), &opts).unwrap().total, A000170[n - 1]))
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
            b.iter(|| assert_eq!(count(black_box(15), &opts).unwrap().total, A000170[14]))
        });
    }
    group.finish();
}

criterion_group!(benches, sizes, pair_loops);
criterion_main!(benches);
