//! What `scale` prints: an aligned table, CSV, markdown or JSON of the measured rows.

use super::report::{ScaleReport, ScaleRow};
use nqueens::export::SCHEMA_VERSION;
use serde::Serialize;

/// `header`, then a line of each row.
fn lines(header: &str, rows: &[ScaleRow], line: impl Fn(&ScaleRow) -> String) -> String {
    std::iter::once(header.to_string())
        .chain(rows.iter().map(line))
        .collect()
}

/// CSV with a header line.
pub fn to_csv(rows: &[ScaleRow]) -> String {
    let header = "threads,runs,median_s,min_s,max_s,speedup,efficiency\n";
    lines(header, rows, |r| {
        let (t, n, median, min, max) = (r.threads, r.runs, r.median_s, r.min_s, r.max_s);
        let (speedup, efficiency) = (r.speedup, r.efficiency);
        format!("{t},{n},{median:.6},{min:.6},{max:.6},{speedup:.3},{efficiency:.3}\n")
    })
}

/// A GitHub-flavoured markdown table.
pub fn to_markdown(rows: &[ScaleRow]) -> String {
    let header = "| threads | runs | median s | min s | max s | speedup | efficiency |\n\
                  |--:|--:|--:|--:|--:|--:|--:|\n";
    lines(header, rows, |r| {
        format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |\n",
            r.threads, r.runs, r.median_s, r.min_s, r.max_s, r.speedup, r.efficiency
        )
    })
}

/// An aligned plain-text table for people.
pub fn to_table(rows: &[ScaleRow]) -> String {
    let mut out = format!(
        "{:>7} {:>4} {:>10} {:>10} {:>10} {:>8} {:>10}\n",
        "threads", "runs", "median_s", "min_s", "max_s", "speedup", "efficiency"
    );
    for r in rows {
        out.push_str(&format!(
            "{:>7} {:>4} {:>10.3} {:>10.3} {:>10.3} {:>8.2} {:>10.2}\n",
            r.threads, r.runs, r.median_s, r.min_s, r.max_s, r.speedup, r.efficiency
        ));
    }
    out
}

/// The whole report as one line of JSON (with a trailing newline), led by `schema_version`.
pub fn to_json(report: &ScaleReport) -> String {
    #[derive(Serialize)]
    struct Versioned<'a> {
        schema_version: u32,
        #[serde(flatten)]
        report: &'a ScaleReport,
    }
    let versioned = Versioned {
        schema_version: SCHEMA_VERSION,
        report,
    };
    serde_json::to_string(&versioned).expect("reports always serialise") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scale::{rows, Machine};

    fn fixed_rows() -> Vec<ScaleRow> {
        rows(&[
            (1, vec![4.0, 4.2, 3.8]),
            (2, vec![2.1, 2.0, 2.5]),
            (4, vec![1.25, 1.0]),
        ])
    }

    #[test]
    fn exporters_give_exact_text() {
        let r = fixed_rows();
        assert_eq!(
            to_csv(&r),
            "threads,runs,median_s,min_s,max_s,speedup,efficiency\n\
             1,3,4.000000,3.800000,4.200000,1.000,1.000\n\
             2,3,2.100000,2.000000,2.500000,1.905,0.952\n\
             4,2,1.125000,1.000000,1.250000,3.556,0.889\n"
        );
        assert_eq!(
            to_markdown(&r),
            "| threads | runs | median s | min s | max s | speedup | efficiency |\n\
             |--:|--:|--:|--:|--:|--:|--:|\n\
             | 1 | 3 | 4.000 | 3.800 | 4.200 | 1.00 | 1.00 |\n\
             | 2 | 3 | 2.100 | 2.000 | 2.500 | 1.90 | 0.95 |\n\
             | 4 | 2 | 1.125 | 1.000 | 1.250 | 3.56 | 0.89 |\n"
        );
        assert_eq!(
            to_table(&r),
            "threads runs   median_s      min_s      max_s  speedup efficiency\n      \
             1    3      4.000      3.800      4.200     1.00       1.00\n      \
             2    3      2.100      2.000      2.500     1.90       0.95\n      \
             4    2      1.125      1.000      1.250     3.56       0.89\n"
        );
        let report = ScaleReport {
            n: 12,
            total: "14200".into(),
            engine: nqueens::Engine::D4,
            kernel: nqueens::Kernel::Scalar,
            device: "cpu".into(),
            subtasks: 5078,
            pinned: false,
            version: "0.1.0".into(),
            machine: Machine {
                logical_cpus: 2,
                physical_cores: 1,
                cpu_model: Some("Test CPU".into()),
                kernel: None,
                os: "linux-x86_64".into(),
            },
            rows: r[..1].to_vec(),
            complete: true,
            refused: Vec::new(),
        };
        assert_eq!(
            to_json(&report),
            "{\"schema_version\":1,\"n\":12,\"total\":\"14200\",\"engine\":\"d4\",\"kernel\":\"scalar\",\"device\":\"cpu\",\
             \"subtasks\":5078,\"pinned\":false,\"version\":\"0.1.0\",\"machine\":{\"logical_cpus\":2,\
             \"physical_cores\":1,\"cpu_model\":\"Test CPU\",\"kernel\":null,\"os\":\"linux-x86_64\"},\
             \"rows\":[{\"threads\":1,\"runs\":3,\"median_s\":4.0,\"min_s\":3.8,\"max_s\":4.2,\
             \"speedup\":1.0,\"efficiency\":1.0}],\"complete\":true}\n"
        );
    }

    #[test]
    fn json_reads_back_as_the_report() {
        let never = std::sync::atomic::AtomicBool::new(false);
        let options = nqueens::CountOptions::default();
        let one = std::num::NonZeroU32::MIN;
        let report = crate::scale::measure(6, &options, &[1], one, &never, |_, _, _| {}).unwrap();
        let back: ScaleReport = serde_json::from_str(&to_json(&report)).unwrap();
        assert_eq!(back, report);
    }
}
