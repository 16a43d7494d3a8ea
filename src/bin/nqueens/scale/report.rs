//! What a scale measurement found: the machine, one row per thread count, the report.

use serde::{Deserialize, Serialize};

/// Facts about the machine a measurement ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// Logical CPUs.
    pub logical_cpus: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// CPU model name, when the OS tells it.
    pub cpu_model: Option<String>,
    /// Kernel release, when the OS tells it.
    pub kernel: Option<String>,
    /// Operating system and architecture.
    pub os: String,
}

impl Machine {
    /// Reads the facts of this machine.
    pub fn current() -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find(|l| l.starts_with("model name"))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string());
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .ok()
            .map(|s| s.trim().to_string());
        Machine {
            logical_cpus: num_cpus::get(),
            physical_cores: num_cpus::get_physical(),
            cpu_model,
            kernel,
            os: format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH),
        }
    }
}

/// One thread count's timings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleRow {
    /// Worker threads.
    pub threads: usize,
    /// Timed runs.
    pub runs: usize,
    /// Median wall-clock seconds.
    pub median_s: f64,
    /// Fastest run.
    pub min_s: f64,
    /// Slowest run.
    pub max_s: f64,
    /// 1-thread median / this median.
    pub speedup: f64,
    /// Speedup / threads.
    pub efficiency: f64,
}

/// A whole measurement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScaleReport {
    /// Board side.
    pub n: usize,
    /// The count every run agreed on.
    pub total: String,
    /// Engine that ran.
    pub engine: nqueens::Engine,
    /// Kernel that ran.
    pub kernel: nqueens::Kernel,
    /// Where the search ran: `cpu`, or the GPU adapter and its backend.
    pub device: String,
    /// Subtasks per run.
    pub subtasks: usize,
    /// Whether worker threads were pinned to cores.
    pub pinned: bool,
    /// Program version.
    pub version: String,
    /// Where it ran.
    pub machine: Machine,
    /// One row per thread count.
    pub rows: Vec<ScaleRow>,
    /// Whether every run asked for was measured (false: stopped, the rows hold the runs
    /// measured before the stop).
    #[serde(default = "complete_by_default")]
    pub complete: bool,
    /// Thread counts asked for that could not run as asked (the process's memory limits held
    /// the count to fewer threads), a line each saying why: they have no row, and the report
    /// is not `complete`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

fn complete_by_default() -> bool {
    true
}

/// Summarises timings (seconds per run, per thread count) into rows.
pub fn rows(samples: &[(usize, Vec<f64>)]) -> Vec<ScaleRow> {
    let medians: Vec<f64> = samples.iter().map(|(_, t)| median(t)).collect();
    let base = samples
        .iter()
        .position(|(t, _)| *t == 1)
        .map_or(medians.first().copied().unwrap_or(0.0), |i| medians[i]);
    samples
        .iter()
        .zip(&medians)
        .map(|((threads, times), &med)| {
            let speedup = if med > 0.0 { base / med } else { 0.0 };
            ScaleRow {
                threads: *threads,
                runs: times.len(),
                median_s: med,
                min_s: times.iter().copied().fold(f64::INFINITY, f64::min),
                max_s: times.iter().copied().fold(0.0, f64::max),
                speedup,
                efficiency: speedup / *threads as f64,
            }
        })
        .collect()
}

fn median(times: &[f64]) -> f64 {
    let mut t = times.to_vec();
    t.sort_by(f64::total_cmp);
    match t.len() {
        0 => 0.0,
        len if len % 2 == 1 => t[len / 2],
        len => (t[len / 2 - 1] + t[len / 2]) / 2.0,
    }
}
