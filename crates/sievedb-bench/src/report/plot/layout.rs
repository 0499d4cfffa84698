//! Layout of a plot: the title band, the legend rows, group labels wrapped to
//! their width, and the number format of labels.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::error::Error;

use super::{color, FONT};

/// Margin around the plot, pixels.
pub(crate) const MARGIN: u32 = 12;
/// Width of the y label area(s), pixels.
pub(crate) const Y_AREA: u32 = 80;
/// Font size of tick labels, group labels and legend entries.
pub(crate) const LABEL_PX: u32 = 15;
/// Font size of the labels printed on bars.
pub(crate) const BAR_LABEL_PX: u32 = 14;
/// Height of the title band, pixels.
const TITLE_H: u32 = 36;
/// Height of one legend row, pixels.
const LEGEND_ROW_H: u32 = 22;

/// How a legend entry is marked.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Swatch {
    /// A filled square (bars).
    Box,
    /// A short line with a dot (lines).
    Line,
}

/// One legend entry: name, colour and mark.
pub(crate) struct LegendItem {
    pub(crate) name: String,
    pub(crate) color: RGBColor,
    pub(crate) swatch: Swatch,
}

pub(crate) fn label_style(px: u32) -> TextStyle<'static> {
    TextStyle::from((FONT, px).into_font())
}

/// Width in pixels of `text` at `px` (a rough guess if the backend cannot tell).
pub(crate) fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    px: u32,
) -> u32 {
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
#[expect(
    clippy::cast_possible_wrap,
    reason = "pixel sizes and coordinates of a plot are far below i32::MAX"
)]
pub(crate) fn header<DB: DrawingBackend>(
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
pub(crate) fn series_items<'a>(
    names: impl Iterator<Item = &'a String>,
    swatch: Swatch,
) -> Vec<LegendItem> {
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
pub(crate) fn group_label_lines<DB: DrawingBackend>(
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
pub(crate) fn x_area_for(n_lines: usize, px: u32) -> u32 {
    10 + n_lines.max(1) as u32 * (px + 3) + 28
}

/// Draws the (wrapped) group labels under the x axis of `c` (whose own x
/// labels are off).
pub(crate) fn draw_group_labels<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
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
            #[expect(
                clippy::cast_possible_wrap,
                reason = "pixel sizes and coordinates of a plot are far below i32::MAX"
            )]
            let y = bottom + 6 + l as i32 * (*px as i32 + 3);
            root.draw(&Text::new(line.clone(), (gx, y), style.clone()))?;
        }
    }
    Ok(())
}

/// A tick or bar label: no needless decimals, thousands as `k` from 10 000.
pub(crate) fn num_label(v: f64) -> String {
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
    } else if a < 0.001 {
        // Small rates on a log axis: 0.0001 would print as 0 below.
        format!("{v:.0e}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Plot width estimate (for wrapping labels before the chart exists).
pub(crate) fn plot_width(root_w: u32, right_area: u32) -> u32 {
    root_w.saturating_sub(2 * MARGIN + Y_AREA + right_area)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::plot::{font_available, SIZE};

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
        assert_eq!(num_label(0.0001), "1e-4");
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
        assert!(rest.get_base_pixel().1 >= i32::try_from(band).unwrap());
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
}
