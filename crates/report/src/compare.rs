//! Several results side by side, mmtests style: each figure's value in the baseline (the
//! first side) and, for every other side, its value and change against the baseline.
//!
//! ```text
//! figure         legacy  refault-cost   change
//! ops/s pgbench   80.65        104.99  +30.18%
//! ```
//!
//! Rows, in this order:
//! 1. per task (in order of first appearance, baseline first): `ops/s <task>`,
//!    `latency_mean_us <task>`, `latency_p99_us <task>`. The instances of a task
//!    (`reader/0`, `reader/1`, ...) are one row set, `reader`: ops/s summed, the mean latency
//!    weighted by each instance's ops, the p99 the largest instance p99 (an upper bound of
//!    the p99 over all their operations). [`Options::per_instance`] keeps one per instance;
//! 2. `sim_seconds`;
//! 3. every vmstat counter (events over the measured interval), in the report order of
//!    [`crate::vmstat`];
//! 4. the gauges (levels at the end of the run, `nr_free_pages`, ...: what
//!    `refault_mm::vmstat::is_gauge` says), in a section of their own.
//!
//! A row whose values are all zero (or missing) is left out. A task or `sim_seconds` a
//! side does not have is missing: NaN in [`Row::values`] (`null` in JSON, `-` in text) and
//! `n/a` as a change. A counter a side does not have counts as 0 there.
//!
//! Each row prints with one precision for all its cells: no decimals when every value is
//! an integer, else two. Rows where a direction is better ([`Better`]: throughput up,
//! latency and stalls/refaults/swapping down) colour their change green or red in
//! [`Table::render_text_colour`] and in the HTML report.
//!
//! **Several seeds per side** ([`compare_runs`] with more than one result in a side, as
//! `refault compare --seeds N` gives): each side's value is the arithmetic mean over its
//! runs, the row carries mmtests' statistics per side (Amean, Hmean, Stddev, CoeffVar, Min,
//! Max, as [`crate::mmtests_stats`] computes them) and, for every side after the baseline,
//! the p-value of Welch's t-test against the baseline ([`crate::welch_p`]); the text marks
//! a change significant at 5% with `*`, as mmtests marks its significant results.

use serde::Serialize;
use serde_json::Value;

use crate::format::{format_percent, percent_change};
use crate::result::{num, task_labels, tasks, vmstat};
use crate::stats::{mmtests_stats, welch_p, MmtestsStats};
use crate::text::{render, Align};
use crate::vmstat::cmp_counters;

/// A change is marked significant below this p-value.
pub const SIGNIFICANCE: f64 = 0.05;

/// A comparison of several sides; serialises as
/// `{names, seeds, rows: [{figure, kind, better, decimals, values, percent, stats?, p_value?}]}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// The side labels, baseline first; column headers in text.
    pub names: Vec<String>,
    /// Runs per side (the largest side's count; 1 for plain results).
    pub seeds: usize,
    pub rows: Vec<Row>,
}

/// What a row measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A task's throughput or latency.
    Task,
    /// A figure of the run (`sim_seconds`).
    Run,
    /// A vmstat event counter over the measured interval.
    Counter,
    /// A vmstat level at the end of the run.
    Gauge,
}

/// Which direction of change is an improvement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// One figure across the sides.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// `ops/s <task>`, `latency_mean_us <task>`, `latency_p99_us <task>`, `sim_seconds` or a
    /// vmstat name.
    pub figure: String,
    pub kind: Kind,
    /// The direction that is an improvement, where there is one.
    pub better: Option<Better>,
    /// Decimals every cell of the row is printed with (0 or 2).
    pub decimals: usize,
    /// One value per side (the mean over its runs), in the order of [`Table::names`]; NaN
    /// (JSON `null`) when missing.
    pub values: Vec<f64>,
    /// `percent[i]`: change of `values[i]` against `values[0]`, as [`percent_change`]
    /// computes it, so `percent[0]` is 0 (or `None` if the baseline lacks the figure).
    pub percent: Vec<Option<f64>>,
    /// With several runs per side: mmtests' statistics of each side's values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Vec<Option<MmtestsStats>>>,
    /// With several runs per side: Welch's p-value of each side against the baseline
    /// (`None` for the baseline and where a side has fewer than two values).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub p_value: Option<Vec<Option<f64>>>,
}

impl Row {
    /// A row from each side's values over its runs.
    fn new(figure: String, kind: Kind, samples: Vec<Vec<f64>>) -> Self {
        let values: Vec<f64> = samples
            .iter()
            .map(|xs| {
                if xs.is_empty() || xs.iter().any(|x| x.is_nan()) {
                    f64::NAN
                } else {
                    xs.iter().sum::<f64>() / xs.len() as f64
                }
            })
            .collect();
        let base = values.first().copied().unwrap_or(f64::NAN);
        let percent = values.iter().map(|&v| percent_change(base, v)).collect();
        let several = samples.iter().any(|xs| xs.len() > 1);
        let (stats, p_value) = if several {
            let stats = samples
                .iter()
                .map(|xs| {
                    if xs.iter().any(|x| x.is_nan()) {
                        None
                    } else {
                        mmtests_stats(xs)
                    }
                })
                .collect();
            let p = samples
                .iter()
                .enumerate()
                .map(|(i, xs)| {
                    if i == 0 || xs.iter().chain(&samples[0]).any(|x| x.is_nan()) {
                        None
                    } else {
                        welch_p(&samples[0], xs)
                    }
                })
                .collect();
            (Some(stats), Some(p))
        } else {
            (None, None)
        };
        let integral = values
            .iter()
            .filter(|v| v.is_finite())
            .all(|v| v.fract() == 0.0);
        Self {
            better: better(&figure, kind),
            figure,
            kind,
            decimals: if integral { 0 } else { 2 },
            values,
            percent,
            stats,
            p_value,
        }
    }

    /// Zero or missing on every side.
    fn is_empty(&self) -> bool {
        self.values.iter().all(|v| v.is_nan() || *v == 0.0)
    }

    /// Whether side `i`'s change is an improvement (Some(true)), a regression
    /// (Some(false)), or neither / no direction (None).
    pub fn improved(&self, i: usize) -> Option<bool> {
        let p = self.percent.get(i).copied().flatten()?;
        if p == 0.0 || i == 0 {
            return None;
        }
        Some(match self.better? {
            Better::Higher => p > 0.0,
            Better::Lower => p < 0.0,
        })
    }

    /// Whether side `i` differs from the baseline at the 5% level (Welch's t-test); None
    /// without several runs per side.
    pub fn significant(&self, i: usize) -> Option<bool> {
        let p = self.p_value.as_ref()?.get(i).copied().flatten()?;
        Some(p < SIGNIFICANCE)
    }
}

/// The direction that is an improvement for a figure: throughput up; latency, stalls,
/// refaults, swapping and major faults down; none for the rest.
pub fn better(figure: &str, kind: Kind) -> Option<Better> {
    if figure.starts_with("ops/s ") {
        return Some(Better::Higher);
    }
    if figure.starts_with("latency_") {
        return Some(Better::Lower);
    }
    if kind != Kind::Counter {
        return None;
    }
    const LOWER: [&str; 10] = [
        "pgscan_direct",
        "pgsteal_direct",
        "pgscan_direct_throttle",
        "pgmajfault",
        "pswpin",
        "pswpout",
        "compact_stall",
        "compact_fail",
        "oom_kill",
        "nr_throttled_written",
    ];
    let lower = LOWER.contains(&figure)
        || figure.starts_with("allocstall_")
        || figure.starts_with("workingset_refault_");
    lower.then_some(Better::Lower)
}

/// How [`compare_runs`] builds its rows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// One row set per task instance (`reader/0`, `reader/1`) instead of one per task.
    pub per_instance: bool,
}

/// Compares `results` (label, result JSON) against the first one, one run per side,
/// instances aggregated. An empty slice gives an empty table.
pub fn compare(results: &[(String, Value)]) -> Table {
    let sides: Vec<(String, Vec<Value>)> = results
        .iter()
        .map(|(n, v)| (n.clone(), vec![v.clone()]))
        .collect();
    compare_runs(&sides, &Options::default())
}

/// A task's figures, as compared: ops/s, mean and p99 latency.
#[derive(Clone, Copy)]
struct TaskFigures {
    ops: f64,
    ops_per_sec: f64,
    mean: f64,
    p99: f64,
}

/// The task figures of one result by label, in order; instances `NAME/K` of one task merged
/// into `NAME` unless `per_instance`.
fn task_figures(result: &Value, per_instance: bool) -> Vec<(String, TaskFigures)> {
    let ts = tasks(result);
    let mut out: Vec<(String, TaskFigures, f64)> = Vec::new();
    for (label, t) in task_labels(ts).into_iter().zip(ts) {
        let f = TaskFigures {
            ops: num(t.get("ops")),
            ops_per_sec: num(t.get("ops_per_sec")),
            mean: num(t["latency_us"].get("mean")),
            p99: num(t["latency_us"].get("p99")),
        };
        let group = match label.rsplit_once('/') {
            Some((base, k))
                if !per_instance && !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) =>
            {
                base.to_string()
            }
            _ => label,
        };
        match out.iter_mut().find(|(l, _, _)| *l == group) {
            Some((_, acc, weighted_sum)) => {
                acc.ops += f.ops;
                acc.ops_per_sec += f.ops_per_sec;
                *weighted_sum += f.mean * f.ops;
                acc.mean = if acc.ops > 0.0 {
                    *weighted_sum / acc.ops
                } else {
                    f64::NAN
                };
                acc.p99 = acc.p99.max(f.p99);
            }
            None => out.push((group, f, f.mean * f.ops)),
        }
    }
    out.into_iter().map(|(l, f, _)| (l, f)).collect()
}

/// Compares sides of one or more runs each (label, results: the same scenario under
/// several seeds, say) against the first side. An empty slice gives an empty table.
pub fn compare_runs(sides: &[(String, Vec<Value>)], opts: &Options) -> Table {
    let names = sides.iter().map(|(n, _)| n.clone()).collect();
    let seeds = sides
        .iter()
        .map(|(_, rs)| rs.len())
        .max()
        .unwrap_or(0)
        .max(1);
    let mut rows = Vec::new();
    if sides.is_empty() {
        return Table { names, seeds, rows };
    }
    // Per side, per run: the task figures by label.
    let per_run: Vec<Vec<Vec<(String, TaskFigures)>>> = sides
        .iter()
        .map(|(_, rs)| {
            rs.iter()
                .map(|r| task_figures(r, opts.per_instance))
                .collect()
        })
        .collect();
    let mut labels: Vec<&str> = Vec::new();
    for side in &per_run {
        for run in side {
            for (label, _) in run {
                if !labels.contains(&label.as_str()) {
                    labels.push(label);
                }
            }
        }
    }
    for label in labels {
        let samples = |f: fn(&TaskFigures) -> f64| -> Vec<Vec<f64>> {
            per_run
                .iter()
                .map(|side| {
                    side.iter()
                        .map(|run| {
                            run.iter()
                                .find(|(l, _)| l == label)
                                .map_or(f64::NAN, |(_, t)| f(t))
                        })
                        .collect()
                })
                .collect()
        };
        rows.push(Row::new(
            format!("ops/s {label}"),
            Kind::Task,
            samples(|t| t.ops_per_sec),
        ));
        rows.push(Row::new(
            format!("latency_mean_us {label}"),
            Kind::Task,
            samples(|t| t.mean),
        ));
        rows.push(Row::new(
            format!("latency_p99_us {label}"),
            Kind::Task,
            samples(|t| t.p99),
        ));
    }
    rows.push(Row::new(
        "sim_seconds".to_string(),
        Kind::Run,
        sides
            .iter()
            .map(|(_, rs)| rs.iter().map(|r| num(r.get("sim_seconds"))).collect())
            .collect(),
    ));

    // Counters, then gauges, in report order.
    let mut names_seen: Vec<&str> = Vec::new();
    for (_, rs) in sides {
        for r in rs {
            for (name, _) in vmstat(r) {
                if !names_seen.contains(&name) {
                    names_seen.push(name);
                }
            }
        }
    }
    names_seen.sort_by(|a, b| cmp_counters(a, b));
    for gauges in [false, true] {
        for &name in names_seen
            .iter()
            .filter(|n| refault_mm::vmstat::is_gauge(n) == gauges)
        {
            let samples = sides
                .iter()
                .map(|(_, rs)| {
                    rs.iter()
                        .map(|r| r["vmstat"].get(name).map_or(0.0, |v| num(Some(v))))
                        .collect()
                })
                .collect();
            let kind = if gauges { Kind::Gauge } else { Kind::Counter };
            rows.push(Row::new(name.to_string(), kind, samples));
        }
    }
    rows.retain(|r| !r.is_empty());
    Table { names, seeds, rows }
}

/// `v` with exactly `decimals` decimals; `-` when missing.
fn cell(v: f64, decimals: usize) -> String {
    if v.is_nan() {
        return "-".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let s = format!("{v:.decimals$}");
    if s.trim_start_matches('-')
        .chars()
        .all(|c| c == '0' || c == '.')
    {
        s.trim_start_matches('-').to_string()
    } else {
        s
    }
}

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

impl Table {
    /// Fixed-width text: `figure`, the baseline's value, then value and change for each other
    /// side. Numbers are right-aligned; widths fit the widest cell of each column. Gauges
    /// follow the counters under a line of their own.
    pub fn render_text(&self) -> String {
        self.render(false)
    }

    /// [`Table::render_text`] with improvements in green and regressions in red (ANSI
    /// colours, for a terminal).
    pub fn render_text_colour(&self) -> String {
        self.render(true)
    }

    fn render(&self, colour: bool) -> String {
        let several = self.seeds > 1;
        let mut header = vec![if several { "stat  figure" } else { "figure" }.to_string()];
        let mut align = vec![Align::Left];
        for (i, name) in self.names.iter().enumerate() {
            header.push(name.clone());
            align.push(Align::Right);
            if i > 0 {
                header.push("change".to_string());
                align.push(Align::Right);
                if several {
                    // The significance marker of the Amean line.
                    header.push(String::new());
                    align.push(Align::Left);
                }
            }
        }
        let change = |row: &Row, i: usize, p: Option<f64>| {
            let s = format_percent(p);
            match (colour, row.improved(i)) {
                (true, Some(true)) => format!("{GREEN}{s}{RESET}"),
                (true, Some(false)) => format!("{RED}{s}{RESET}"),
                _ => s,
            }
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut gauges_started = false;
        for row in &self.rows {
            if row.kind == Kind::Gauge && !gauges_started {
                gauges_started = true;
                rows.push(vec!["end-of-run gauges".to_string()]);
            }
            if !several {
                let mut cells = vec![row.figure.clone()];
                for (i, &v) in row.values.iter().enumerate() {
                    cells.push(cell(v, row.decimals));
                    if i > 0 {
                        cells.push(change(row, i, row.percent.get(i).copied().flatten()));
                    }
                }
                rows.push(cells);
                continue;
            }
            // mmtests' statistics, one line each; the change of every statistic, and the
            // significance of the means' difference on the Amean line.
            type Stat = (&'static str, fn(&MmtestsStats) -> f64);
            let mut lines: Vec<Stat> = vec![("Amean", |s| s.amean)];
            if row.better == Some(Better::Higher) {
                lines.push(("Hmean", |s| s.hmean));
            }
            lines.extend::<[Stat; 4]>([
                ("Stddev", |s| s.stddev),
                ("CoeffVar", |s| s.coeffvar),
                ("Min", |s| s.min),
                ("Max", |s| s.max),
            ]);
            let stats = row.stats.as_deref().unwrap_or(&[]);
            for (k, (stat, f)) in lines.into_iter().enumerate() {
                let vals: Vec<f64> = (0..self.names.len())
                    .map(|i| stats.get(i).and_then(Option::as_ref).map_or(f64::NAN, f))
                    .collect();
                let decimals = if stat == "CoeffVar" {
                    2
                } else {
                    row.decimals.max(2)
                };
                let mut cells = vec![format!("{stat:<8}  {}", row.figure)];
                for (i, &v) in vals.iter().enumerate() {
                    cells.push(cell(v, decimals));
                    if i > 0 {
                        // A change of the spread is neither better nor worse: left blank.
                        cells.push(if stat == "Stddev" || stat == "CoeffVar" {
                            String::new()
                        } else {
                            change(row, i, percent_change(vals[0], v))
                        });
                        let mark = k == 0 && row.significant(i) == Some(true);
                        cells.push(if mark { "*" } else { "" }.to_string());
                    }
                }
                rows.push(cells);
            }
        }
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
                "pgmajfault": 0, "nr_free_pages": 0, "nr_inactive_file": 300
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
                "pgmajfault": 0, "nr_inactive_file": 200
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
        // One precision per row; counters, then the gauges under their own line; rows zero
        // on both sides (pgmajfault, nr_free_pages) left out.
        let expected = "\
figure                   legacy  refault-cost     change
ops/s pgbench             80.65        104.99    +30.18%
latency_mean_us pgbench   99.20         76.20    -23.19%
latency_p99_us pgbench      250           250      0.00%
ops/s cp                      -          0.50        n/a
latency_mean_us cp            -             1        n/a
latency_p99_us cp             -             1        n/a
sim_seconds                  60            60      0.00%
pgscan_kswapd              6579        201845  +2968.02%
workingset_refault_file  222486        101041    -54.59%
pswpout                    3149         86932  +2660.62%
pgfault                     100           100      0.00%
compact_stall                 0             5        n/a
end-of-run gauges
nr_inactive_file            300           200    -33.33%
";
        assert_eq!(table().render_text(), expected);
    }

    #[test]
    fn colour_marks_better_green_and_worse_red() {
        let text = table().render_text_colour();
        let line = |start: &str| {
            text.lines()
                .find(|l| l.starts_with(start))
                .unwrap()
                .to_string()
        };
        // Throughput up, latency down, refaults down: better; swapping up: worse.
        assert!(line("ops/s pgbench").ends_with("\x1b[32m+30.18%\x1b[0m"));
        assert!(line("latency_mean_us pgbench").ends_with("\x1b[32m-23.19%\x1b[0m"));
        assert!(line("workingset_refault_file").ends_with("\x1b[32m-54.59%\x1b[0m"));
        assert!(line("pswpout").ends_with("\x1b[31m+2660.62%\x1b[0m"));
        // No direction (scanning, a gauge) or no change: no colour.
        assert!(!line("pgscan_kswapd").contains('\x1b'));
        assert!(!line("nr_inactive_file").contains('\x1b'));
        assert!(!line("latency_p99_us pgbench").contains('\x1b'));
        // The columns line up as without colour.
        let plain = table().render_text();
        let strip = text
            .replace("\x1b[32m", "")
            .replace("\x1b[31m", "")
            .replace("\x1b[0m", "");
        assert_eq!(strip, plain);
    }

    fn with_instances(ops: [(f64, f64, f64, f64); 2]) -> Value {
        let mut r = legacy();
        r["tasks"] = json!(ops
            .iter()
            .enumerate()
            .map(|(i, &(n, rate, mean, p99))| json!({
                "name": format!("reader/{i}"), "ops": n, "ops_per_sec": rate,
                "latency_us": {"mean": mean, "p99": p99}}))
            .collect::<Vec<_>>());
        r
    }

    #[test]
    fn instances_are_one_task_unless_asked() {
        // reader/0: 100 ops at 10 us, p99 40; reader/1: 300 ops at 20 us, p99 30.
        // Together: 400 ops, ops/s 10 + 30, mean (100*10 + 300*20) / 400 = 17.5, p99 40.
        let r = with_instances([(100.0, 10.0, 10.0, 40.0), (300.0, 30.0, 20.0, 30.0)]);
        let t = compare(&[("a".into(), r.clone()), ("b".into(), r.clone())]);
        let figs: Vec<(&str, f64)> = t.rows[..3]
            .iter()
            .map(|r| (r.figure.as_str(), r.values[0]))
            .collect();
        assert_eq!(
            figs,
            [
                ("ops/s reader", 40.0),
                ("latency_mean_us reader", 17.5),
                ("latency_p99_us reader", 40.0)
            ]
        );
        let sides = vec![
            ("a".to_string(), vec![r.clone()]),
            ("b".to_string(), vec![r]),
        ];
        let t = compare_runs(&sides, &Options { per_instance: true });
        let figs: Vec<&str> = t.rows[..6].iter().map(|r| r.figure.as_str()).collect();
        assert_eq!(figs[0], "ops/s reader/0");
        assert_eq!(figs[3], "ops/s reader/1");
    }

    #[test]
    fn several_seeds_give_mmtests_statistics_and_significance() {
        let run = |rate: f64, refaults: u64| {
            let mut r = legacy();
            r["tasks"][0]["ops_per_sec"] = json!(rate);
            r["vmstat"]["workingset_refault_file"] = json!(refaults);
            r
        };
        // Baseline 1..5 (mean 3), change 3..7 (mean 5): Welch p = 0.0805 (see
        // stats::welch_hand_computed), not significant. Refaults 10 vs 20 every run:
        // significant (p = 0).
        let sides = vec![
            (
                "base".to_string(),
                (1..=5).map(|x| run(x as f64, 10)).collect(),
            ),
            (
                "new".to_string(),
                (3..=7).map(|x| run(x as f64, 20)).collect(),
            ),
        ];
        let t = compare_runs(&sides, &Options::default());
        assert_eq!(t.seeds, 5);
        let ops = &t.rows[0];
        assert_eq!(ops.values, vec![3.0, 5.0]);
        let st = ops.stats.as_ref().unwrap();
        let base = st[0].as_ref().unwrap();
        assert_eq!((base.min, base.max, base.amean), (1.0, 5.0, 3.0));
        assert!((base.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        let p = ops.p_value.as_ref().unwrap();
        assert_eq!(p[0], None);
        assert!((p[1].unwrap() - 0.080_516).abs() < 1e-5);
        assert_eq!(ops.significant(1), Some(false));
        let refaults = t
            .rows
            .iter()
            .find(|r| r.figure == "workingset_refault_file")
            .unwrap();
        assert_eq!(refaults.significant(1), Some(true));
        let text = t.render_text();

        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "stat  figure                          base      new    change"
        );
        assert_eq!(
            lines[1],
            "Amean     ops/s pgbench               3.00     5.00   +66.67%"
        );
        assert_eq!(
            lines[2],
            "Hmean     ops/s pgbench               2.19     4.58  +108.93%"
        );
        assert_eq!(
            lines[3],
            "Stddev    ops/s pgbench               1.58     1.58"
        );
        assert_eq!(
            lines[4],
            "CoeffVar  ops/s pgbench              52.70    31.62"
        );
        let amean = lines
            .iter()
            .find(|l| l.starts_with("Amean     workingset_refault_file"))
            .unwrap();
        assert!(amean.ends_with("+100.00%  *"), "{amean}");
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
        assert_eq!(v["seeds"], json!(1));
        assert_eq!(
            v["rows"][0],
            json!({"figure": "ops/s pgbench", "kind": "task", "better": "higher", "decimals": 2,
                   "values": [80.65, 104.99],
                   "percent": [0.0, (104.99 - 80.65) / 80.65 * 100.0]})
        );
        // Missing values are null; so is a change against a missing or zero baseline.
        assert_eq!(
            v["rows"][3],
            json!({"figure": "ops/s cp", "kind": "task", "better": "higher", "decimals": 2,
                   "values": [null, 0.5], "percent": [null, null]})
        );
        let rows = v["rows"].as_array().unwrap();
        assert_eq!(
            rows[rows.len() - 2],
            json!({"figure": "compact_stall", "kind": "counter", "better": "lower",
                   "decimals": 0, "values": [0.0, 5.0], "percent": [0.0, null]})
        );
        assert_eq!(rows[rows.len() - 1]["kind"], json!("gauge"));
        assert_eq!(rows[rows.len() - 1]["better"], json!(null));
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
