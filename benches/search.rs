//! Criterion benchmarks of the search: one thread for N = 10..14 (scalar kernel), every
//! kernel this CPU runs at N = 14 on one thread, and all threads for N = 14.
//! Every iteration asserts its count (OEIS A000170).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion};
use nqueens::Kernel;
use nqueens::{count, CountOptions, EngineChoice, KernelChoice};
use std::time::Duration;

#[path = "../tests/it/oeis.rs"]
mod oeis;

fn options(engine: EngineChoice, threads: Option<usize>) -> CountOptions {
    CountOptions {
        threads,
        engine,
        kernel: KernelChoice::Scalar,
        ..CountOptions::default()
    }
}

fn sequential(c: &mut Criterion) {
    let mut group = c.benchmark_group("sequential");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for (name, engine) in [("mirror", EngineChoice::Mirror), ("d4", EngineChoice::D4)] {
        for n in 10..=14 {
            let opts = options(engine, Some(1));
            group.bench_with_input(BenchmarkId::new(name, n), &n, |b, &n| {
                b.iter(|| {
                    assert_eq!(
                        count(black_box(n), &opts).unwrap().total,
                        oeis::TOTAL[n - 1]
                    )
                })
            });
        }
    }
    group.finish();
}

fn kernels(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernels");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for kernel in Kernel::available() {
        let choice = match kernel {
            Kernel::Scalar => KernelChoice::Scalar,
            Kernel::Avx2 => KernelChoice::Avx2,
            Kernel::Avx512 => KernelChoice::Avx512,
        };
        let opts = CountOptions {
            kernel: choice,
            ..options(EngineChoice::D4, Some(1))
        };
        group.bench_function(BenchmarkId::new(kernel.name(), 14), |b| {
            b.iter(|| assert_eq!(count(black_box(14), &opts).unwrap().total, oeis::TOTAL[13]))
        });
    }
    group.finish();
}

fn parallel(c: &mut Criterion) {
    let mut group = c.benchmark_group("parallel");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    for (name, engine) in [("mirror", EngineChoice::Mirror), ("d4", EngineChoice::D4)] {
        let opts = options(engine, None);
        group.bench_function(BenchmarkId::new(name, 14), |b| {
            b.iter(|| assert_eq!(count(black_box(14), &opts).unwrap().total, oeis::TOTAL[13]))
        });
    }
    group.finish();
}

criterion_group!(benches, sequential, kernels, parallel);
criterion_main!(benches);
