//! `refault reproduce NAME [--quick] [--out FILE]`: run a source document's benchmark under the
//! baseline and the changed policy, and print the seed's table side by side.
//!
//! `lru-balance` (seed S0, 000_7294c43fbea70511.txt): the pgbench-like and parallelio-like
//! scenarios in `scenarios/s0-*.toml` (their descriptions give the scaling), each under
//! `policy.balance = "legacy"` and `"refault-cost"`.
//!
//! `mglru` (seed S1, 001_61fe62ee94797880.txt): the fio-like and memcached-like scenarios in
//! `scenarios/s1-*.toml` (scaling in their descriptions), each under `policy.lru = "classic"`
//! and `"mglru"`, with the reclaim CPU broken down by activity.

use anyhow::{bail, Result};
use refault_report::SeedRow;
use refault_scenario::Scenario;
use refault_sim::SimResult;
use serde_json::{json, Value};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Which result: lru-balance (S0) or mglru (S1).
    pub name: String,
    /// Shorter runs (same scenarios, shorter duration): under a minute.
    #[arg(long)]
    pub quick: bool,
    /// Write the table and every run's full result as JSON.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub const S0_PGBENCH: &str = include_str!("../../../../scenarios/s0-pgbench.toml");
pub const S0_PARALLELIO: &str = include_str!("../../../../scenarios/s0-parallelio.toml");
pub const S1_FIO: &str = include_str!("../../../../scenarios/s1-fio.toml");
pub const S1_MEMCACHED: &str = include_str!("../../../../scenarios/s1-memcached.toml");

/// One row of a reproduction table and the direction the seed reports.
pub struct Expect {
    pub row: SeedRow,
    /// Some(true): the change must be higher; Some(false): lower; None: within `tol` percent.
    pub up: Option<bool>,
    /// With `up`: the change must move by at least this many percent (0 = any amount).
    pub tol: f64,
}

impl Expect {
    /// A row the seed gives a direction for (the others are reported only).
    pub fn checked(&self) -> bool {
        self.up.is_some() || self.tol.is_finite()
    }

    pub fn holds(&self) -> bool {
        let (b, c) = (self.row.baseline, self.row.change);
        match self.up {
            Some(true) => c > b && (b == 0.0 || (c - b) / b * 100.0 >= self.tol),
            Some(false) => c < b && (b == 0.0 || (b - c) / b * 100.0 >= self.tol),
            None => {
                if b == 0.0 {
                    c == 0.0
                } else {
                    ((c - b) / b).abs() * 100.0 < self.tol
                }
            }
        }
    }
}

/// `--quick` durations per scenario (duration, warm-up), or None to keep the scenario's: the
/// pgbench-like run keeps the seed's 30 min warm-up and 1 h (the page cache warms through
/// the clients' misses, and the shift of pressure to anon develops over the hour; the run
/// takes seconds of wall time anyway); the parallelio-like run is cut to 40 s.
fn quick_durations(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "s0-pgbench" => None,
        "s1-fio" => Some(("12s", "4s")),
        "s1-memcached" => Some(("18s", "10s")),
        _ => Some(("60s", "20s")),
    }
}

fn load(text: &str, origin: &str, name: &str, policy: &str, quick: bool) -> Result<Scenario> {
    let key = if name.starts_with("s1-") {
        "policy.lru"
    } else {
        "policy.balance"
    };
    let mut ov = vec![(key.to_string(), policy.to_string())];
    if let (true, Some((d, w))) = (quick, quick_durations(name)) {
        ov.push(("run.duration".into(), d.into()));
        ov.push(("run.warmup".into(), w.into()));
    }
    Ok(refault_scenario::parse(text, origin, &ov, None)?)
}

fn sum_tasks(
    r: &SimResult,
    prefix: &str,
    f: impl Fn(&refault_sim::result::TaskResult) -> f64,
) -> f64 {
    r.tasks
        .iter()
        .filter(|t| t.name == prefix || t.name.starts_with(&format!("{prefix}/")))
        .map(f)
        .sum()
}

fn mean_latency_ms(r: &SimResult, prefix: &str) -> f64 {
    let ops = sum_tasks(r, prefix, |t| t.ops as f64);
    if ops == 0.0 {
        return 0.0;
    }
    sum_tasks(r, prefix, |t| t.latency_us.mean * t.ops as f64) / ops / 1e3
}

fn vm(r: &SimResult, k: &str) -> f64 {
    r.vmstat.get(k).copied().unwrap_or(0) as f64
}

fn row(figure: &str, b: f64, c: f64, up: Option<bool>, tol: f64) -> Expect {
    Expect {
        row: SeedRow::new(figure, b, c),
        up,
        tol,
    }
}

/// The S0 pgbench table (seed: tps +30%, latency -23%, anon scanned/reclaimed and swap-out
/// much higher, file scanned -92%, file refaults -55%, total refaults -54%).
pub fn pgbench_rows(b: &SimResult, c: &SimResult) -> Vec<Expect> {
    let total = |r: &SimResult| vm(r, "workingset_refault_file") + vm(r, "pswpin");
    vec![
        row(
            "tps",
            sum_tasks(b, "client", |t| t.ops_per_sec),
            sum_tasks(c, "client", |t| t.ops_per_sec),
            Some(true),
            0.0,
        ),
        row(
            "latency average (ms)",
            mean_latency_ms(b, "client"),
            mean_latency_ms(c, "client"),
            Some(false),
            0.0,
        ),
        row(
            "anon scanned",
            vm(b, "pgscan_anon"),
            vm(c, "pgscan_anon"),
            Some(true),
            0.0,
        ),
        row(
            "anon reclaimed",
            vm(b, "pgsteal_anon"),
            vm(c, "pgsteal_anon"),
            Some(true),
            0.0,
        ),
        row(
            "file scanned",
            vm(b, "pgscan_file"),
            vm(c, "pgscan_file"),
            Some(false),
            0.0,
        ),
        row(
            "swap out",
            vm(b, "pswpout"),
            vm(c, "pswpout"),
            Some(true),
            0.0,
        ),
        row(
            "swap in",
            vm(b, "pswpin"),
            vm(c, "pswpin"),
            None,
            f64::INFINITY,
        ),
        row(
            "file refault",
            vm(b, "workingset_refault_file"),
            vm(c, "workingset_refault_file"),
            Some(false),
            0.0,
        ),
        row(
            "total refaults (file refault + swap in)",
            total(b),
            total(c),
            Some(false),
            30.0,
        ),
    ]
}

/// The S0 backward-compatibility check on parallelio: memcached-like throughput unchanged
/// (seed: within about ±2%), background IO duration unchanged, swap activity not higher.
pub fn parallelio_rows(b: &SimResult, c: &SimResult) -> Vec<Expect> {
    let swap = |r: &SimResult| vm(r, "pswpin") + vm(r, "pswpout");
    vec![
        row(
            "memcached ops/s",
            sum_tasks(b, "memcached", |t| t.ops_per_sec),
            sum_tasks(c, "memcached", |t| t.ops_per_sec),
            None,
            3.0,
        ),
        row(
            "background copy MiB/s",
            sum_tasks(b, "copy", |t| t.ops_per_sec) / 8.0,
            sum_tasks(c, "copy", |t| t.ops_per_sec) / 8.0,
            None,
            f64::INFINITY,
        ),
        row(
            "swap activity (pswpin + pswpout)",
            swap(b),
            swap(c),
            None,
            f64::INFINITY,
        ),
        row(
            "file refault",
            vm(b, "workingset_refault_file"),
            vm(c, "workingset_refault_file"),
            None,
            f64::INFINITY,
        ),
    ]
}

/// The S1 fio table (seed: IOPS +47-49% under the multi-gen LRU).
pub fn fio_rows(b: &SimResult, c: &SimResult) -> Vec<Expect> {
    let moves = |r: &SimResult| vm(r, "pgactivate") + vm(r, "pgdeactivate");
    let cpu = |r: &SimResult| {
        let c = &r.reclaim_cpu;
        c.scan + c.rmap_walk + c.page_table_walk + c.reclaim + c.io_submit
    };
    vec![
        row(
            "IOPS (read() ops/s, all jobs)",
            sum_tasks(b, "fio", |t| t.ops_per_sec),
            sum_tasks(c, "fio", |t| t.ops_per_sec),
            Some(true),
            0.0,
        ),
        row(
            "file refaults",
            vm(b, "workingset_refault_file"),
            vm(c, "workingset_refault_file"),
            None,
            f64::INFINITY,
        ),
        row(
            "LRU list moves (pgactivate + pgdeactivate)",
            moves(b),
            moves(c),
            None,
            f64::INFINITY,
        ),
        row("reclaim CPU (s)", cpu(b), cpu(c), None, f64::INFINITY),
    ]
}

/// The S1 memcached table (seed: ops/s +101-105%) and the reclaim CPU profile (seed: the
/// rmap walk falls from 38% to 15% of kswapd's time).
pub fn memcached_rows(b: &SimResult, c: &SimResult) -> Vec<Expect> {
    let total = |r: &SimResult| {
        let c = &r.reclaim_cpu;
        c.scan + c.rmap_walk + c.page_table_walk + c.reclaim + c.io_submit
    };
    let share = |r: &SimResult| {
        let t = total(r);
        if t > 0.0 {
            r.reclaim_cpu.rmap_walk / t * 100.0
        } else {
            0.0
        }
    };
    vec![
        row(
            "ops/s (all server threads)",
            sum_tasks(b, "memcached", |t| t.ops_per_sec),
            sum_tasks(c, "memcached", |t| t.ops_per_sec),
            Some(true),
            0.0,
        ),
        row(
            "anon refaults (pswpin)",
            vm(b, "pswpin"),
            vm(c, "pswpin"),
            None,
            f64::INFINITY,
        ),
        row(
            "pages scanned (pgscan_anon)",
            vm(b, "pgscan_anon"),
            vm(c, "pgscan_anon"),
            None,
            f64::INFINITY,
        ),
        row(
            "reclaim CPU: rmap walk (s)",
            b.reclaim_cpu.rmap_walk,
            c.reclaim_cpu.rmap_walk,
            Some(false),
            0.0,
        ),
        row(
            "reclaim CPU: page-table walk (s)",
            b.reclaim_cpu.page_table_walk,
            c.reclaim_cpu.page_table_walk,
            None,
            f64::INFINITY,
        ),
        row(
            "reclaim CPU: LRU scan (s)",
            b.reclaim_cpu.scan,
            c.reclaim_cpu.scan,
            None,
            f64::INFINITY,
        ),
        row(
            "reclaim CPU: swap-out IO incl. sync device (s)",
            b.reclaim_cpu.io_submit,
            c.reclaim_cpu.io_submit,
            None,
            f64::INFINITY,
        ),
        row(
            "rmap walk share of reclaim CPU (%)",
            share(b),
            share(c),
            Some(false),
            0.0,
        ),
    ]
}

fn render(title: &str, rows: &[Expect], labels: (&str, &str)) -> String {
    let seed_rows: Vec<SeedRow> = rows.iter().map(|e| e.row.clone()).collect();
    let table = refault_report::render_seed_table(title, labels, &seed_rows);
    let mut out = String::new();
    for (line_no, line) in table.lines().enumerate() {
        out.push_str(line);
        // Rows start after the title and header lines rendered by render_seed_table.
        let data_start = table.lines().count() - rows.len();
        if line_no >= data_start {
            let e = &rows[line_no - data_start];
            let want = match e.up {
                Some(true) if e.tol > 0.0 => format!("expect >= {}% higher", e.tol),
                Some(false) if e.tol > 0.0 => format!("expect >= {}% lower", e.tol),
                Some(true) => "expect higher".to_string(),
                Some(false) => "expect lower".to_string(),
                None if e.tol.is_finite() => format!("expect within {}%", e.tol),
                None => "reported".to_string(),
            };
            let mark = if !e.checked() {
                ""
            } else if e.holds() {
                "  ok"
            } else {
                "  DIFFERS"
            };
            out.push_str(&format!("   [{want}]{mark}"));
        }
        out.push('\n');
    }
    out
}

type RowsFn = [fn(&SimResult, &SimResult) -> Vec<Expect>; 2];
/// The four runs (scenario, text, policy), the column labels, the table titles, the rows.
type Reproduction = (
    [(&'static str, &'static str, &'static str); 4],
    (&'static str, &'static str),
    [&'static str; 2],
    RowsFn,
);

pub fn main(a: Args) -> Result<()> {
    super::check_out(a.out.as_deref())?;
    let (specs, labels, titles, rows): Reproduction = match a.name.as_str() {
        "lru-balance" => (
            [
                ("s0-pgbench", S0_PGBENCH, "legacy"),
                ("s0-pgbench", S0_PGBENCH, "refault-cost"),
                ("s0-parallelio", S0_PARALLELIO, "legacy"),
                ("s0-parallelio", S0_PARALLELIO, "refault-cost"),
            ],
            ("legacy", "refault-cost"),
            [
                "S0 pgbench-like (scenarios/s0-pgbench.toml)",
                "S0 parallelio-like (scenarios/s0-parallelio.toml)",
            ],
            [pgbench_rows, parallelio_rows],
        ),
        "mglru" => (
            [
                ("s1-fio", S1_FIO, "classic"),
                ("s1-fio", S1_FIO, "mglru"),
                ("s1-memcached", S1_MEMCACHED, "classic"),
                ("s1-memcached", S1_MEMCACHED, "mglru"),
            ],
            ("active/inactive", "multi-gen"),
            [
                "S1 fio-like buffered random read in a memcg, ram disk (scenarios/s1-fio.toml)",
                "S1 memcached-like, swap on a ram disk (scenarios/s1-memcached.toml)",
            ],
            [fio_rows, memcached_rows],
        ),
        other => bail!(
            "unknown reproduction `{other}`: available: lru-balance (seed S0), mglru (seed S1)"
        ),
    };
    let scns = specs
        .iter()
        .map(|(n, t, b)| load(t, &format!("scenarios/{n}.toml"), n, b, a.quick))
        .collect::<Result<Vec<_>>>()?;
    // The four runs are independent: run them on the host's cores.
    let results: Vec<Result<SimResult>> = std::thread::scope(|s| {
        let hs: Vec<_> = scns
            .iter()
            .map(|scn| {
                s.spawn(move || {
                    refault_sim::run(scn, Default::default()).map_err(anyhow::Error::from)
                })
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().expect("simulation thread"))
            .collect()
    });
    let results = results.into_iter().collect::<Result<Vec<_>>>()?;
    let pg = rows[0](&results[0], &results[1]);
    let pio = rows[1](&results[2], &results[3]);
    out!("{}", render(titles[0], &pg, labels))?;
    outln!()?;
    out!("{}", render(titles[1], &pio, labels))?;
    let failed: Vec<&str> = pg
        .iter()
        .chain(pio.iter())
        .filter(|e| e.checked() && !e.holds())
        .map(|e| e.row.figure.as_str())
        .collect();
    outln!()?;
    if failed.is_empty() {
        outln!("every direction the seed reports is reproduced")?;
    } else {
        outln!("differs from the seed in: {}", failed.join(", "))?;
    }
    if let Some(out) = a.out {
        let table: Vec<Value> = pg
            .iter()
            .map(|e| (specs[0].0, e))
            .chain(pio.iter().map(|e| (specs[2].0, e)))
            .map(|(scn, e)| {
                json!({"scenario": scn, "figure": e.row.figure, "baseline": e.row.baseline,
                       "change": e.row.change, "percent": e.row.percent, "direction_holds": e.holds()})
            })
            .collect();
        let runs: Vec<Value> = specs
            .iter()
            .zip(results.iter())
            .map(|((n, _, b), r)| json!({"scenario": n, "policy": b, "result": r}))
            .collect();
        let doc = json!({"reproduce": a.name, "quick": a.quick, "table": table, "runs": runs});
        super::write_out(&out, serde_json::to_string_pretty(&doc)?.as_bytes())?;
    }
    Ok(())
}
