//! Plots of the experiments, drawn with `plotters` into an SVG and a PNG.
//!
//! Text in PNGs is rasterised with `ab_glyph` from a TrueType font found at
//! run time ([`font_available`]): `$SIEVEDB_PLOT_FONT`, DejaVu Sans or
//! Liberation Sans in the usual places, or any `.ttf` under
//! `/usr/share/fonts` (Debian: `apt-get install fonts-dejavu-core`). Without
//! a font no plot is drawn (plotters needs one to lay out text even in SVG);
//! the CSV and the Markdown are still written.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Font family name the plots use (registered from the font file found).
const FONT: &str = "sans-serif";

/// Pixel size of every plot.
const SIZE: (u32, u32) = (960, 560);

/// Fixed colours: series in order, and the five breakdown phases.
const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
];

/// A chart to draw.
#[derive(Clone, Debug)]
pub enum Chart {
    /// Grouped bars: one group per x label, one bar per series.
    Bars {
        /// Title on top.
        title: String,
        /// X axis description.
        x_label: String,
        /// Y axis description.
        y_label: String,
        /// Group labels along x.
        groups: Vec<String>,
        /// `(series name, value per group)`.
        series: Vec<(String, Vec<f64>)>,
        /// Logarithmic y axis.
        log_y: bool,
    },
    /// Stacked bars side by side per group (e.g. `filter` and `levels` per key
    /// size), each split into `parts`, with an optional line on a second axis.
    Stacked {
        /// Title on top.
        title: String,
        /// X axis description.
        x_label: String,
        /// Y axis description.
        y_label: String,
        /// Group labels along x.
        groups: Vec<String>,
        /// Names of the bars of each group, printed above them (e.g. `F`, `L`).
        bars: Vec<String>,
        /// Names of the stacked parts (bottom first).
        parts: Vec<String>,
        /// `values[group][bar][part]`.
        values: Vec<Vec<Vec<f64>>>,
        /// `(name, value per group, axis description)` drawn on the right axis.
        line: Option<(String, Vec<f64>, String)>,
    },
    /// Lines over a numeric x axis.
    Lines {
        /// Title on top.
        title: String,
        /// X axis description.
        x_label: String,
        /// Y axis description.
        y_label: String,
        /// X values shared by every series.
        x: Vec<f64>,
        /// `(series name, y per x)`; NaN values are skipped.
        series: Vec<(String, Vec<f64>)>,
        /// Logarithmic (base-2 labelled) x axis.
        log_x: bool,
        /// Logarithmic y axis.
        log_y: bool,
    },
}

/// Registers a TrueType font with plotters once; whether one was found.
pub fn font_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let Some(path) = find_font() else {
            return false;
        };
        let Ok(bytes) = std::fs::read(&path) else {
            return false;
        };
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(FONT, FontStyle::Normal, bytes).is_ok()
    })
}

fn find_font() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SIEVEDB_PLOT_FONT") {
        return Some(PathBuf::from(p));
    }
    let known = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/TTF/DejaVuSans.ttf",
        "/usr/share/fonts/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
        "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
        "/Library/Fonts/Arial.ttf",
        "/System/Library/Fonts/Supplemental/Arial.ttf",
    ];
    if let Some(p) = known.iter().map(Path::new).find(|p| p.is_file()) {
        return Some(p.to_path_buf());
    }
    find_ttf(Path::new("/usr/share/fonts"), 4)
}

fn find_ttf(dir: &Path, depth: usize) -> Option<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in &entries {
        if p.extension().is_some_and(|e| e.eq_ignore_ascii_case("ttf")) {
            return Some(p.clone());
        }
    }
    if depth == 0 {
        return None;
    }
    entries
        .iter()
        .filter(|p| p.is_dir())
        .find_map(|p| find_ttf(p, depth - 1))
}

/// Draws `chart` into `<base>.svg` and `<base>.png`; returns the files written.
/// Without a font (see [`font_available`]) nothing is drawn and an error says so.
pub fn render(chart: &Chart, base: &Path) -> Result<Vec<PathBuf>, Box<dyn Error>> {
    if !font_available() {
        return Err(
            "no TrueType font found for the plots (set SIEVEDB_PLOT_FONT or \
                    install fonts-dejavu-core); CSV and Markdown are written anyway"
                .into(),
        );
    }
    let svg = base.with_extension("svg");
    let png = base.with_extension("png");
    {
        let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present()?;
    }
    {
        let root = BitMapBackend::new(&png, SIZE).into_drawing_area();
        draw(&root, chart)?;
        root.present()?;
    }
    Ok(vec![svg, png])
}

fn color(i: usize) -> RGBColor {
    COLORS[i % COLORS.len()]
}

fn finite_max(xs: impl Iterator<Item = f64>) -> f64 {
    xs.filter(|x| x.is_finite()).fold(0.0, f64::max)
}

fn finite_min_pos(xs: impl Iterator<Item = f64>) -> f64 {
    xs.filter(|x| x.is_finite() && *x > 0.0)
        .fold(f64::INFINITY, f64::min)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    match chart {
        Chart::Bars {
            title,
            x_label,
            y_label,
            groups,
            series,
            log_y,
        } => draw_bars(root, title, x_label, y_label, groups, series, *log_y),
        Chart::Stacked {
            title,
            x_label,
            y_label,
            groups,
            bars,
            parts,
            values,
            line,
        } => draw_stacked(
            root,
            StackedSpec {
                title,
                x_label,
                y_label,
                groups,
                bars,
                parts,
                values,
                line: line.as_ref(),
            },
        ),
        Chart::Lines {
            title,
            x_label,
            y_label,
            x,
            series,
            log_x,
            log_y,
        } => draw_lines(root, title, x_label, y_label, x, series, *log_x, *log_y),
    }
}

/// X range of `n` categorical groups centred at 0, 1, … n−1.
fn group_axis(n: usize) -> std::ops::Range<f64> {
    -0.5..n as f64 - 0.5
}

/// Draws the group labels under the x axis of `c` (whose own x labels are off).
fn draw_group_labels<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    root: &DrawingArea<DB, Shift>,
    c: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    groups: &[String],
    y0: f64,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let style =
        TextStyle::from((FONT, 14).into_font()).pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Top,
        ));
    for (i, g) in groups.iter().enumerate() {
        let (px, py) = c.backend_coord(&(i as f64, y0));
        root.draw(&Text::new(g.clone(), (px, py + 6), style.clone()))?;
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
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
    // Headroom for the legend (upper right, one line per series) above the bars.
    let top = finite_max(vals()).max(1e-12) * (1.15 + 0.05 * ns);
    let w = 0.8 / ns;
    let rect = |g: usize, s: usize, y0: f64, y1: f64| {
        let x0 = g as f64 - 0.4 + s as f64 * w;
        [(x0, y0), (x0 + w * 0.95, y1)]
    };
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70);
    if log_y {
        let bottom = finite_min_pos(vals()).min(top) / 2.0;
        let c = builder.build_cartesian_2d(xr, (bottom..top * 2.0).log_scale())?;
        fill_bars(
            root,
            c,
            (x_label, y_label),
            groups,
            series,
            (bottom, true),
            rect,
        )
    } else {
        let c = builder.build_cartesian_2d(xr, 0.0..top)?;
        fill_bars(
            root,
            c,
            (x_label, y_label),
            groups,
            series,
            (0.0, false),
            rect,
        )
    }
}

/// Draws the mesh, one bar per group and series from `bottom` (values that
/// the y axis cannot show — not finite, or not positive on a log axis — are
/// left out), the legend and the group labels.
fn fill_bars<'a, DB: DrawingBackend + 'a, Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    root: &DrawingArea<DB, Shift>,
    mut c: ChartContext<'a, DB, Cartesian2d<RangedCoordf64, Y>>,
    (x_label, y_label): (&str, &str),
    groups: &[String],
    series: &[(String, Vec<f64>)],
    (bottom, log_y): (f64, bool),
    rect: impl Fn(usize, usize, f64, f64) -> [(f64, f64); 2],
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style((FONT, 14))
        .draw()?;
    for (s, (name, v)) in series.iter().enumerate() {
        let col = color(s);
        c.draw_series(
            v.iter()
                .enumerate()
                .filter(|(_, y)| y.is_finite() && (!log_y || **y > 0.0))
                .map(|(g, y)| Rectangle::new(rect(g, s, bottom, *y), col.filled())),
        )?
        .label(name)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    draw_group_labels(root, &c, groups, bottom)?;
    Ok(())
}

struct StackedSpec<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    groups: &'a [String],
    bars: &'a [String],
    parts: &'a [String],
    values: &'a [Vec<Vec<f64>>],
    line: Option<&'a (String, Vec<f64>, String)>,
}

fn draw_stacked<DB: DrawingBackend>(
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
    let top = finite_max(totals).max(1e-12) * 1.18;
    let nb = s.bars.len().max(1) as f64;
    let w = 0.8 / nb;
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(s.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .right_y_label_area_size(if s.line.is_some() { 70 } else { 0 });
    // The secondary range must be set before the mesh is drawn, or the
    // primary labels are drawn on the right axis too.
    let (lo2, hi2) = match s.line {
        Some((_, ys, _)) => {
            let finite = || ys.iter().copied().filter(|y| y.is_finite());
            let hi = finite_max(finite()).max(0.0);
            let lo = finite().fold(0.0, f64::min);
            let pad = ((hi - lo) * 0.15).max(1.0);
            (lo - pad, hi + pad)
        }
        None => (0.0, 1.0),
    };
    let mut c = builder
        .build_cartesian_2d(xr.clone(), 0.0..top)?
        .set_secondary_coord(xr, lo2..hi2);
    draw_group_labels(root, &c, s.groups, 0.0)?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(s.x_label)
        .y_desc(s.y_label)
        .label_style((FONT, 14))
        .draw()?;
    for (p, name) in s.parts.iter().enumerate() {
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
        c.draw_series(rects)?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], col.filled()));
    }
    // Bar names above each bar.
    let mut tags = Vec::new();
    for (g, bars) in s.values.iter().enumerate() {
        for (b, parts) in bars.iter().enumerate() {
            let total: f64 = parts.iter().filter(|v| v.is_finite()).sum();
            let x = g as f64 - 0.4 + (b as f64 + 0.2) * w;
            let name = s.bars.get(b).cloned().unwrap_or_default();
            tags.push(Text::new(name, (x, total + top * 0.01), (FONT, 12)));
        }
    }
    c.draw_series(tags)?;
    if let Some((name, ys, desc)) = s.line {
        let c2 = &mut c;
        c2.configure_secondary_axes()
            .y_desc(desc.as_str())
            .label_style((FONT, 14))
            .draw()?;
        let pts: Vec<(f64, f64)> = ys
            .iter()
            .enumerate()
            .filter(|(_, y)| y.is_finite())
            .map(|(i, y)| (i as f64, *y))
            .collect();
        c2.draw_secondary_series(LineSeries::new(pts.clone(), BLACK.stroke_width(2)))?
            .label(name.as_str())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK.stroke_width(2)));
        c2.draw_secondary_series(pts.iter().map(|p| Circle::new(*p, 4, BLACK.filled())))?;
        c2.configure_series_labels()
            .label_font((FONT, 14))
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    } else {
        c.configure_series_labels()
            .label_font((FONT, 14))
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn draw_lines<DB: DrawingBackend>(
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
    let ys = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let ymax = finite_max(ys()).max(1e-12);
    let ymin_all = ys().filter(|y| y.is_finite()).fold(0.0, f64::min);
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(title, (FONT, 22))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70);
    let pts = |v: &[f64]| -> Vec<(f64, f64)> {
        x.iter()
            .zip(v)
            .filter(|(_, y)| y.is_finite() && (!log_y || **y > 0.0))
            .map(|(a, b)| (*a, *b))
            .collect()
    };
    macro_rules! body {
        ($c:ident) => {{
            for (s, (name, v)) in series.iter().enumerate() {
                let col = color(s);
                let p = pts(v);
                $c.draw_series(LineSeries::new(p.clone(), col.stroke_width(2)))?
                    .label(name.as_str())
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 14, y)], col.stroke_width(2))
                    });
                $c.draw_series(p.iter().map(|q| Circle::new(*q, 3, col.filled())))?;
            }
            $c.configure_series_labels()
                .label_font((FONT, 14))
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()?;
        }};
    }
    let xfmt = |v: &f64| {
        if log_x {
            if (v - v.round()).abs() < 1e-6 {
                format!("{:.0}", 2f64.powf(v.round()))
            } else {
                String::new()
            }
        } else if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let nx = if log_x {
        (xmax - xmin).round() as usize + 1
    } else {
        x.len().clamp(2, 12)
    };
    if log_y {
        let lo = finite_min_pos(ys()).min(ymax) / 1.5;
        let mut c = builder.build_cartesian_2d(xmin..xmax, (lo..ymax * 1.5).log_scale())?;
        c.configure_mesh()
            .x_labels(nx)
            .x_label_formatter(&xfmt)
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FONT, 14))
            .draw()?;
        body!(c);
    } else {
        let mut c = builder.build_cartesian_2d(xmin..xmax, ymin_all.min(0.0)..ymax * 1.15)?;
        c.configure_mesh()
            .x_labels(nx)
            .x_label_formatter(&xfmt)
            .x_desc(x_label)
            .y_desc(y_label)
            .label_style((FONT, 14))
            .draw()?;
        body!(c);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_every_chart_kind() {
        if !font_available() {
            eprintln!("no font: plot test skipped");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let g = vec!["8".to_string(), "16".to_string()];
        let charts = [
            Chart::Bars {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                groups: g.clone(),
                series: vec![
                    ("a".into(), vec![1.0, 2.0]),
                    ("b".into(), vec![3.0, f64::NAN]),
                ],
                log_y: true,
            },
            Chart::Stacked {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                groups: g.clone(),
                bars: vec!["F".into(), "L".into()],
                parts: vec!["hash".into(), "other".into()],
                values: vec![vec![vec![1.0, 2.0], vec![0.5, 2.0]]; 2],
                line: Some(("gain".into(), vec![10.0, 20.0], "%".into())),
            },
            Chart::Lines {
                title: "t".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                x: vec![8.0, 16.0, 32.0],
                series: vec![("a".into(), vec![1.0, 2.0, 4.0])],
                log_x: true,
                log_y: false,
            },
        ];
        for (i, c) in charts.iter().enumerate() {
            let files = render(c, &dir.path().join(format!("c{i}"))).unwrap();
            assert_eq!(files.len(), 2);
            for f in files {
                assert!(
                    std::fs::metadata(&f).unwrap().len() > 100,
                    "{}",
                    f.display()
                );
            }
        }
    }
}
