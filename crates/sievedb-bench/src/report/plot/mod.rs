//! Plots of the experiments, drawn with `plotters` into an SVG and a PNG.
//!
//! Text in PNGs is rasterised with `ab_glyph` from a TrueType font found at
//! run time ([`font_available`]): `$SIEVEDB_PLOT_FONT`, DejaVu Sans or
//! Liberation Sans in the usual places, or any `.ttf` under
//! `/usr/share/fonts` (Debian: `apt-get install fonts-dejavu-core`). Without
//! a font no plot is drawn (plotters needs one to lay out text even in SVG);
//! the CSV and the Markdown are still written.
//!
//! This file holds the [`Chart`] kinds, the font lookup and [`render`];
//! `layout.rs` the title, legend and label layout; `charts.rs` the drawing of
//! each chart kind.

mod charts;
mod layout;

use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use charts::{draw_bars, draw_lines, draw_stacked, StackedSpec};

/// Font family name the plots use (registered from the font file found).
const FONT: &str = "sans-serif";

/// Pixel size of every plot.
const SIZE: (u32, u32) = (960, 560);

/// Fixed colours: series in order, and the five breakdown phases. Ten, so
/// that Table 1's six columns, two baselines and two paper series never
/// share one.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
    RGBColor(127, 127, 127),
    RGBColor(227, 119, 194),
    RGBColor(188, 189, 34),
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
        /// `(low, high)` per group around the line (a whisker; the
        /// run-to-run spread); empty for none.
        line_spread: Vec<(f64, f64)>,
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
            line_spread,
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
                line_spread,
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
                line_spread: vec![(5.0, 12.0), (f64::NAN, f64::NAN)],
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
