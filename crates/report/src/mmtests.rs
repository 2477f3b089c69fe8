//! mmtests interoperability: a result written as the logs mmtests' own reporting reads, so a
//! simulated "kernel" sits next to real ones in the tables a kernel developer already reads.
//!
//! Two files, as mmtests (github.com/gormanm/mmtests) reads them:
//!
//! - `DIR/NAME/iter-0/tests-sysstate`, the system-state log `run-mmtests.sh` writes around a
//!   test and `MonitorMmtestsvmstat` parses for the vmstat "Ops" table of
//!   `compare-kernels.sh` / `compare-mmtests.pl --print-monitor mmtests-vmstat`:
//!   `test begin :: BENCH START`, `file start :: /proc/vmstat` and the counters before the
//!   measured window, `file start :: /proc/zoneinfo` (the parser needs it to end the "before"
//!   block), `file end :: /proc/vmstat` and the counters after it, `file end ::
//!   /proc/zoneinfo`, `test end :: BENCH END 0`, then the `time :: BENCH U user S system E elapsed` line of `/usr/bin/time` (the
//!   parser takes the 8th field as the elapsed time that scan velocities divide by).
//! - `DIR/BENCH.json`, the per-operation samples `compare-mmtests.pl --from-json` loads: an
//!   array of extraction modules, one per run name, each `{"_ModuleName": "ExtractBENCH",
//!   "_TestName": NAME, "_ResultData": {OP: [{"Values": [...], "SampleNrs": [...]}]}}` (one
//!   array element per iteration; refault writes one iteration). The module name makes
//!   compare-mmtests.pl load the benchmark's generic shellpack extractor
//!   (`shellpack_src/src/BENCH/shellpack.yaml`), which decides the statistics and whether
//!   higher is better; the operation labels are the ones that extractor's `parse-results`
//!   prints (`txn-CLIENTS` for pgbench, `files_sec-THREADS` for fs_mark), so simulated and
//!   real runs line up row by row.
//!
//! What the simulation gives differs from a real log in three ways, each written here so a
//! reader of the table knows: the "before" counters are the state at the end of the warm-up
//! (event counters 0, since the result's counters count the measured window; gauges from the
//! time series sample at the end of the warm-up, where the time series has them), the elapsed
//! time is simulated seconds of the measured window, and `user`/`system` are the workload
//! tasks' simulated CPU seconds and the kernel threads' (kswapd, flusher) reclaim CPU seconds.
//! Per-interval samples come from the time series, so their number is the measured window
//! divided by `run.sample_interval`.

use serde_json::{json, Map, Value};

/// The mmtests benchmark a result stands for, and how its per-interval samples are made.
#[derive(Debug, Clone, PartialEq)]
pub struct Benchmark {
    /// mmtests' benchmark name (the shellpack directory): `pgbench`, `fsmark`, or the
    /// fallback `refault` for workloads mmtests has no extractor for (the vmstat table still
    /// reads them).
    pub name: String,
    /// The per-operation samples, keyed by mmtests' operation label.
    pub ops: Vec<(String, Samples)>,
}

/// One operation's samples of one iteration: `(sample number, value)`; the sample number is
/// the elapsed simulated seconds of the measured window at the end of the interval.
pub type Samples = Vec<(f64, f64)>;

/// The tasks of `result` (`scenario.tasks[]`) for which `pick` holds: their task names, with
/// the number of instances summed.
fn tasks_where(result: &Value, pick: impl Fn(&Value) -> bool) -> (Vec<&str>, u64) {
    let mut names = Vec::new();
    let mut instances = 0;
    for t in result["scenario"]["tasks"].as_array().into_iter().flatten() {
        if pick(t) {
            if let Some(n) = t["name"].as_str() {
                names.push(n);
                instances += t["instances"].as_u64().unwrap_or(1);
            }
        }
    }
    (names, instances)
}

/// The time series' sample times (s).
fn sample_times(result: &Value) -> Vec<f64> {
    result["timeseries"]["t_s"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

/// Operations per second of the named tasks (all their instances) in each sample interval
/// that lies wholly after the warm-up, from the time series' cumulative `task.NAME/i.ops`.
fn rate_samples(result: &Value, task_names: &[&str]) -> Samples {
    let ts = &result["timeseries"];
    let t = sample_times(result);
    let warmup = result["scenario"]["run"]["warmup_ns"]
        .as_f64()
        .unwrap_or(0.0)
        / 1e9;
    let mut total = vec![0.0; t.len()];
    if let Some(m) = ts.as_object() {
        for (k, v) in m {
            let Some(task) = k.strip_prefix("task.").and_then(|r| r.strip_suffix(".ops")) else {
                continue;
            };
            // `NAME` for one instance, `NAME/i` for several.
            let base = task.split_once('/').map_or(task, |(b, _)| b);
            if !task_names.contains(&base) {
                continue;
            }
            for (i, x) in v.as_array().into_iter().flatten().enumerate() {
                if let (Some(s), Some(x)) = (total.get_mut(i), x.as_f64()) {
                    *s += x;
                }
            }
        }
    }
    let mut out = Vec::new();
    for i in 1..t.len() {
        let dt = t[i] - t[i - 1];
        if t[i - 1] + 1e-9 < warmup || dt <= 0.0 {
            continue;
        }
        out.push((t[i] - warmup, (total[i] - total[i - 1]) / dt));
    }
    out
}

/// Which mmtests benchmark `result` is, with its samples. pgbench clients give `txn-N`
/// (transactions per second of all N clients per interval, as mmtests' pgbench extractor
/// reports them); file-creating tasks give fs_mark's `files_sec-N` (files per second of
/// the N creating threads per interval: one create operation is one file); everything else
/// is `refault` with no operations (the vmstat table only).
pub fn benchmark(result: &Value) -> Benchmark {
    let (names, clients) = tasks_where(result, |t| t["workload"]["kind"] == "pgbench");
    if !names.is_empty() {
        return Benchmark {
            name: "pgbench".into(),
            ops: vec![(format!("txn-{clients}"), rate_samples(result, &names))],
        };
    }
    // fs_mark: tasks whose phases create files (`access = "create"`).
    let (names, threads) = tasks_where(result, |t| {
        t["workload"]["phases"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["access"] == "create"))
    });
    if !names.is_empty() {
        return Benchmark {
            name: "fsmark".into(),
            ops: vec![(format!("files_sec-{threads}"), rate_samples(result, &names))],
        };
    }
    Benchmark {
        name: "refault".into(),
        ops: Vec::new(),
    }
}

/// The `tests-sysstate` log of one run of `bench`: see the module comment for what the
/// before/after counters and the time line hold.
pub fn tests_sysstate(bench: &str, result: &Value) -> String {
    let mut s = String::new();
    let secs = |k: &str| result["scenario"]["run"][k].as_f64().unwrap_or(0.0) / 1e9;
    let warmup = secs("warmup_ns");
    let end = result["sim_seconds"].as_f64().unwrap_or(0.0);
    // mmtests stamps `date +%s`; a simulated run starts at 0.
    s.push_str(&format!(
        "test begin :: {bench} {}\n",
        warmup.round() as u64
    ));
    let vmstat = result["vmstat"].as_object().cloned().unwrap_or_default();
    // The gauges at the end of the warm-up, where the time series has them.
    let ts = &result["timeseries"];
    let t = sample_times(result);
    let at_warmup = t.iter().rposition(|&x| x <= warmup + 1e-9);
    s.push_str("file start :: /proc/vmstat\n");
    for (k, v) in &vmstat {
        if refault_mm::vmstat::is_gauge(k) {
            let before = at_warmup
                .and_then(|i| ts[k.as_str()].as_array().and_then(|a| a.get(i)))
                .and_then(Value::as_f64);
            if let Some(b) = before {
                s.push_str(&format!("{k} {}\n", b.round() as u64));
            }
        } else if v.is_u64() {
            s.push_str(&format!("{k} 0\n"));
        }
    }
    // run-mmtests.sh logs /proc/zoneinfo after /proc/vmstat, and MonitorMmtestsvmstat
    // relies on it: the zoneinfo header is what ends the "before" block (without it the
    // "after" counters are read as "before" ones). The model's zones are in the result's
    // `watermarks`; the section is left empty (the parser skips its lines).
    s.push_str("file start :: /proc/zoneinfo\n");
    s.push_str("file end :: /proc/vmstat\n");
    for (k, v) in &vmstat {
        if let Some(x) = v.as_u64() {
            s.push_str(&format!("{k} {x}\n"));
        }
    }
    s.push_str("file end :: /proc/zoneinfo\n");
    s.push_str(&format!("test end :: {bench} {} 0\n", end.round() as u64));
    let user: f64 = result["tasks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["cpu_seconds"].as_f64())
        .sum();
    let rc = &result["reclaim_cpu"];
    let system =
        rc["kswapd_total"].as_f64().unwrap_or(0.0) + rc["flusher_total"].as_f64().unwrap_or(0.0);
    s.push_str(&format!(
        "time :: {bench} {user:.2} user {system:.2} system {:.2} elapsed\n",
        end - warmup
    ));
    s
}

/// The `compare-mmtests.pl --from-json` module of one run.
pub fn module(bench: &Benchmark, test_name: &str) -> Value {
    let mut data = Map::new();
    for (op, samples) in &bench.ops {
        data.insert(
            op.clone(),
            json!([{
                "Values": samples.iter().map(|s| s.1).collect::<Vec<_>>(),
                "SampleNrs": samples.iter().map(|s| s.0).collect::<Vec<_>>(),
            }]),
        );
    }
    json!({
        "_ModuleName": format!("Extract{}", bench.name),
        "_TestName": test_name,
        "_ResultData": data,
    })
}

/// `existing` (the text of a `BENCH.json` already in the directory, if any) with `module`
/// added, replacing a module of the same `_TestName`; modules keep their order, a new one
/// goes last (the first is the comparison's baseline).
pub fn merge_modules(existing: Option<&str>, module: Value) -> Result<Value, String> {
    let mut mods: Vec<Value> = match existing {
        None => Vec::new(),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(a)) => a,
            Ok(_) => return Err("not a JSON array of mmtests extraction modules".into()),
            Err(e) => return Err(format!("not JSON: {e}")),
        },
    };
    let name = module["_TestName"].clone();
    match mods.iter_mut().find(|m| m["_TestName"] == name) {
        Some(m) => *m = module,
        None => mods.push(module),
    }
    Ok(Value::Array(mods))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pgbench-like result: two client instances, 10 s warm-up, samples every 10 s.
    fn result() -> Value {
        json!({
            "scenario": {
                "run": {"warmup_ns": 10_000_000_000u64, "duration_ns": 40_000_000_000u64},
                "tasks": [
                    {"name": "init", "instances": 1, "workload": {"kind": "phases"}},
                    {"name": "client", "instances": 2, "workload": {"kind": "pgbench"}},
                ],
            },
            "sim_seconds": 40.0,
            "vmstat": {"nr_free_pages": 1000, "pgscan_kswapd": 500, "nr_dirtied": 7},
            "timeseries": {
                "t_s": [0.0, 10.0, 20.0, 30.0, 40.0],
                "nr_free_pages": [5000.0, 3000.0, 2000.0, 1500.0, 1000.0],
                "task.client/0.ops": [0.0, 50.0, 150.0, 250.0, 400.0],
                "task.client/1.ops": [0.0, 50.0, 150.0, 300.0, 400.0],
                "task.init.ops": [0.0, 9.0, 9.0, 9.0, 9.0],
            },
            "tasks": [{"cpu_seconds": 1.5}, {"cpu_seconds": 2.0}],
            "reclaim_cpu": {"kswapd_total": 0.25, "flusher_total": 0.5},
        })
    }

    #[test]
    fn pgbench_samples_are_transactions_per_second_of_all_clients_after_warmup() {
        let b = benchmark(&result());
        assert_eq!(b.name, "pgbench");
        // Intervals 10-20, 20-30, 30-40: (100+100)/10, (100+150)/10, (150+100)/10.
        assert_eq!(
            b.ops,
            vec![(
                "txn-2".to_string(),
                vec![(10.0, 20.0), (20.0, 25.0), (30.0, 25.0)]
            )]
        );
    }

    #[test]
    fn sysstate_has_the_lines_mmtests_parses() {
        let s = tests_sysstate("pgbench", &result());
        let want = "test begin :: pgbench 10\n\
                    file start :: /proc/vmstat\n\
                    nr_dirtied 0\n\
                    nr_free_pages 3000\n\
                    pgscan_kswapd 0\n\
                    file start :: /proc/zoneinfo\n\
                    file end :: /proc/vmstat\n\
                    nr_dirtied 7\n\
                    nr_free_pages 1000\n\
                    pgscan_kswapd 500\n\
                    file end :: /proc/zoneinfo\n\
                    test end :: pgbench 40 0\n\
                    time :: pgbench 3.50 user 0.75 system 30.00 elapsed\n";
        assert_eq!(s, want);
        // MonitorMmtestsvmstat: split(/\s/) of the time line, element 7 is the elapsed time.
        let time = s.lines().last().unwrap();
        assert_eq!(time.split(' ').nth(7), Some("30.00"));
    }

    #[test]
    fn modules_merge_by_test_name_and_keep_their_order() {
        let b = benchmark(&result());
        let a = merge_modules(None, module(&b, "classic")).unwrap();
        let text = a.to_string();
        let two = merge_modules(Some(&text), module(&b, "mglru")).unwrap();
        let again = merge_modules(Some(&two.to_string()), module(&b, "classic")).unwrap();
        let names: Vec<&str> = again
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["_TestName"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["classic", "mglru"]);
        assert_eq!(again[0]["_ModuleName"], "Extractpgbench");
        assert_eq!(
            again[0]["_ResultData"]["txn-2"][0]["Values"],
            json!([20.0, 25.0, 25.0])
        );
        assert_eq!(
            again[0]["_ResultData"]["txn-2"][0]["SampleNrs"],
            json!([10.0, 20.0, 30.0])
        );
        assert!(merge_modules(Some("{}"), module(&b, "x")).is_err());
        assert!(merge_modules(Some("[1,"), module(&b, "x")).is_err());
    }

    #[test]
    fn file_creation_is_fsmark_files_per_second() {
        let mut r = result();
        r["scenario"]["tasks"][1] = json!({"name": "client", "instances": 2,
            "workload": {"kind": "phases", "phases": [{"access": "create"}]}});
        let b = benchmark(&r);
        assert_eq!(b.name, "fsmark");
        assert_eq!(
            b.ops,
            vec![(
                "files_sec-2".to_string(),
                vec![(10.0, 20.0), (20.0, 25.0), (30.0, 25.0)]
            )]
        );
    }

    #[test]
    fn other_workloads_are_the_refault_benchmark_without_operations() {
        let mut r = result();
        r["scenario"]["tasks"][1]["workload"]["kind"] = json!("memcached");
        let b = benchmark(&r);
        assert_eq!(b.name, "refault");
        assert!(b.ops.is_empty());
    }
}
