//! What `estimate` prints: the JSON object and the lines for people.

use super::schema::SCHEMA_VERSION;
use crate::memory::Bytes;
use crate::run::Estimate;

/// Cores the text's example cluster has.
const CLUSTER_CORES: f64 = 1000.0;

impl Estimate {
    /// The estimate as one line of JSON: every field and `schema_version`, the engine,
    /// kernel and shard as the count's record names them.
    ///
    /// ```
    /// use nqueens::{CountOptions, Hooks, RunRequest};
    /// let estimate = RunRequest::new(9, CountOptions::default(), None)
    ///     .estimate(0.0, 1, &Hooks::default())
    ///     .unwrap();
    /// let json: serde_json::Value = serde_json::from_str(&estimate.to_json()).unwrap();
    /// assert_eq!(json["n"], 9);
    /// assert!(json["core_hours"].as_f64().unwrap() <= json["core_hours_high"].as_f64().unwrap());
    /// assert!(json.get("total").is_none());
    /// ```
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "n": self.n,
            "engine": self.engine.name(),
            "kernel": self.kernel.name(),
            "threads": self.threads,
            "shard": self.shard.to_string(),
            "subtasks": self.subtasks,
            "counting": self.counting,
            "seed": self.seed,
            "units_sampled": self.units_sampled,
            "sample_core_seconds": self.sample_core_seconds,
            "longest_unit_seconds": self.longest_unit_seconds,
            "sample_seconds": self.sample_seconds,
            "core_hours": self.core_hours,
            "core_hours_low": self.core_hours_low,
            "core_hours_high": self.core_hours_high,
            "interval": 0.9,
            "sizing_core_seconds": self.sizing_core_seconds,
            "peak_bytes": self.peak_bytes,
            "notes": self.notes,
        })
        .to_string()
    }

    /// The estimate for people: what was sampled, the core-hours with their interval, the
    /// sizing, the memory, and the wall time on a thousand cores.
    ///
    /// ```
    /// use nqueens::{CountOptions, Hooks, RunRequest};
    /// let estimate = RunRequest::new(9, CountOptions::default(), None)
    ///     .estimate(0.0, 1, &Hooks::default())
    ///     .unwrap();
    /// // N = 9 takes well under a core-hour: its cost is said in core-seconds
    /// assert!(estimate.to_text().starts_with("N = 9: ") && estimate.to_text().contains("core-seconds"));
    /// ```
    pub fn to_text(&self) -> String {
        let of = if self.shard.count > 1 {
            format!("shard {} of N = {}", self.shard, self.n)
        } else {
            format!("N = {}", self.n)
        };
        // core-seconds below a core-hour, core-hours from it
        let (unit, scale) = if self.core_hours_high < 1.0 {
            ("core-seconds", 3600.0)
        } else {
            ("core-hours", 1.0)
        };
        let counting = if self.counting < self.subtasks {
            format!(" ({} that count)", self.counting)
        } else {
            String::new()
        };
        let per_thread = self.peak_bytes / self.threads.max(1) as u64;
        // each process of a run pays its sizing once: on a thousand one-core shards, once
        // a core
        let wall_seconds = self.core_hours * 3600.0 / CLUSTER_CORES
            + self.sizing_core_seconds / self.threads.max(1) as f64;
        format!(
            "{of}: {} {unit} (90 % interval {} to {}) for {} subtasks{counting}, engine {}, kernel {}\n\
             sampled: {} subtasks (seed {}) took {} core-seconds on {} threads, the longest {} s\n\
             sizing: {} core-seconds, paid by each process before its subtasks (the quarters' sizes once a machine: see NQUEENS_CACHE_DIR)\n\
             peak memory: {:.2} on {} threads ({:.2} a thread)\n\
             on 1,000 cores: about {}\n",
            figures(self.core_hours * scale),
            figures(self.core_hours_low * scale),
            figures(self.core_hours_high * scale),
            self.subtasks,
            self.engine.name(),
            self.kernel.name(),
            self.units_sampled,
            self.seed,
            figures(self.sample_core_seconds),
            self.threads,
            figures(self.longest_unit_seconds),
            figures(self.sizing_core_seconds),
            Bytes(self.peak_bytes),
            self.threads,
            Bytes(per_thread),
            duration(wall_seconds),
        )
    }
}

/// Wall time as a person reads it: seconds, minutes, hours or days.
fn duration(seconds: f64) -> String {
    match seconds {
        s if s < 120.0 => format!("{} seconds", figures(s)),
        s if s < 7200.0 => format!("{} minutes", figures(s / 60.0)),
        s if s < 172_800.0 => format!("{} hours", figures(s / 3600.0)),
        s => format!("{} days", figures(s / 86_400.0)),
    }
}

/// A figure to three significant digits, thousands grouped (`14,800`, `2.35`, `0.000412`).
fn figures(h: f64) -> String {
    if !h.is_finite() || h <= 0.0 {
        return format!("{h}");
    }
    if h >= 1000.0 {
        let digits = h.log10().floor() as i32 + 1;
        let kept = 10f64.powi(digits - 3);
        let whole = ((h / kept).round() * kept) as u64;
        let text = whole.to_string();
        let mut out = String::new();
        for (i, c) in text.chars().enumerate() {
            if i > 0 && (text.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        return out;
    }
    let decimals = (2 - h.log10().floor() as i32).max(0) as usize;
    format!("{h:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::{duration, figures};

    /// Asserts that `say` writes each value of `cases` as its case says.
    fn says(say: fn(f64) -> String, cases: &[(f64, &str)]) {
        for &(value, said) in cases {
            assert_eq!(say(value), said, "{value}");
        }
    }

    #[test]
    fn figures_keep_three_digits() {
        let cases = [
            (14_812.4, "14,800"),
            (1_234_567.0, "1,230,000"),
            (999.4, "999"),
            (2.345, "2.35"),
            (0.000_412_3, "0.000412"),
            (0.0, "0"),
        ];
        says(figures, &cases);
    }

    #[test]
    fn durations_take_the_unit_a_person_reads() {
        let cases = [
            (59.0, "59.0 seconds"),
            (600.0, "10.0 minutes"),
            (36_000.0, "10.0 hours"),
            (864_000.0, "10.0 days"),
        ];
        says(duration, &cases);
    }
}
