//! Drawing each [`Chart`](super::Chart) kind: grouped bars, stacked bars
//! (with an optional line on a second axis) and lines.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;

use super::layout::{
    draw_group_labels, group_label_lines, header, label_style, num_label, plot_width, series_items,
    text_width, x_area_for, LegendItem, Swatch, BAR_LABEL_PX, LABEL_PX, MARGIN, Y_AREA,
};
use super::{color, finite_max, finite_min_pos, group_axis, FONT};

pub(crate) fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[String],
    series: &[(String, Vec<f64>)],
    log_y: bool,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let xr = group_axis(groups.len());
    let vals = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let ns = series.len().max(1) as f64;
    // Headroom for the value labels above the bars.
    let top = finite_max(vals()).max(1e-12) * 1.12;
    // Room under negative bars for their labels (none when all are positive).
    let min = vals().filter(|v| v.is_finite()).fold(0.0, f64::min);
    let low = if min < 0.0 {
        min - 0.1 * (top - min)
    } else {
        0.0
    };
    let w = 0.8 / ns;
    let rect = |g: usize, s: usize, y0: f64, y1: f64| {
        let x0 = g as f64 - 0.4 + s as f64 * w;
        [(x0, y0), (x0 + w * 0.95, y1)]
    };
    let area = header(
        root,
        title,
        &series_items(series.iter().map(|s| &s.0), Swatch::Box),
    )?;
    let labels = group_label_lines(root, groups, plot_width(root.dim_in_pixel().0, 0));
    let n_lines = labels.1.iter().map(Vec::len).max().unwrap_or(1);
    let mut builder = ChartBuilder::on(&area);
    builder
        .margin(MARGIN)
        .margin_top(4)
        .x_label_area_size(x_area_for(n_lines, labels.0))
        .y_label_area_size(Y_AREA);
    let spec = BarsSpec {
        labels: (x_label, y_label),
        groups: &labels,
        series,
    };
    if log_y {
        let bottom = finite_min_pos(vals()).min(top) / 2.0;
        let c = builder.build_cartesian_2d(xr, (bottom..top * 2.0).log_scale())?;
        fill_bars(root, c, spec, (bottom, true), rect)
    } else {
        let c = builder.build_cartesian_2d(xr, low..top)?;
        fill_bars(root, c, spec, (0.0, false), rect)
    }
}

/// What [`fill_bars`] draws besides the axes.
struct BarsSpec<'a> {
    labels: (&'a str, &'a str),
    groups: &'a (u32, Vec<Vec<String>>),
    series: &'a [(String, Vec<f64>)],
}

/// Draws the mesh, one bar per group and series from `bottom` (values that
/// the y axis cannot show — not finite, or not positive on a log axis — are
/// left out), each bar's value where it fits the bar's width, and the group
/// labels.
fn fill_bars<'a, DB: DrawingBackend + 'a, Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &DrawingArea<DB, Shift>,
    mut c: ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    spec: BarsSpec<'_>,
    (bottom, log_y): (f64, bool),
    rect: impl Fn(usize, usize, f64, f64) -> [(f64, f64); 2],
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&|v: &f64| num_label(*v))
        .x_desc(spec.labels.0)
        .y_desc(spec.labels.1)
        .label_style((FONT, LABEL_PX))
        .axis_desc_style((FONT, LABEL_PX))
        .draw()?;
    let shown = |y: &f64| y.is_finite() && (!log_y || *y > 0.0);
    for (s, (_, v)) in spec.series.iter().enumerate() {
        let col = color(s);
        c.draw_series(
            v.iter()
                .enumerate()
                .filter(|(_, y)| shown(y))
                .map(|(g, y)| Rectangle::new(rect(g, s, bottom, *y), col.filled())),
        )?;
    }
    // Value labels, centred over (or, for negative values, under) each bar,
    // drawn only where the text is no wider than the bar plus a little.
    for (s, (_, v)) in spec.series.iter().enumerate() {
        for (g, y) in v.iter().enumerate().filter(|(_, y)| shown(y)) {
            let [(x0, _), (x1, _)] = rect(g, s, bottom, *y);
            let (p0, py) = c.backend_coord(&(x0, *y));
            let (p1, _) = c.backend_coord(&(x1, *y));
            let text = num_label(*y);
            #[expect(
                clippy::cast_possible_wrap,
                reason = "pixel sizes and coordinates of a plot are far below i32::MAX"
            )]
            let tw = text_width(root, &text, BAR_LABEL_PX) as i32;
            if tw > (p1 - p0) + 8 {
                continue;
            }
            let below = *y < 0.0;
            let pos = plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                if below {
                    plotters::style::text_anchor::VPos::Top
                } else {
                    plotters::style::text_anchor::VPos::Bottom
                },
            );
            let at = ((p0 + p1) / 2, if below { py + 2 } else { py - 2 });
            root.draw(&Text::new(text, at, label_style(BAR_LABEL_PX).pos(pos)))?;
        }
    }
    draw_group_labels(root, &c, spec.groups, bottom)?;
    Ok(())
}

pub(crate) struct StackedSpec<'a> {
    pub(crate) title: &'a str,
    pub(crate) x_label: &'a str,
    pub(crate) y_label: &'a str,
    pub(crate) groups: &'a [String],
    pub(crate) bars: &'a [String],
    pub(crate) parts: &'a [String],
    pub(crate) values: &'a [Vec<Vec<f64>>],
    pub(crate) line: Option<&'a (String, Vec<f64>, String)>,
    pub(crate) line_spread: &'a [(f64, f64)],
}

pub(crate) fn draw_stacked<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: StackedSpec<'_>,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let xr = group_axis(s.groups.len());
    let totals = s.values.iter().flat_map(|g| {
        g.iter()
            .map(|b| b.iter().filter(|v| v.is_finite()).sum::<f64>())
    });
    // Headroom for the bar names above the bars.
    let top = finite_max(totals).max(1e-12) * 1.1;
    let nb = s.bars.len().max(1) as f64;
    let w = 0.8 / nb;
    let mut items = series_items(s.parts.iter(), Swatch::Box);
    if let Some((name, _, _)) = s.line {
        items.push(LegendItem {
            name: name.clone(),
            color: BLACK,
            swatch: Swatch::Line,
        });
    }
    let area = header(root, s.title, &items)?;
    let right = if s.line.is_some() { Y_AREA } else { 0 };
    let labels = group_label_lines(root, s.groups, plot_width(root.dim_in_pixel().0, right));
    let n_lines = labels.1.iter().map(Vec::len).max().unwrap_or(1);
    let mut builder = ChartBuilder::on(&area);
    builder
        .margin(MARGIN)
        .margin_top(4)
        .x_label_area_size(x_area_for(n_lines, labels.0))
        .y_label_area_size(Y_AREA)
        .right_y_label_area_size(right);
    // The secondary range must be set before the mesh is drawn, or the
    // primary labels are drawn on the right axis too.
    let (lo2, hi2) = match s.line {
        Some((_, ys, _)) => {
            let spread = s.line_spread.iter().flat_map(|(a, b)| [*a, *b]);
            let finite = || {
                ys.iter()
                    .copied()
                    .chain(spread.clone())
                    .filter(|y| y.is_finite())
            };
            let hi = finite_max(finite()).max(0.0);
            let lo = finite().fold(0.0, f64::min);
            let pad = ((hi - lo) * 0.1).max(1.0);
            (lo - pad, hi + pad)
        }
        None => (0.0, 1.0),
    };
    let mut c = builder
        .build_cartesian_2d(xr.clone(), 0.0..top)?
        .set_secondary_coord(xr, lo2..hi2);
    draw_group_labels(root, &c, &labels, 0.0)?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_label_formatter(&|v: &f64| num_label(*v))
        .x_desc(s.x_label)
        .y_desc(s.y_label)
        .label_style((FONT, LABEL_PX))
        .axis_desc_style((FONT, LABEL_PX))
        .draw()?;
    for (p, _) in s.parts.iter().enumerate() {
        let col = color(p);
        let mut rects = Vec::new();
        for (g, bars) in s.values.iter().enumerate() {
            for (b, parts) in bars.iter().enumerate() {
                let y0: f64 = parts[..p].iter().filter(|v| v.is_finite()).sum();
                let v = parts.get(p).copied().unwrap_or(0.0);
                if !v.is_finite() || v <= 0.0 {
                    continue;
                }
                let x0 = g as f64 - 0.4 + b as f64 * w;
                rects.push(Rectangle::new(
                    [(x0, y0), (x0 + w * 0.9, y0 + v)],
                    col.filled(),
                ));
            }
        }
        c.draw_series(rects)?;
    }
    // Bar names centred above each bar.
    let above = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Bottom,
    );
    for (g, bars) in s.values.iter().enumerate() {
        for (b, parts) in bars.iter().enumerate() {
            let total: f64 = parts.iter().filter(|v| v.is_finite()).sum();
            let x = g as f64 - 0.4 + (b as f64 + 0.45) * w;
            let name = s.bars.get(b).cloned().unwrap_or_default();
            let (px, py) = c.backend_coord(&(x, total));
            root.draw(&Text::new(
                name,
                (px, py - 3),
                TextStyle::from((FONT, BAR_LABEL_PX + 2).into_font()).pos(above),
            ))?;
        }
    }
    if let Some((_, ys, desc)) = s.line {
        let c2 = &mut c;
        c2.configure_secondary_axes()
            .y_desc(desc.as_str())
            .y_label_formatter(&|v: &f64| num_label(*v))
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        let pts: Vec<(f64, f64)> = ys
            .iter()
            .enumerate()
            .filter(|(_, y)| y.is_finite())
            .map(|(i, y)| (i as f64, *y))
            .collect();
        c2.draw_secondary_series(LineSeries::new(pts.clone(), BLACK.stroke_width(2)))?;
        c2.draw_secondary_series(pts.iter().map(|p| Circle::new(*p, 4, BLACK.filled())))?;
        // Whiskers: a vertical bar from low to high with short caps.
        for (i, (lo, hi)) in s.line_spread.iter().enumerate() {
            if !(lo.is_finite() && hi.is_finite()) {
                continue;
            }
            let x = i as f64;
            let cap = 0.04;
            for seg in [
                vec![(x, *lo), (x, *hi)],
                vec![(x - cap, *lo), (x + cap, *lo)],
                vec![(x - cap, *hi), (x + cap, *hi)],
            ] {
                c2.draw_secondary_series(std::iter::once(PathElement::new(
                    seg,
                    BLACK.stroke_width(2),
                )))?;
            }
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    x: &[f64],
    series: &[(String, Vec<f64>)],
    log_x: bool,
    log_y: bool,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    // A logarithmic x axis is drawn as log2(x), labelled 2^v at whole v.
    let xs: Vec<f64> = if log_x {
        x.iter().map(|v| v.log2()).collect()
    } else {
        x.to_vec()
    };
    let x = &xs[..];
    let xmin = x.iter().copied().fold(f64::INFINITY, f64::min);
    let xmax = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let (xmin, xmax) = if xmin.is_finite() && xmax > xmin {
        (xmin, xmax)
    } else {
        (xmin.min(0.0), xmin.max(0.0) + 1.0)
    };
    // Room on both sides so the end markers are not cut by the axes.
    let xpad = (xmax - xmin) * 0.03;
    let ys = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let ymax = finite_max(ys()).max(1e-12);
    let ymin_all = ys().filter(|y| y.is_finite()).fold(0.0, f64::min);
    let area = header(
        root,
        title,
        &series_items(series.iter().map(|s| &s.0), Swatch::Line),
    )?;
    let mut builder = ChartBuilder::on(&area);
    builder
        .margin(MARGIN)
        .margin_top(4)
        .x_label_area_size(x_area_for(1, LABEL_PX))
        .y_label_area_size(Y_AREA);
    let pts = |v: &[f64]| -> Vec<(f64, f64)> {
        x.iter()
            .zip(v)
            .filter(|(_, y)| y.is_finite() && (!log_y || **y > 0.0))
            .map(|(a, b)| (*a, *b))
            .collect()
    };
    macro_rules! body {
        ($c:ident) => {{
            for (s, (_, v)) in series.iter().enumerate() {
                let col = color(s);
                let p = pts(v);
                $c.draw_series(LineSeries::new(p.clone(), col.stroke_width(2)))?;
                $c.draw_series(p.iter().map(|q| Circle::new(*q, 4, col.filled())))?;
            }
        }};
    }
    // Whole-number x values (levels, bits/key) get whole-number ticks only.
    let whole = x.iter().all(|v| v.fract() == 0.0);
    let xfmt = |v: &f64| {
        if whole && !log_x && v.fract().abs() > 1e-9 {
            String::new()
        } else if log_x {
            if (v - v.round()).abs() < 1e-6 {
                num_label(2f64.powf(v.round()))
            } else {
                String::new()
            }
        } else {
            num_label(*v)
        }
    };
    #[expect(clippy::cast_sign_loss, reason = "the axis range is not negative")]
    let nx = if log_x {
        (xmax - xmin).round() as usize + 1
    } else {
        x.len().clamp(6, 12)
    };
    let xr = xmin - xpad..xmax + xpad;
    if log_y {
        let lo = finite_min_pos(ys()).min(ymax) / 1.5;
        let mut c = builder.build_cartesian_2d(xr, (lo..ymax * 1.5).log_scale())?;
        c.configure_mesh()
            .x_labels(nx)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&|v: &f64| num_label(*v))
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        body!(c);
    } else {
        let lo = if ymin_all < 0.0 { ymin_all * 1.1 } else { 0.0 };
        let mut c = builder.build_cartesian_2d(xr, lo..ymax * 1.1)?;
        c.configure_mesh()
            .x_labels(nx)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&|v: &f64| num_label(*v))
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        body!(c);
    }
    Ok(())
}
