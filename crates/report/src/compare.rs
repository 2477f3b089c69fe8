//! Several results side by side, mmtests style: each figure's value in the baseline (the
//! first result) and, for every other result, its value and change against the baseline.
//!
//! ```text
//! figure         legacy  refault-cost   change
//! ops/s pgbench   80.65        104.99  +30.18%
//! ```
//!
//! Rows, in this order:
//! 1. per task (in order of first appearance, baseline first): `ops/s <task>`,
//!    `latency_mean_us <task>`, `latency_p99_us <task>`;
//! 2. `sim_seconds`;
//! 3. every vmstat counter that is non-zero in at least one result, in the report order of
//!    [`crate::vmstat`]. A counter a result does not have counts as 0 there.
//!
//! A task or `sim_seconds` a result does not have is missing: NaN in [`Row::values`] (`null`
//! in JSON, `-` in text) and `n/a` as a change.

use serde::Serialize;
use serde_json::Value;

use crate::format::{format_percent, format_value, percent_change};
use crate::result::{is_nonzero, num, task_labels, tasks, vmstat};
use crate::text::{render, Align};
use crate::vmstat::cmp_counters;

/// A comparison of several results; serialises as `{names, rows: [{figure, values, percent}]}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// The result labels, baseline first; column headers in text.
    pub names: Vec<String>,
    pub rows: Vec<Row>,
}

/// One figure across the results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `ops/s <task>`, `latency_mean_us <task>`, `latency_p99_us <task>`, `sim_seconds` or a
    /// vmstat counter name.
    pub figure: String,
    /// One value per result, in the order of [`Table::names`]; NaN (JSON `null`) when missing.
    pub values: Vec<f64>,
    /// `percent[i]`: change of `values[i]` against `values[0]`, as [`percent_change`]
    /// computes it, so `percent[0]` is 0 (or `None` if the baseline lacks the figure).
    pub percent: Vec<Option<f64>>,
}

impl Row {
    fn new(figure: String, values: Vec<f64>) -> Self {
        let base = values.first().copied().unwrap_or(f64::NAN);
        let percent = values.iter().map(|&v| percent_change(base, v)).collect();
        Self {
            figure,
            values,
            percent,
        }
    }
}

/// Compares `results` (label, result JSON) against the first one. An empty slice gives an
/// empty table.
pub fn compare(results: &[(String, Value)]) -> Table {
    if results.is_empty() {
        return Table {
            names: Vec::new(),
            rows: Vec::new(),
        };
    }
    let names = results.iter().map(|(n, _)| n.clone()).collect();
    let mut rows = Vec::new();

    // Tasks, matched across results by label.
    let per_result: Vec<Vec<(String, &Value)>> = results
        .iter()
        .map(|(_, r)| {
            let tasks = tasks(r);
            task_labels(tasks).into_iter().zip(tasks).collect()
        })
        .collect();
    let mut labels: Vec<&str> = Vec::new();
    for ts in &per_result {
        for (label, _) in ts {
            if !labels.contains(&label.as_str()) {
                labels.push(label);
            }
        }
    }
    for label in labels {
        let figure = |f: fn(&Value) -> f64| task_figure(&per_result, label, f);
        rows.push(Row::new(
            format!("ops/s {label}"),
            figure(|t| num(t.get("ops_per_sec"))),
        ));
        rows.push(Row::new(
            format!("latency_mean_us {label}"),
            figure(|t| num(t["latency_us"].get("mean"))),
        ));
        rows.push(Row::new(
            format!("latency_p99_us {label}"),
            figure(|t| num(t["latency_us"].get("p99"))),
        ));
    }

    rows.push(Row::new(
        "sim_seconds".to_string(),
        results
            .iter()
            .map(|(_, r)| num(r.get("sim_seconds")))
            .collect(),
    ));

    // Counters non-zero somewhere, in report order.
    let mut counters: Vec<&str> = Vec::new();
    for (_, r) in results {
        for (name, v) in vmstat(r) {
            if is_nonzero(v) && !counters.contains(&name) {
                counters.push(name);
            }
        }
    }
    counters.sort_by(|a, b| cmp_counters(a, b));
    for name in counters {
        let values = results
            .iter()
            .map(|(_, r)| r["vmstat"].get(name).map_or(0.0, |v| num(Some(v))))
            .collect();
        rows.push(Row::new(name.to_string(), values));
    }

    Table { names, rows }
}

/// One figure of the task labelled `label` in each result; NaN where it has no such task.
fn task_figure(
    per_result: &[Vec<(String, &Value)>],
    label: &str,
    f: fn(&Value) -> f64,
) -> Vec<f64> {
    per_result
        .iter()
        .map(|ts| {
            ts.iter()
                .find(|(l, _)| l == label)
                .map_or(f64::NAN, |(_, t)| f(t))
        })
        .collect()
}

impl Table {
    /// Fixed-width text: `figure`, the baseline's value, then value and change for each other
    /// result. Numbers are right-aligned; widths fit the widest cell of each column.
    pub fn render_text(&self) -> String {
        let mut header = vec!["figure".to_string()];
        let mut align = vec![Align::Left];
        for (i, name) in self.names.iter().enumerate() {
            header.push(name.clone());
            align.push(Align::Right);
            if i > 0 {
                header.push("change".to_string());
                align.push(Align::Right);
            }
        }
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|row| {
                let mut cells = vec![row.figure.clone()];
                for (i, &v) in row.values.iter().enumerate() {
                    cells.push(format_value(v));
                    if i > 0 {
                        cells.push(format_percent(row.percent.get(i).copied().flatten()));
                    }
                }
                cells
            })
            .collect();
        render(Some(&header), &rows, &align, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn legacy() -> Value {
        json!({
            "scenario": {"name": "s0"},
            "vmstat": {
                "pgscan_kswapd": 6579, "pswpout": 3149, "pgfault": 100,
                "workingset_refault_file": 222486, "compact_stall": 0,
                "pgmajfault": 0, "nr_free_pages": 0
            },
            "tasks": [{"name": "pgbench", "ops": 4839, "ops_per_sec": 80.65,
                       "latency_us": {"mean": 99.2, "p50": 90, "p90": 120, "p99": 250,
                                      "p999": 400, "max": 1000}}],
            "sim_seconds": 60.0, "wall_seconds": 1.0, "events": 10
        })
    }

    fn refault_cost() -> Value {
        json!({
            "scenario": {"name": "s0"},
            "vmstat": {
                "pgscan_kswapd": 201845, "pswpout": 86932, "pgfault": 100,
                "workingset_refault_file": 101041, "compact_stall": 5,
                "pgmajfault": 0
            },
            "tasks": [{"name": "pgbench", "ops": 6299, "ops_per_sec": 104.99,
                       "latency_us": {"mean": 76.2, "p50": 70, "p90": 100, "p99": 250,
                                      "p999": 400, "max": 900}},
                      {"name": "cp", "ops": 10, "ops_per_sec": 0.5,
                       "latency_us": {"mean": 1, "p50": 1, "p90": 1, "p99": 1,
                                      "p999": 1, "max": 1}}],
            "sim_seconds": 60.0, "wall_seconds": 1.0, "events": 10
        })
    }

    fn table() -> Table {
        compare(&[
            ("legacy".to_string(), legacy()),
            ("refault-cost".to_string(), refault_cost()),
        ])
    }

    #[test]
    fn two_results_render_as_an_mmtests_table() {
        let expected = "\
figure                   legacy  refault-cost     change
ops/s pgbench             80.65        104.99    +30.18%
latency_mean_us pgbench    99.2          76.2    -23.19%
latency_p99_us pgbench      250           250      0.00%
ops/s cp                      -           0.5        n/a
latency_mean_us cp            -             1        n/a
latency_p99_us cp             -             1        n/a
sim_seconds                  60            60      0.00%
pgscan_kswapd              6579        201845  +2968.02%
workingset_refault_file  222486        101041    -54.59%
pswpout                    3149         86932  +2660.62%
pgfault                     100           100      0.00%
compact_stall                 0             5        n/a
";
        assert_eq!(table().render_text(), expected);
    }

    #[test]
    fn three_results_get_a_change_column_each() {
        let mut third = legacy();
        third["sim_seconds"] = json!(30.0);
        let t = compare(&[
            ("a".to_string(), legacy()),
            ("b".to_string(), legacy()),
            ("c".to_string(), third),
        ]);
        let text = t.render_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "figure                        a       b  change       c   change"
        );
        assert_eq!(
            lines[4],
            "sim_seconds                  60      60   0.00%      30  -50.00%"
        );
    }

    #[test]
    fn json_has_figure_values_and_percent_per_row() {
        let v = serde_json::to_value(table()).unwrap();
        assert_eq!(v["names"], json!(["legacy", "refault-cost"]));
        assert_eq!(
            v["rows"][0],
            json!({"figure": "ops/s pgbench", "values": [80.65, 104.99],
                   "percent": [0.0, (104.99 - 80.65) / 80.65 * 100.0]})
        );
        // Missing values are null; so is a change against a missing or zero baseline.
        assert_eq!(
            v["rows"][3],
            json!({"figure": "ops/s cp", "values": [null, 0.5], "percent": [null, null]})
        );
        let last = &v["rows"][v["rows"].as_array().unwrap().len() - 1];
        assert_eq!(
            *last,
            json!({"figure": "compact_stall", "values": [0.0, 5.0], "percent": [0.0, null]})
        );
    }

    #[test]
    fn counters_zero_everywhere_are_left_out() {
        let t = table();
        let figures: Vec<&str> = t.rows.iter().map(|r| r.figure.as_str()).collect();
        assert!(!figures.contains(&"pgmajfault"));
        assert!(!figures.contains(&"nr_free_pages"));
    }

    #[test]
    fn empty_input_gives_an_empty_table() {
        let t = compare(&[]);
        assert!(t.names.is_empty());
        assert!(t.rows.is_empty());
        assert_eq!(t.render_text(), "figure\n");
    }
}
