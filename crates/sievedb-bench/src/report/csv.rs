//! The experiments' CSV tables ([`Table`]): written, read back, and turned
//! into JSON lines.

use serde_json::{json, Value};
use sievedb::io::with_path;
use std::path::Path;

/// A CSV table of measured points.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows (as many cells as columns).
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these columns.
    pub fn new(cols: &[&str]) -> Self {
        Table {
            header: cols.iter().map(|c| c.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.header.len(), "{:?}", self.header);
        self.rows.push(row);
    }

    /// Index of column `name`.
    pub fn col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }

    /// Writes the table as CSV.
    pub fn write_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut s = String::new();
        let line = |cells: &[String]| -> String {
            cells
                .iter()
                .map(|c| {
                    if c.contains([',', '"', '\n']) {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        s.push_str(&line(&self.header));
        s.push('\n');
        for r in &self.rows {
            s.push_str(&line(r));
            s.push('\n');
        }
        std::fs::write(path, s).map_err(|e| with_path(e, path))
    }

    /// Reads a CSV written by [`Table::write_csv`].
    pub fn read_csv(path: &Path) -> std::io::Result<Table> {
        let text = std::fs::read_to_string(path)?;
        let mut lines = text.lines().map(split_csv_line);
        let header = lines.next().unwrap_or_default();
        Ok(Table {
            header,
            rows: lines.collect(),
        })
    }

    /// One JSON object per row (numbers where a cell parses as one).
    pub fn json_lines(&self, experiment: &str, table: &str) -> Vec<Value> {
        self.rows
            .iter()
            .map(|r| {
                let mut m = serde_json::Map::new();
                m.insert("experiment".into(), json!(experiment));
                m.insert("table".into(), json!(table));
                for (h, c) in self.header.iter().zip(r) {
                    let v = match c.parse::<f64>() {
                        Ok(x) if x.is_finite() => json!(x),
                        _ => json!(c),
                    };
                    m.insert(h.clone(), v);
                }
                Value::Object(m)
            })
            .collect()
    }
}

fn split_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::new(&["a", "b"]);
        t.push(vec!["1".into(), "x,\"y\"".into()]);
        let p = dir.path().join("t.csv");
        t.write_csv(&p).unwrap();
        assert_eq!(Table::read_csv(&p).unwrap(), t);
        let j = t.json_lines("e", "t");
        assert_eq!(j[0]["a"], 1.0);
        assert_eq!(j[0]["b"], "x,\"y\"");
    }
}
