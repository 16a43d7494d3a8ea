//! `scale --plot`: the speedup curve as an SVG document, and writing it to its file.

use super::report::ScaleReport;
use nqueens::Error;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Draws speedup against threads, with the ideal line, as an SVG document.
pub fn svg(report: &ScaleReport) -> Result<String, Error> {
    use plotters::prelude::*;
    let mut svg = String::new();
    let max_threads = report
        .rows
        .iter()
        .map(|r| r.threads)
        .max()
        .unwrap_or(1)
        .max(2) as f64;
    let max_speedup = report
        .rows
        .iter()
        .map(|r| r.speedup)
        .fold(max_threads, f64::max);
    let fail = |e: &dyn std::fmt::Display| Error::Failed(format!("cannot draw the plot: {e}"));
    {
        let root = SVGBackend::with_string(&mut svg, (640, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(&e))?;
        let title = format!(
            "nqueens count {} ({}, {} kernel)",
            report.n,
            report.engine,
            report.kernel.name()
        );
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..max_threads * 1.05, 0.0..max_speedup * 1.05)
            .map_err(|e| fail(&e))?;
        chart
            .configure_mesh()
            .x_desc("threads")
            .y_desc("speedup")
            .draw()
            .map_err(|e| fail(&e))?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 0.0), (max_threads, max_threads)],
                BLACK.mix(0.4).stroke_width(1),
            ))
            .map_err(|e| fail(&e))?
            .label("ideal")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.4)));
        let points: Vec<(f64, f64)> = report
            .rows
            .iter()
            .map(|r| (r.threads as f64, r.speedup))
            .collect();
        chart
            .draw_series(LineSeries::new(points.clone(), BLUE.stroke_width(2)))
            .map_err(|e| fail(&e))?
            .label("measured")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLUE.stroke_width(2)));
        chart
            .draw_series(points.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
            .map_err(|e| fail(&e))?;
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .position(SeriesLabelPosition::UpperLeft)
            .draw()
            .map_err(|e| fail(&e))?;
        root.present().map_err(|e| fail(&e))?;
    }
    Ok(svg)
}

/// Where a plot goes. A regular file (or none yet) is replaced whole, through a temporary
/// file beside it and a rename, so that a full disk or a kill leaves the earlier plot intact;
/// anything else (a device such as /dev/stdout, a pipe) is written straight to, never
/// renamed over.
enum Target {
    Replace { file: PathBuf, dir: PathBuf },
    Straight(PathBuf),
}

fn target(path: &Path) -> Target {
    // a symbolic link stays: the file it names is replaced
    let file = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match fs::metadata(&file) {
        Ok(m) if !m.is_file() => Target::Straight(file),
        _ => {
            let dir = match file.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            Target::Replace { file, dir }
        }
    }
}

/// A fresh temporary file `FILE.tmpXXXXXX` beside `file`, removed when dropped.
fn temporary(file: &Path, dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut prefix = file.file_name().unwrap_or_default().to_owned();
    prefix.push(".tmp");
    tempfile::Builder::new().prefix(&prefix).tempfile_in(dir)
}

fn cannot_write(path: &Path, e: std::io::Error) -> Error {
    Error::Failed(format!("cannot write the plot {}: {e}", path.display()))
}

/// Fails unless a plot can be written at `path`, changing nothing there: checked before the
/// measurements, which can take an hour.
pub fn check_writable(path: &Path) -> Result<(), Error> {
    let fail = |e| cannot_write(path, e);
    match target(path) {
        Target::Straight(device) => {
            // an empty write: a device that takes nothing (/dev/full) refuses even that
            write_straight(&device, &[]).map_err(fail)?;
        }
        Target::Replace { file, dir } => {
            temporary(&file, &dir).map_err(fail)?;
        }
    }
    Ok(())
}

/// Writes `svg` to `path` (see [`Target`]).
pub fn write(path: &Path, svg: &str) -> Result<(), Error> {
    let fail = |e| cannot_write(path, e);
    match target(path) {
        Target::Straight(device) => write_straight(&device, svg.as_bytes()).map_err(fail)?,
        Target::Replace { file, dir } => {
            let mut tmp = temporary(&file, &dir).map_err(fail)?;
            // the replacement keeps the old file's permissions (a new one is world-readable)
            let permissions = match fs::metadata(&file) {
                Ok(m) => Some(m.permissions()),
                Err(_) => new_file_permissions(),
            };
            if let Some(p) = permissions {
                tmp.as_file().set_permissions(p).map_err(fail)?;
            }
            tmp.write_all(svg.as_bytes()).map_err(fail)?;
            tmp.as_file().sync_all().map_err(fail)?;
            tmp.persist(&file).map_err(|e| fail(e.error))?;
        }
    }
    Ok(())
}

/// Writes `bytes` to what is at `path` (not a regular file) as it stands: one write call
/// even when `bytes` is empty.
fn write_straight(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::OpenOptions::new().write(true).open(path)?;
    let written = f.write(bytes)?;
    f.write_all(&bytes[written..])?;
    f.flush()
}

#[cfg(unix)]
fn new_file_permissions() -> Option<fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn new_file_permissions() -> Option<fs::Permissions> {
    None
}
