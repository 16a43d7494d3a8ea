//! What `scale` prints: an aligned table, CSV, markdown or JSON of the measured rows.

use super::schema::SCHEMA_VERSION;
use crate::scale::{ScaleReport, ScaleRow};
use serde::Serialize;

/// CSV with a header line.
///
/// ```
/// let rows = nqueens::scale::rows(&[(1, vec![2.0]), (2, vec![1.0])]);
/// assert_eq!(
///     nqueens::export::scale::to_csv(&rows),
///     "threads,runs,median_s,min_s,max_s,speedup,efficiency\n\
///      1,1,2.000000,2.000000,2.000000,1.000,1.000\n\
///      2,1,1.000000,1.000000,1.000000,2.000,1.000\n"
/// );
/// ```
pub fn to_csv(rows: &[ScaleRow]) -> String {
    let mut out = String::from("threads,runs,median_s,min_s,max_s,speedup,efficiency\n");
    for r in rows {
        out.push_str(&format!(
            "{},{},{:.6},{:.6},{:.6},{:.3},{:.3}\n",
            r.threads, r.runs, r.median_s, r.min_s, r.max_s, r.speedup, r.efficiency
        ));
    }
    out
}

/// A GitHub-flavoured markdown table.
///
/// ```
/// let rows = nqueens::scale::rows(&[(1, vec![2.0])]);
/// assert_eq!(
///     nqueens::export::scale::to_markdown(&rows),
///     "| threads | runs | median s | min s | max s | speedup | efficiency |\n\
///      |--:|--:|--:|--:|--:|--:|--:|\n\
///      | 1 | 1 | 2.000 | 2.000 | 2.000 | 1.00 | 1.00 |\n"
/// );
/// ```
pub fn to_markdown(rows: &[ScaleRow]) -> String {
    let mut out = String::from(
        "| threads | runs | median s | min s | max s | speedup | efficiency |\n\
         |--:|--:|--:|--:|--:|--:|--:|\n",
    );
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {:.3} | {:.3} | {:.3} | {:.2} | {:.2} |\n",
            r.threads, r.runs, r.median_s, r.min_s, r.max_s, r.speedup, r.efficiency
        ));
    }
    out
}

/// An aligned plain-text table for people.
///
/// ```
/// let rows = nqueens::scale::rows(&[(1, vec![2.0])]);
/// let table = nqueens::export::scale::to_table(&rows);
/// assert_eq!(table.lines().count(), 2);
/// assert!(table.lines().nth(1).unwrap().trim_start().starts_with("1    1      2.000"));
/// ```
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
///
/// ```
/// use nqueens::{export, scale, CountOptions};
/// let never = std::sync::atomic::AtomicBool::new(false);
/// let report = scale::measure(6, &CountOptions::default(), &[1], 1, &never, |_, _, _| {}).unwrap();
/// let back: scale::ScaleReport = serde_json::from_str(&export::scale::to_json(&report)).unwrap();
/// assert_eq!(back, report);
/// ```
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
