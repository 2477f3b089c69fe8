//! `refault run --mmtests-log DIR` and `refault mmtests-export`: the files mmtests' reporting
//! reads (crates/cli/tests/mmtests/README.md), parsed here the way mmtests parses them.

use crate::util::{bin, root, scratch};
use std::collections::BTreeMap;
use std::process::Command;

/// A short pgbench run: 10 s of warm-up, 40 s measured, a sample every 10 s.
/// `sets` are further `--set` overrides (the multi-gen LRU needs a kernel of 6.1 or later:
/// the scenario says the seed's 4.7).
fn pgbench(dir: &std::path::Path, name: &str, sets: &[&str]) -> serde_json::Value {
    let out = dir.join(format!("{name}.json"));
    let mut cmd = Command::new(bin());
    cmd.arg("run")
        .arg(root().join("scenarios/s0-pgbench.toml"))
        .args(["--set", "run.duration=50s", "--set", "run.warmup=10s"])
        .args(["--set", "run.sample_interval=10s"]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    let o = cmd
        .arg("--mmtests-log")
        .arg(dir.join("log"))
        .args(["--mmtests-name", name, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
}

/// MonitorMmtestsvmstat's reading of tests-sysstate: the before and after /proc/vmstat
/// blocks (the zoneinfo header ends a block) and the `time ::` line's eighth field.
fn parse_sysstate(text: &str) -> (BTreeMap<String, i64>, BTreeMap<String, i64>, f64) {
    let (mut before, mut after) = (BTreeMap::new(), BTreeMap::new());
    let (mut rb, mut ra, mut elapsed) = (false, false, 0.0);
    for l in text.lines() {
        match l {
            _ if l.starts_with("time :: pgbench") => {
                elapsed = l.split(' ').nth(7).unwrap().parse().unwrap();
            }
            "file start :: /proc/vmstat" => rb = true,
            "file start :: /proc/zoneinfo" => rb = false,
            "file end :: /proc/vmstat" => ra = true,
            "file end :: /proc/zoneinfo" => ra = false,
            _ if rb || ra => {
                let (k, v) = l.split_once(' ').unwrap_or_else(|| panic!("line {l:?}"));
                let v: i64 = v.parse().unwrap_or_else(|_| panic!("line {l:?}"));
                if rb { &mut before } else { &mut after }.insert(k.to_string(), v);
            }
            _ => {}
        }
    }
    (before, after, elapsed)
}

/// A line's shape: numbers replaced by `N`.
fn shape(l: &str) -> String {
    l.split(' ')
        .map(|w| if w.parse::<f64>().is_ok() { "N" } else { w })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn export_has_the_layout_mmtests_reads() {
    let d = scratch("mmtests-layout");
    let r = pgbench(&d, "classic", &["policy.lru=classic"]);
    let text = std::fs::read_to_string(d.join("log/classic/iter-0/tests-sysstate")).unwrap();
    // The structural lines, in order, against the checked-in layout.
    let structure: Vec<String> = text
        .lines()
        .filter(|l| l.contains("::"))
        .map(shape)
        .collect();
    let want = std::fs::read_to_string(root().join("crates/cli/tests/mmtests/layout.txt")).unwrap();
    assert_eq!(structure, want.lines().collect::<Vec<_>>());
    // As mmtests reads it: after - before is the result's counter over the measured window,
    // and the elapsed time is the measured window.
    let (before, after, elapsed) = parse_sysstate(&text);
    assert_eq!(elapsed, 40.0);
    for k in [
        "pgscan_kswapd",
        "pgsteal_kswapd",
        "pgpgin",
        "pswpout",
        "workingset_refault_file",
    ] {
        let v = r["vmstat"][k].as_i64().unwrap();
        assert_eq!(after[k] - before[k], v, "{k}");
    }
    assert!(
        r["vmstat"]["pgpgin"].as_i64().unwrap() > 0,
        "the run reads its database"
    );
    // The gauges' "before" is the state at the end of the warm-up, not 0.
    assert!(before["nr_inactive_file"] > 0);
    // The per-interval transactions for compare-mmtests.pl --from-json.
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("log/pgbench.json")).unwrap()).unwrap();
    let m = &j[0];
    assert_eq!(m["_ModuleName"], "Extractpgbench");
    assert_eq!(m["_TestName"], "classic");
    let it = &m["_ResultData"]["txn-8"][0];
    assert_eq!(it["SampleNrs"], serde_json::json!([10.0, 20.0, 30.0, 40.0]));
    let tps: f64 = it["Values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() * 10.0)
        .sum();
    // Four 10 s intervals of all eight clients: the clients' transactions in the window.
    let ops: u64 = r["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().unwrap().starts_with("client"))
        .map(|t| t["ops"].as_u64().unwrap())
        .sum();
    assert!(ops > 0);
    assert!((tps - ops as f64).abs() <= 8.0, "{tps} vs {ops}");
}

#[test]
fn a_second_run_joins_the_comparison_and_export_names_runs_by_file() {
    let d = scratch("mmtests-two");
    pgbench(&d, "classic", &["policy.lru=classic"]);
    pgbench(&d, "mglru", &["policy.lru=mglru", "model.kernel=\"6.1\""]);
    let j: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("log/pgbench.json")).unwrap()).unwrap();
    let names: Vec<&str> = j
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["_TestName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["classic", "mglru"]);
    assert!(d.join("log/mglru/iter-0/tests-sysstate").is_file());
    // The export command writes the same files from the results.
    let o = Command::new(bin())
        .args(["mmtests-export", "--dir"])
        .arg(d.join("export"))
        .arg(d.join("classic.json"))
        .arg(d.join("mglru.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in [
        "classic/iter-0/tests-sysstate",
        "mglru/iter-0/tests-sysstate",
        "pgbench.json",
    ] {
        assert_eq!(
            std::fs::read(d.join("export").join(f)).unwrap(),
            std::fs::read(d.join("log").join(f)).unwrap(),
            "{f}"
        );
    }
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("compare-mmtests.pl -d"), "{err}");
    // A run name mmtests cannot use is refused before simulating.
    let o = Command::new(bin())
        .arg("run")
        .arg(root().join("scenarios/quickstart.toml"))
        .args(["--mmtests-log"])
        .arg(d.join("log"))
        .args(["--mmtests-name", "a,b"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("run name"));
}
