//! `scale --plot`: the speedup curve as an SVG document.

use nqueens::scale::ScaleReport;
use nqueens::Error;

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
