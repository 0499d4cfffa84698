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

/// Margin around the plot, pixels.
const MARGIN: u32 = 12;
/// Width of the y label area(s), pixels.
const Y_AREA: u32 = 80;
/// Font size of tick labels, group labels and legend entries.
const LABEL_PX: u32 = 15;
/// Font size of the labels printed on bars.
const BAR_LABEL_PX: u32 = 14;
/// Height of the title band, pixels.
const TITLE_H: u32 = 36;
/// Height of one legend row, pixels.
const LEGEND_ROW_H: u32 = 22;

/// How a legend entry is marked.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Swatch {
    /// A filled square (bars).
    Box,
    /// A short line with a dot (lines).
    Line,
}

/// One legend entry: name, colour and mark.
struct LegendItem {
    name: String,
    color: RGBColor,
    swatch: Swatch,
}

fn label_style(px: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, px).into_font())
}

/// Width in pixels of `text` at `px` (a rough guess if the backend cannot tell).
fn text_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, text: &str, px: u32) -> u32 {
    area.estimate_text_size(text, &label_style(px))
        .map(|(w, _)| w)
        .unwrap_or((text.chars().count() as u32) * px * 6 / 10)
}

/// Lays out the legend entries in rows no wider than `width`: the entries'
/// indices per row (every entry appears once, in order).
fn legend_rows<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[LegendItem],
    width: u32,
) -> Vec<Vec<usize>> {
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = 0;
    for (i, it) in items.iter().enumerate() {
        let w = legend_item_width(area, it);
        match rows.last_mut() {
            Some(row) if used + w <= width => {
                row.push(i);
                used += w;
            }
            _ => {
                rows.push(vec![i]);
                used = w;
            }
        }
    }
    rows
}

fn legend_item_width<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, it: &LegendItem) -> u32 {
    // swatch 16 + gap 6 + text + gap 22 before the next entry.
    16 + 6 + text_width(area, &it.name, LABEL_PX) + 22
}

/// Draws the title and the legend in a band above the plot (so the legend
/// never covers data) and returns the area left for the chart.
fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    items: &[LegendItem],
) -> Result<DrawingArea<DB, Shift>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let (w, _) = root.dim_in_pixel();
    let rows = legend_rows(root, items, w.saturating_sub(2 * MARGIN));
    let band = TITLE_H + rows.len() as u32 * LEGEND_ROW_H + if rows.is_empty() { 0 } else { 4 };
    let (top, rest) = root.split_vertically(band);
    let centre = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Center,
    );
    top.draw(&Text::new(
        title.to_string(),
        ((w / 2) as i32, (TITLE_H / 2) as i32),
        TextStyle::from((FONT, 22).into_font()).pos(centre),
    ))?;
    let left = plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Left,
        plotters::style::text_anchor::VPos::Center,
    );
    for (r, row) in rows.iter().enumerate() {
        let row_w: u32 = row
            .iter()
            .map(|i| legend_item_width(root, &items[*i]))
            .sum();
        let mut x = (w.saturating_sub(row_w) / 2) as i32;
        let y = (TITLE_H + r as u32 * LEGEND_ROW_H + LEGEND_ROW_H / 2) as i32;
        for &i in row {
            let it = &items[i];
            match it.swatch {
                Swatch::Box => {
                    top.draw(&Rectangle::new(
                        [(x, y - 6), (x + 14, y + 6)],
                        it.color.filled(),
                    ))?;
                }
                Swatch::Line => {
                    top.draw(&PathElement::new(
                        vec![(x, y), (x + 16, y)],
                        it.color.stroke_width(2),
                    ))?;
                    top.draw(&Circle::new((x + 8, y), 3, it.color.filled()))?;
                }
            }
            top.draw(&Text::new(
                it.name.clone(),
                (x + 22, y),
                label_style(LABEL_PX).pos(left),
            ))?;
            x += legend_item_width(root, it) as i32;
        }
    }
    Ok(rest)
}

/// Legend entries of `names` with the series colours, marked by `swatch`.
fn series_items<'a>(names: impl Iterator<Item = &'a String>, swatch: Swatch) -> Vec<LegendItem> {
    names
        .enumerate()
        .map(|(i, n)| LegendItem {
            name: n.clone(),
            color: color(i),
            swatch,
        })
        .collect()
}

/// Splits `label` into lines no wider than `width` pixels at `px` (greedy,
/// at spaces; a single word wider than `width` keeps its own line).
fn wrap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    label: &str,
    width: u32,
    px: u32,
) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in label.split_whitespace() {
        match lines.last_mut() {
            Some(line) if text_width(area, &format!("{line} {word}"), px) <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// The group labels wrapped to the width of a group: the font size that
/// fits every word (down to 10 px) and the lines of each label.
fn group_label_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    groups: &[String],
    plot_width: u32,
) -> (u32, Vec<Vec<String>>) {
    let slot = (plot_width / groups.len().max(1) as u32)
        .saturating_sub(6)
        .max(20);
    let mut px = LABEL_PX;
    loop {
        let lines: Vec<Vec<String>> = groups.iter().map(|g| wrap(root, g, slot, px)).collect();
        let fits = lines
            .iter()
            .flatten()
            .all(|l| text_width(root, l, px) <= slot);
        if fits || px <= 10 {
            return (px, lines);
        }
        px -= 1;
    }
}

/// Height of the x label area for `n_lines` lines of group labels at `px`
/// plus the axis description below them.
fn x_area_for(n_lines: usize, px: u32) -> u32 {
    10 + n_lines.max(1) as u32 * (px + 3) + 28
}

/// Draws the (wrapped) group labels under the x axis of `c` (whose own x
/// labels are off).
fn draw_group_labels<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
    root: &DrawingArea<DB, Shift>,
    c: &ChartContext<'_, DB, Cartesian2d<RangedCoordf64, Y>>,
    (px, lines): &(u32, Vec<Vec<String>>),
    y0: f64,
) -> Result<(), Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let style = label_style(*px).pos(plotters::style::text_anchor::Pos::new(
        plotters::style::text_anchor::HPos::Center,
        plotters::style::text_anchor::VPos::Top,
    ));
    let bottom = c.plotting_area().get_pixel_range().1.end;
    for (i, g) in lines.iter().enumerate() {
        let (gx, _) = c.backend_coord(&(i as f64, y0));
        for (l, line) in g.iter().enumerate() {
            let y = bottom + 6 + l as i32 * (*px as i32 + 3);
            root.draw(&Text::new(line.clone(), (gx, y), style.clone()))?;
        }
    }
    Ok(())
}

/// A tick or bar label: no needless decimals, thousands as `k` from 10 000.
fn num_label(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        String::new()
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Plot width estimate (for wrapping labels before the chart exists).
fn plot_width(root_w: u32, right_area: u32) -> u32 {
    root_w.saturating_sub(2 * MARGIN + Y_AREA + right_area)
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

struct StackedSpec<'a> {
    title: &'a str,
    x_label: &'a str,
    y_label: &'a str,
    groups: &'a [String],
    bars: &'a [String],
    parts: &'a [String],
    values: &'a [Vec<Vec<f64>>],
    line: Option<&'a (String, Vec<f64>, String)>,
    line_spread: &'a [(f64, f64)],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_labelled_without_needless_decimals() {
        assert_eq!(num_label(35000.0), "35k");
        assert_eq!(num_label(2_500_000.0), "2.5M");
        assert_eq!(num_label(3000.0), "3000");
        assert_eq!(num_label(0.0), "0");
        assert_eq!(num_label(12.34), "12.3");
        assert_eq!(num_label(0.8), "0.8");
        assert_eq!(num_label(0.853), "0.853");
        assert_eq!(num_label(-19.5), "-19.5");
        assert_eq!(num_label(f64::NAN), "");
    }

    #[test]
    fn legend_and_labels_get_their_own_room() {
        if !font_available() {
            eprintln!("no font: plot layout test skipped");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.png");
        let root = BitMapBackend::new(&path, SIZE).into_drawing_area();
        let items: Vec<LegendItem> = (0..8)
            .map(|i| LegendItem {
                name: format!("a rather long series name {i}"),
                color: color(i),
                swatch: Swatch::Box,
            })
            .collect();
        // Every entry is laid out once, in rows that fit the width.
        let rows = legend_rows(&root, &items, SIZE.0 - 2 * MARGIN);
        assert!(rows.len() > 1);
        assert_eq!(rows.concat(), (0..8).collect::<Vec<_>>());
        for row in &rows {
            let w: u32 = row
                .iter()
                .map(|i| legend_item_width(&root, &items[*i]))
                .sum();
            assert!(w <= SIZE.0 - 2 * MARGIN || row.len() == 1, "{w}");
        }
        // The chart area starts below the title and every legend row.
        let rest = header(&root, "title", &items).unwrap();
        let band = TITLE_H + rows.len() as u32 * LEGEND_ROW_H;
        assert!(rest.get_base_pixel().1 >= band as i32);
        // Long group names are wrapped into lines no wider than a group.
        let groups = vec![
            "6 units × 2 bits/key (12 on disk), no budget".to_string(),
            "All k".to_string(),
            "x".to_string(),
            "y".to_string(),
        ];
        let width = plot_width(SIZE.0, 0);
        let (px, lines) = group_label_lines(&root, &groups, width);
        assert!(lines[0].len() > 1, "{lines:?}");
        assert_eq!(lines[1], vec!["All k".to_string()]);
        for l in lines.iter().flatten() {
            assert!(text_width(&root, l, px) <= width / 4, "{l}");
        }
    }

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
