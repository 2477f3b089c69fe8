//! One run for people: what ran, how the tasks did, what reclaim did.
//!
//! ```text
//! scenario     s0-pgbench
//! policy       lru=classic balance=refault-cost swap_readahead=vma
//! sim_seconds  60
//! events       1200000
//! events/s     400000 (wall)
//!
//! tasks
//!   name      ops  ops/s  mean_us  p50_us  p99_us
//!   pgbench  4839  80.65     99.2      90     250
//!
//! reclaim
//!   pgscan_kswapd  6579
//! ...
//! ```
//!
//! The reclaim, workingset and swap-and-faults sections list every counter of their group
//! that the result holds, zeros included (a zero `pswpout` is news); "other counters" lists
//! the non-zero rest alphabetically. Reclaim CPU is shown in milliseconds, so that short runs
//! do not round it away.

use serde_json::Value;

use crate::format::format_value;
use crate::result::{format_json, is_nonzero, num, task_labels, tasks, vmstat};
use crate::text::{render, Align};
use crate::vmstat::{group_of, CounterGroup};

/// A readable multi-section text of one result: header, tasks, vmstat counters in groups
/// (see [`crate::vmstat`]) and reclaim CPU time if the result has it.
pub fn summary(result: &Value) -> String {
    let mut sections = vec![header(result)];
    if let Some(t) = tasks_section(result) {
        sections.push(t);
    }
    sections.extend(counter_sections(result));
    if let Some(c) = reclaim_cpu_section(result) {
        sections.push(c);
    }
    if let Some(c) = sched_section(result) {
        sections.push(c);
    }
    sections.join("\n")
}

fn header(result: &Value) -> String {
    let scenario = &result["scenario"];
    let name = scenario["name"].as_str().unwrap_or("-").to_string();
    let events = &result["events"];
    let events_text = if events.is_null() {
        "-".to_string()
    } else {
        format_json(events)
    };
    let rate = num(Some(events)) / num(result.get("wall_seconds"));
    let rate_text = if rate.is_finite() {
        format!("{rate:.0} (wall)")
    } else {
        "n/a".to_string()
    };
    let rows = vec![
        vec!["scenario".to_string(), name],
        vec!["policy".to_string(), policy(&scenario["policy"])],
        vec![
            "sim_seconds".to_string(),
            format_value(num(result.get("sim_seconds"))),
        ],
        vec!["events".to_string(), events_text],
        vec!["events/s".to_string(), rate_text],
    ];
    render(None, &rows, &[Align::Left, Align::Left], 0)
}

/// `lru=classic balance=refault-cost swap_readahead=vma`, then any other policy keys by name.
fn policy(p: &Value) -> String {
    const FIRST: [&str; 3] = ["lru", "balance", "swap_readahead"];
    match p {
        Value::Object(m) => {
            let mut parts: Vec<String> = FIRST
                .iter()
                .filter_map(|k| m.get(*k).map(|v| format!("{k}={}", format_json(v))))
                .collect();
            let mut rest: Vec<_> = m
                .iter()
                .filter(|(k, _)| !FIRST.contains(&k.as_str()))
                .collect();
            rest.sort_by(|a, b| a.0.cmp(b.0));
            parts.extend(rest.iter().map(|(k, v)| format!("{k}={}", format_json(v))));
            parts.join(" ")
        }
        Value::Null => "-".to_string(),
        other => format_json(other),
    }
}

fn tasks_section(result: &Value) -> Option<String> {
    let tasks = tasks(result);
    if tasks.is_empty() {
        return None;
    }
    let header: Vec<String> = ["name", "ops", "ops/s", "mean_us", "p50_us", "p99_us"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = tasks
        .iter()
        .zip(task_labels(tasks))
        .map(|(t, label)| {
            let lat = &t["latency_us"];
            let ops = if t["ops"].is_null() {
                "-".to_string()
            } else {
                format_json(&t["ops"])
            };
            vec![
                label,
                ops,
                format_value(num(t.get("ops_per_sec"))),
                format_value(num(lat.get("mean"))),
                format_value(num(lat.get("p50"))),
                format_value(num(lat.get("p99"))),
            ]
        })
        .collect();
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    Some(format!(
        "tasks\n{}",
        render(Some(&header), &rows, &align, 2)
    ))
}

fn counter_sections(result: &Value) -> Vec<String> {
    let counters = vmstat(result);
    CounterGroup::ALL
        .iter()
        .filter_map(|&group| {
            let rows: Vec<Vec<String>> = counters
                .iter()
                .filter(|(name, v)| {
                    group_of(name) == group && (group != CounterGroup::Other || is_nonzero(v))
                })
                .map(|(name, v)| vec![name.to_string(), format_json(v)])
                .collect();
            if rows.is_empty() {
                return None;
            }
            Some(format!(
                "{}\n{}",
                group.title(),
                render(None, &rows, &[Align::Left, Align::Right], 2)
            ))
        })
        .collect()
}

fn reclaim_cpu_section(result: &Value) -> Option<String> {
    let cpu = result.get("reclaim_cpu")?.as_object()?;
    if cpu.is_empty() {
        return None;
    }
    // Times are seconds (JSON floats); the integer fields beside them (`tlb_shootdowns`,
    // `tlb_shootdown_cpus`) are counts and get their own table, not a "ms" column.
    let (counts, times): (Vec<_>, Vec<_>) = cpu.iter().partition(|(_, v)| v.is_u64());
    let rows: Vec<Vec<String>> = times
        .iter()
        .map(|(activity, v)| {
            let ms = match v.as_f64() {
                Some(s) => format_value(s * 1000.0),
                None => format_json(v),
            };
            vec![activity.to_string(), ms]
        })
        .collect();
    let mut out = format!(
        "reclaim cpu (ms)\n{}",
        render(None, &rows, &[Align::Left, Align::Right], 2)
    );
    if !counts.is_empty() {
        let rows: Vec<Vec<String>> = counts
            .iter()
            .map(|(name, v)| vec![name.to_string(), format_json(v)])
            .collect();
        out.push_str(&format!(
            "\nreclaim cpu events (count)\n{}",
            render(None, &rows, &[Align::Left, Align::Right], 2)
        ));
    }
    Some(out)
}

/// Per-thread CPU time and run-queue wait (`sched.threads`), in milliseconds.
fn sched_section(result: &Value) -> Option<String> {
    let sched = result.get("sched")?;
    let threads = sched.get("threads")?.as_array()?;
    if threads.is_empty() {
        return None;
    }
    let ms = |t: &Value, k: &str| format_value(num(t.get(k)) * 1000.0);
    let rows: Vec<Vec<String>> = threads
        .iter()
        .map(|t| {
            vec![
                t["name"].as_str().unwrap_or("-").to_string(),
                ms(t, "cpu_seconds"),
                ms(t, "runqueue_wait_seconds"),
                format_value(num(t.get("max_wait_ms"))),
                format_json(&t["nr_waits"]),
                format_json(&t["nr_preempted"]),
            ]
        })
        .collect();
    let header = [
        "thread",
        "cpu_ms",
        "wait_ms",
        "max_wait_ms",
        "waits",
        "preempted",
    ];
    let mut align = vec![Align::Right; header.len()];
    align[0] = Align::Left;
    Some(format!(
        "scheduler ({} cpus, slice {} ms)\n{}",
        format_json(&sched["cpus"]),
        format_value(num(sched.get("base_slice_ms"))),
        render(Some(&header.map(String::from)), &rows, &align, 2)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result() -> Value {
        json!({
            "scenario": {
                "name": "s0-pgbench",
                "policy": {"lru": "classic", "balance": "refault-cost",
                           "swap_readahead": "vma", "lru_gen_min_ttl_ms": 0}
            },
            "vmstat": {
                "nr_free_pages": 1200,
                "pgfault": 50000,
                "compact_stall": 0,
                "workingset_refault_file": 101041,
                "pgsteal_kswapd": 86924,
                "pswpout": 86932,
                "pgscan_kswapd": 201845,
                "allocstall_normal": 0,
                "pswpin": 503,
                "pgrefill": 4000,
                "workingset_activate_file": 12,
                "pgmajfault": 7
            },
            "tasks": [
                {"name": "pgbench", "ops": 6299, "ops_per_sec": 104.99,
                 "latency_us": {"mean": 76.2, "p50": 70, "p90": 100, "p99": 180.5,
                                "p999": 400, "max": 900}},
                {"name": "idle", "ops": 0, "ops_per_sec": 0.0,
                 "latency_us": {"mean": 0, "p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0}}
            ],
            "timeseries": {"t_s": [0, 1], "nr_free_pages": [10, 20]},
            "sim_seconds": 60.0,
            "wall_seconds": 2.5,
            "events": 1000000,
            "reclaim_cpu": {"kswapd": 0.0123, "direct": 0.5}
        })
    }

    #[test]
    fn summary_prints_every_section_in_order() {
        let expected = "\
scenario     s0-pgbench
policy       lru=classic balance=refault-cost swap_readahead=vma lru_gen_min_ttl_ms=0
sim_seconds  60
events       1000000
events/s     400000 (wall)

tasks
  name      ops   ops/s  mean_us  p50_us  p99_us
  pgbench  6299  104.99     76.2      70   180.5
  idle        0       0        0       0       0

reclaim
  pgscan_kswapd      201845
  pgsteal_kswapd      86924
  pgrefill             4000
  allocstall_normal       0

workingset
  workingset_activate_file      12
  workingset_refault_file   101041

swap and faults
  pswpin        503
  pswpout     86932
  pgmajfault      7
  pgfault     50000

other counters
  nr_free_pages  1200

reclaim cpu (ms)
  direct   500
  kswapd  12.3
";
        assert_eq!(summary(&result()), expected);
    }

    #[test]
    fn reclaim_cpu_counts_are_not_printed_as_milliseconds() {
        let r = json!({
            "reclaim_cpu": {"tlb_flush": 9.18664, "tlb_shootdowns": 1702545,
                            "tlb_shootdown_cpus": 2772967}
        });
        assert_eq!(
            reclaim_cpu_section(&r).unwrap(),
            "reclaim cpu (ms)\n  tlb_flush  9186.64\n\nreclaim cpu events (count)\n  \
             tlb_shootdown_cpus  2772967\n  tlb_shootdowns      1702545\n"
        );
    }

    #[test]
    fn summary_shows_the_schedulers_threads() {
        let mut r = result();
        r["sched"] = json!({"cpus": 1, "base_slice_ms": 0.75, "threads": [
            {"name": "anon", "cpu_seconds": 1.5, "runqueue_wait_seconds": 0.25,
             "max_wait_ms": 4, "nr_waits": 30, "nr_preempted": 29},
            {"name": "kswapd0", "cpu_seconds": 0.5, "runqueue_wait_seconds": 0.125,
             "max_wait_ms": 3.9, "nr_waits": 40, "nr_preempted": 0}]});
        let text = summary(&r);
        let tail = "\
scheduler (1 cpus, slice 0.75 ms)
  thread   cpu_ms  wait_ms  max_wait_ms  waits  preempted
  anon       1500      250            4     30         29
  kswapd0     500      125          3.9     40          0
";
        assert!(text.ends_with(tail), "{text}");
    }

    #[test]
    fn summary_tolerates_missing_parts() {
        let text = summary(&json!({"vmstat": {"pswpout": 0, "zzz": 0}}));
        assert_eq!(
            text,
            "\
scenario     -
policy       -
sim_seconds  -
events       -
events/s     n/a

swap and faults
  pswpout  0
"
        );
    }
}
