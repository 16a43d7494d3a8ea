//! The GPU backend against the CPU: counts, per-subtask results, prefixes, shards and
//! checkpoints across devices. In CI they run on Mesa's lavapipe (a Vulkan driver on the
//! CPU); `.ci/run` sets NQUEENS_REQUIRE_GPU so that a missing adapter fails instead of
//! skipping.

use crate::naive;
use crate::oeis::known;
use crate::util::{bin, merge_files, run, run_stopped, shard_record, write};
use nqueens::{count, count_completions, CountOptions, DeviceChoice};
use nqueens::{run as run_count, EngineChoice, Hooks, Part, RunRequest};
use proptest::prelude::*;
use std::process::Command;

/// The adapter the tests run on, or `None` (then they are skipped, unless CI asks for one).
pub fn adapter(test: &str) -> Option<String> {
    let found = nqueens::probe_gpu();
    if found.is_none() {
        assert!(
            std::env::var_os("NQUEENS_REQUIRE_GPU").is_none(),
            "NQUEENS_REQUIRE_GPU is set but no GPU adapter is usable"
        );
        eprintln!("{test}: no GPU adapter: skipped");
    }
    found
}

fn on(device: DeviceChoice, engine: EngineChoice, unique: bool) -> CountOptions {
    CountOptions {
        threads: Some(2),
        engine,
        unique,
        device,
        ..CountOptions::default()
    }
}

#[test]
fn gpu_adapter() {
    if let Some(name) = adapter("gpu_adapter") {
        println!("GPU tests ran on: {name}");
    }
}

/// A GPU whose driver miscounts is refused before it counts, in one line naming it and its
/// driver, exit 1, never a total: Debian 12's own lavapipe (Mesa 22.3, which `.ci/run`
/// unpacks beside the good one and names in NQUEENS_BAD_VULKAN_ICD) gave `count 15 --device
/// gpu` wrong totals on every run. Each command opens the device afresh, and each is refused.
#[test]
fn a_gpu_that_miscounts_a_known_answer_is_refused() {
    let Some(icd) = std::env::var_os("NQUEENS_BAD_VULKAN_ICD") else {
        assert!(
            std::env::var_os("NQUEENS_REQUIRE_GPU").is_none(),
            "NQUEENS_REQUIRE_GPU is set but NQUEENS_BAD_VULKAN_ICD names no miscounting driver"
        );
        eprintln!("a_gpu_that_miscounts: no miscounting driver: skipped");
        return;
    };
    let commands: [&[&str]; 3] = [
        &["count", "15", "--device", "gpu", "-t", "2"],
        &["count", "16", "--device", "gpu-only", "--json"],
        &[
            "count", "12", "--device", "gpu", "--unique", "--engine", "mirror",
        ],
    ];
    for args in commands {
        for _ in 0..3 {
            let out = Command::new(bin())
                .args(args)
                .env("VK_ICD_FILENAMES", &icd)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(out.stdout.is_empty(), "{args:?}: a total was printed");
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
            assert!(
                err.contains("miscounted a known answer") && err.contains("Mesa 22.3"),
                "{args:?}: {err}"
            );
        }
    }
    // `--device auto`, let to race on a software adapter, goes on without it and says why
    let out = Command::new(bin())
        .args(["count", "15", "-t", "2"])
        .env("VK_ICD_FILENAMES", &icd)
        .env("NQUEENS_RACE_SOFTWARE_GPU", "1")
        .env("NQUEENS_RACE_MIN_SECONDS", "0")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2279184\n");
    assert!(
        err.contains("nqueens: note: device auto: the GPU ")
            && err.contains("miscounted a known answer")
            && err.ends_with(": counted on the CPU\n"),
        "{err}"
    );
}

#[test]
fn gpu_equals_cpu_for_n_1_to_14_with_both_engines() {
    if adapter("gpu_equals_cpu").is_none() {
        return;
    }
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        for n in 1..=14 {
            if engine == EngineChoice::D4 && n < 4 {
                continue;
            }
            for unique in [false, true] {
                // the GPU alone, and the GPU with the CPU threads sharing its subtasks
                for device in [DeviceChoice::GpuOnly, DeviceChoice::Gpu] {
                    let c = count(n, &on(device, engine, unique)).unwrap();
                    let (total, classes) = known(n);
                    assert_eq!(c.total, total, "n={n} {engine:?} {device:?}");
                    assert_eq!(c.unique, unique.then_some(classes), "n={n} {engine:?}");
                    assert_ne!(c.device, "cpu");
                    // the CPU keeps only mirror's --unique (and boards with < 2 rows left)
                    let gpu_takes = !unique || engine == EngineChoice::D4;
                    if device == DeviceChoice::GpuOnly && gpu_takes && n >= 8 {
                        assert!(
                            c.gpu_subtasks > 0 && c.gpu_items > 0 && c.gpu_dispatches > 0,
                            "n={n} {engine:?}: the GPU counted nothing"
                        );
                    }
                }
            }
        }
    }
}

/// What each subtask of the plan of (n, engine, depth) found, on `device`.
fn parts(
    n: usize,
    engine: EngineChoice,
    depth: usize,
    unique: bool,
    device: DeviceChoice,
) -> (Vec<Part>, nqueens::Counts) {
    let options = CountOptions {
        split_depth: Some(depth),
        ..on(device, engine, unique)
    };
    let outcome = run_count(&RunRequest::new(n, options, None), &Hooks::default()).unwrap();
    (outcome.parts, outcome.counts)
}

#[test]
fn every_gpu_subtask_equals_the_cpu_subtask_with_its_nodes() {
    if adapter("every_gpu_subtask").is_none() {
        return;
    }
    // depths that leave a subtask a single row, two rows, or many more rows than an item
    // (cut into many items), tie frames and subtasks with no item among them
    for engine in [EngineChoice::Mirror, EngineChoice::D4] {
        for (n, depth) in [(6, 1), (9, 2), (12, 3), (11, 9), (10, 10), (13, 1), (15, 2)] {
            for unique in [false, true] {
                let (gpu, g) = parts(n, engine, depth, unique, DeviceChoice::GpuOnly);
                let (cpu, _) = parts(n, engine, depth, unique, DeviceChoice::Cpu);
                assert_eq!(gpu, cpu, "n={n} depth={depth} {engine:?} unique={unique}");
                // a subtask of fewer than two rows stays on the CPU: nothing for a kernel
                if !unique && n >= depth + 2 {
                    assert_eq!(g.gpu_subtasks, g.subtasks, "n={n} depth={depth} {engine:?}");
                }
            }
        }
    }
}

#[test]
fn a_subtask_cut_into_many_items_equals_its_cpu_count() {
    if adapter("cut_into_items").is_none() {
        return;
    }
    // 16x16 at depth 2: 14 rows left, items of 11: each subtask cut three rows deeper
    let (gpu, g) = parts(16, EngineChoice::D4, 2, true, DeviceChoice::GpuOnly);
    let (cpu, _) = parts(16, EngineChoice::D4, 2, true, DeviceChoice::Cpu);
    assert_eq!(gpu, cpu);
    assert!(
        g.gpu_items > 100 * g.subtasks as u64,
        "{} items",
        g.gpu_items
    );
    let total: u128 = gpu.iter().map(|p| u128::from(p.total)).sum();
    assert_eq!(total, known(16).0);
}

#[test]
fn several_devices_are_fed_from_one_list() {
    if adapter("several_devices").is_none() {
        return;
    }
    // two devices on the first adapter (the only way to have two on a machine with one)
    let (code, out, err) = run(&[
        "count", "15", "--device", "gpu-only", "--gpus", "0,0", "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["total"], known(15).0.to_string());
    assert!(v["device"].as_str().unwrap().starts_with("2 x "), "{v}");
    assert_eq!(v["gpu_subtasks"], v["subtasks"]);
    // an adapter the machine does not have, or GPUs with --device cpu: usage errors
    let (code, out, err) = run(&["count", "8", "--gpus", "99"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("--gpus 99") && err.contains("nqueens devices"),
        "{err}"
    );
    let (code, _, err) = run(&["count", "8", "--gpus", "0", "--device", "cpu"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--device cpu") || err.contains("CPU only"),
        "{err}"
    );
    // the adapters, numbered
    let (code, out, _) = run(&["devices"]);
    assert_eq!(code, 0);
    assert!(out.lines().next().unwrap().starts_with("0 "), "{out}");
}

#[test]
fn n32_prefixes_agree_across_devices() {
    if adapter("n32_prefixes").is_none() {
        return;
    }
    let first = nqueens::solutions(32).unwrap().next().unwrap();
    let columns: Vec<usize> = first.columns().iter().map(|&c| c as usize).collect();
    for rows in [19, 21, 24] {
        let prefix = &columns[..rows];
        let gpu = count_completions(
            32,
            prefix,
            &on(DeviceChoice::Gpu, EngineChoice::Auto, false),
        )
        .unwrap();
        let cpu = count_completions(
            32,
            prefix,
            &on(DeviceChoice::Cpu, EngineChoice::Auto, false),
        )
        .unwrap();
        assert!(gpu.total >= 1, "the prefix of a solution has a completion");
        assert_eq!(
            (gpu.total, gpu.nodes),
            (cpu.total, cpu.nodes),
            "{rows} rows"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn random_prefixes_on_the_gpu_match_the_naive_solver(
        n in 4usize..=10,
        picks in proptest::collection::vec(0usize..10, 0..4),
        depth in 1usize..=3,
    ) {
        if adapter("random_prefixes").is_none() {
            return Ok(());
        }
        let prefix = crate::differential::valid_prefix(n, &picks);
        let expected = naive::solutions_from(n, &prefix).len() as u128;
        let opts = CountOptions {
            split_depth: Some((prefix.len() + depth).min(n)),
            ..on(DeviceChoice::Gpu, EngineChoice::Auto, false)
        };
        prop_assert_eq!(count_completions(n, &prefix, &opts).unwrap().total, expected);
    }
}

#[test]
fn shards_of_both_devices_merge_and_verify() {
    if adapter("shards").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["gpu", "cpu", "gpu"]
        .iter()
        .enumerate()
        .map(|(i, device)| {
            let record = shard_record(13, i, 3, &["--unique", "--device", device]);
            write(dir.path(), &format!("{i}.json"), &record)
        })
        .collect();
    let (code, out, err) = merge_files(&files, &["--verify", "1000000"]);
    assert_eq!((code, out.as_str()), (0, "73712 9233\n"), "{err}");
}

#[test]
fn a_checkpoint_moves_between_devices() {
    if adapter("checkpoint").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ck = dir.path().join("ck");
    // A GPU run stopped at its first finished subtask resumes on the CPU. With `--unique`
    // the CPU thread counts d4's plain frames while the GPU counts the rest, so the stop
    // always finds subtasks unfinished: a fast GPU may take all of its own in one dispatch
    // (an H100 counts N = 17 in 0.3 s).
    let options = CountOptions {
        threads: Some(1),
        ..on(DeviceChoice::Gpu, EngineChoice::D4, true)
    };
    let request = RunRequest {
        checkpoint: Some(ck.clone()),
        ..RunRequest::new(17, options, None)
    };
    run_stopped(&request, |done, _| done >= 1);
    let ck_arg = ck.display().to_string();
    let (code, out, err) = run(&[
        "count",
        "17",
        "--unique",
        "--engine",
        "d4",
        "--json",
        "--device",
        "cpu",
        "--checkpoint",
        &ck_arg,
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (total, classes) = known(17);
    assert_eq!(v["total"], total.to_string());
    assert_eq!(v["unique"], classes.to_string());
    let resumed = v["resumed_subtasks"].as_u64().unwrap();
    assert!(
        resumed > 0 && resumed < v["subtasks"].as_u64().unwrap(),
        "{v}"
    );
    // and a CPU checkpoint resumes on the GPU
    let ck2 = dir.path().join("ck2").display().to_string();
    run(&[
        "count",
        "12",
        "--shard",
        "1/2",
        "--device",
        "cpu",
        "--checkpoint",
        &ck2,
    ]);
    let (_, out, _) = run(&[
        "count",
        "12",
        "--shard",
        "1/2",
        "--json",
        "--device",
        "gpu",
        "--checkpoint",
        &ck2,
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["resumed_subtasks"], v["subtasks"]);
}

#[test]
fn device_gpu_without_an_adapter_is_a_runtime_failure_and_auto_skips_software_adapters() {
    let out = Command::new(bin())
        .args(["count", "8", "--device", "gpu"])
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(out.stdout.is_empty());
    assert!(
        err.contains("no usable GPU") || err.contains("without the gpu feature"),
        "{err}"
    );
    // auto never takes a CPU-emulated adapter: with only lavapipe, N = 18 runs on the CPU
    if adapter("auto").is_some_and(|name| name.contains("llvmpipe")) {
        let (code, out, _) = run(&["count", "18", "--shard", "0/4000", "--json"]);
        assert_eq!(code, 0);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["device"], "cpu");
    }
    // --device appears in --stats
    let (_, _, err) = run(&["count", "8", "--device", "cpu", "--stats"]);
    assert!(err.contains("device=cpu"), "{err}");
}

/// A subtask whose total passes 2^32 (and whose items each fit 32 bits), counted exactly on a
/// real GPU: the completions of the middle column of the first row at N = 21, one subtask
/// (about 1.5e10 solutions). Seconds on a data-centre GPU, far too long for lavapipe: run
/// with `cargo test --release --test it -- --ignored past_2_32` where a GPU is at hand.
#[test]
#[ignore]
fn a_subtask_past_2_32_is_exact_on_a_real_gpu() {
    if nqueens::gpu_adapters().unwrap().iter().all(|a| a.software) {
        eprintln!("past_2_32: no real GPU: skipped");
        return;
    }
    let on = |device| CountOptions {
        split_depth: Some(1),
        ..on(device, EngineChoice::Auto, false)
    };
    let gpu = count_completions(
        21,
        &[10],
        &CountOptions {
            threads: None,
            ..on(DeviceChoice::GpuOnly)
        },
    )
    .unwrap();
    assert!(gpu.total > 1 << 32, "{}", gpu.total);
    assert_eq!(gpu.subtasks, 1);
    let cpu = count_completions(
        21,
        &[10],
        &CountOptions {
            threads: None,
            ..on(DeviceChoice::Cpu)
        },
    )
    .unwrap();
    assert_eq!((gpu.total, gpu.nodes), (cpu.total, cpu.nodes));
}

/// The quadrant engine with its pairs on the GPU: the known totals, shards of one plan on
/// both devices merge and verify, and a run stopped on either device resumes on the other
/// (or on the same one) exactly.
#[test]
fn the_quadrant_engine_on_the_gpu_counts_merges_and_resumes_as_on_the_cpu() {
    if adapter("quadrant").is_none() {
        return;
    }
    let json = |args: &[&str]| -> serde_json::Value {
        let (code, out, err) = run(args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    for n in ["8", "13", "16"] {
        let v = json(&[
            "count", n, "--engine", "quadrant", "--device", "gpu-only", "--json",
        ]);
        let n: usize = n.parse().unwrap();
        assert_eq!(v["total"], known(n).0.to_string(), "{v}");
        assert_eq!(v["engine"], "quadrant");
        assert!(
            v["gpu_subtasks"].as_u64().unwrap() > 0 && v["device"] != "cpu",
            "{v}"
        );
        // every sieve fit the GPU's buffers: none was given back to the CPU
        assert_eq!(v["gpu_given_up"], 0, "{v}");
    }
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["gpu-only", "cpu", "gpu"]
        .iter()
        .enumerate()
        .map(|(i, device)| {
            let record = shard_record(15, i, 3, &["--engine", "quadrant", "--device", device]);
            write(dir.path(), &format!("{i}.json"), &record)
        })
        .collect();
    let (code, out, err) = merge_files(&files, &["--verify", "1000000"]);
    assert_eq!((code, out.as_str()), (0, "2279184\n"), "{err}");
    // stopped on one device, resumed on another (and on the same one)
    for (i, (first, then)) in [
        (DeviceChoice::GpuOnly, "cpu"),
        (DeviceChoice::Cpu, "gpu-only"),
        (DeviceChoice::GpuOnly, "gpu-only"),
    ]
    .into_iter()
    .enumerate()
    {
        let ck = dir.path().join(format!("ck{i}"));
        let request = RunRequest {
            checkpoint: Some(ck.clone()),
            ..RunRequest::new(16, on(first, EngineChoice::Quadrant, false), None)
        };
        run_stopped(&request, |done, _| done >= 50);
        let ck = ck.display().to_string();
        let args = [
            "count",
            "16",
            "--engine",
            "quadrant",
            "--json",
            "--checkpoint",
            &ck,
        ];
        let v = json(&[&args[..], &["--device", then]].concat());
        assert_eq!(
            v["total"],
            known(16).0.to_string(),
            "{first:?} then {then}: {v}"
        );
        let resumed = v["resumed_subtasks"].as_u64().unwrap();
        assert!(
            resumed >= 50 && resumed < v["subtasks"].as_u64().unwrap(),
            "{first:?} then {then}: {v}"
        );
    }
}
