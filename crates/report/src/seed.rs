//! The table `refault reproduce` prints: one source document's figures under the baseline
//! policy and under the changed one, in the style of SEED-RESULTS.md.
//!
//! ```text
//! S0: refault-cost LRU balancing (pgbench, quick)
//! figure        legacy  refault-cost   change
//! tps            80.65        104.99  +30.18%
//! file refault  222486        101041  -54.59%
//! ```
//!
//! In the command's JSON, `table` is the array of [`SeedRow`]s:
//! `[{"figure": "tps", "baseline": 80.65, "change": 104.99, "percent": 30.18..}, ..]`.

use serde::{Deserialize, Serialize};

use crate::format::{format_percent, format_value, percent_change};
use crate::text::{render, Align};

/// One figure of a reproduction: its value under the baseline policy and under the change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedRow {
    pub figure: String,
    /// Value under the baseline policy (e.g. `legacy`).
    pub baseline: f64,
    /// Value under the changed policy (e.g. `refault-cost`).
    pub change: f64,
    /// `percent_change(baseline, change)`; `None` when the baseline is 0 and the change not.
    pub percent: Option<f64>,
}

impl SeedRow {
    /// A row with `percent` computed by [`percent_change`].
    pub fn new(figure: impl Into<String>, baseline: f64, change: f64) -> Self {
        Self {
            figure: figure.into(),
            baseline,
            change,
            percent: percent_change(baseline, change),
        }
    }
}

/// `title` on its own line, then the columns `figure`, `columns.0` (baseline), `columns.1`
/// (change) and `change` (percent), numbers right-aligned.
pub fn render_seed_table(title: &str, columns: (&str, &str), rows: &[SeedRow]) -> String {
    let header = vec![
        "figure".to_string(),
        columns.0.to_string(),
        columns.1.to_string(),
        "change".to_string(),
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.figure.clone(),
                format_value(r.baseline),
                format_value(r.change),
                format_percent(r.percent),
            ]
        })
        .collect();
    let align = [Align::Left, Align::Right, Align::Right, Align::Right];
    format!("{title}\n{}", render(Some(&header), &cells, &align, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_title_header_and_rows() {
        let rows = [
            SeedRow::new("tps", 80.65, 104.99),
            SeedRow::new("latency average ms", 99.2, 76.2),
            SeedRow::new("anon scanned", 6579.0, 201_845.0),
            SeedRow::new("compact stall", 0.0, 3.0),
        ];
        let text = render_seed_table(
            "S0: refault-cost LRU balancing",
            ("legacy", "refault-cost"),
            &rows,
        );
        let expected = "\
S0: refault-cost LRU balancing
figure              legacy  refault-cost     change
tps                  80.65        104.99    +30.18%
latency average ms    99.2          76.2    -23.19%
anon scanned          6579        201845  +2968.02%
compact stall            0             3        n/a
";
        assert_eq!(text, expected);
    }

    #[test]
    fn json_shape_is_figure_baseline_change_percent() {
        let v = serde_json::to_value([
            SeedRow::new("swap in", 0.0, 0.0),
            SeedRow::new("x", 0.0, 1.0),
        ])
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!([
                {"figure": "swap in", "baseline": 0.0, "change": 0.0, "percent": 0.0},
                {"figure": "x", "baseline": 0.0, "change": 1.0, "percent": null}
            ])
        );
        let back: Vec<SeedRow> = serde_json::from_value(v).unwrap();
        assert_eq!(back[1], SeedRow::new("x", 0.0, 1.0));
    }
}
