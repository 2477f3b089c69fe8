//! `refault bench [--seconds N]`: the simulator's own speed.
//!
//! Workloads (scenarios/bench-*.toml, embedded in the binary):
//! - `bench-mixed`: 1 GiB machine, zram swap; four tasks touch a 1 GiB anon region and
//!   read a 1 GiB file uniformly at random (2x overcommit: reclaim runs all the time).
//! - `bench-hits`: the same machine, a working set that fits: the event path without reclaim.
//! - `bench-16g`: a 16 GiB machine with a sequential anon fill and a file scan: host memory per
//!   simulated page.
//! - `bench-mixed-mglru`: `bench-mixed` under the multi-gen LRU (`policy.lru = "mglru"`); the
//!   last column gives its accesses/s as a share of the active/inactive LRU's on the same
//!   workload, measured in this run.
//!
//! Each runs for `--seconds` of simulated time (default: the scenario's); the headline is
//! page accesses per second of wall time (one core: a simulation is single-threaded):
//! touches, and the pages of `read()`/`write()`/file creation. Events per second are beside
//! it: every operation ends with an end-of-operation marker event, and phases may add
//! think-time, advice and phase-marker events, so a workload of one-page operations has two
//! events per access. The last figure is the process's peak resident memory during the
//! workload per simulated 4 KiB page (the page tables and page-cache entries of the
//! workload's objects included).

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Simulated seconds per workload (default: each scenario's own duration).
    #[arg(long)]
    pub seconds: Option<u64>,
}

const WORKLOADS: [(&str, &str); 4] = [
    (
        "bench-mixed",
        include_str!("../../../../scenarios/bench-mixed.toml"),
    ),
    (
        "bench-hits",
        include_str!("../../../../scenarios/bench-hits.toml"),
    ),
    (
        "bench-16g",
        include_str!("../../../../scenarios/bench-16g.toml"),
    ),
    (
        "bench-mixed-mglru",
        include_str!("../../../../scenarios/bench-mixed.toml"),
    ),
];

fn status_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Reset the peak-RSS watermark (`echo 5 > /proc/self/clear_refs`, Linux 4.0+), so each
/// workload's peak is its own.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

pub fn main(a: Args) -> Result<()> {
    outln!(
        "{:<18} {:>12} {:>12} {:>8} {:>8} {:>12} {:>12} {:>8}",
        "workload",
        "accesses",
        "events",
        "sim s",
        "wall s",
        "accesses/s",
        "events/s",
        "B/page"
    )?;
    let mut classic_rate = None;
    for (name, text) in WORKLOADS {
        let mut ov = Vec::new();
        if let Some(s) = a.seconds {
            ov.push(("run.duration".to_string(), format!("{s}s")));
        }
        let mglru = name.ends_with("-mglru");
        if mglru {
            ov.push(("policy.lru".to_string(), "mglru".to_string()));
        }
        let scn = refault_scenario::parse(text, &format!("scenarios/{name}.toml"), &ov, None)?;
        reset_peak_rss();
        let r = refault_sim::run(&scn, Default::default())?;
        let wall = r.wall_seconds.max(1e-9);
        let rate = r.accesses as f64 / wall;
        let ev_rate = r.events as f64 / wall;
        // Peak RSS of the whole process during this workload (binary, model, workload state
        // and result), per simulated page.
        let per_page = status_kb("VmHWM:")
            .map(|kb| {
                format!(
                    "{:.1}",
                    (kb * 1024) as f64 / scn.machine.memory_pages as f64
                )
            })
            .unwrap_or_else(|| "-".into());
        let vs_classic = match (mglru, classic_rate) {
            (true, Some(c)) => format!("  {:.0}% of classic", rate / c * 100.0),
            _ => String::new(),
        };
        if name == "bench-mixed" {
            classic_rate = Some(rate);
        }
        outln!(
            "{:<18} {:>12} {:>12} {:>8.1} {:>8.2} {:>12.0} {:>12.0} {:>8}{}",
            name,
            r.accesses,
            r.events,
            r.sim_seconds,
            r.wall_seconds,
            rate,
            ev_rate,
            per_page,
            vs_classic
        )?;
    }
    Ok(())
}
