//! Same scenario + seed + binary = byte-identical JSON apart from `wall_seconds`.

use crate::util::{bin, root, scratch};
use std::process::Command;

fn run_json(scenario: &str, out: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let st = Command::new(bin())
        .arg("run")
        .arg(root().join(format!("scenarios/{scenario}.toml")))
        .arg("--out")
        .arg(out)
        .args(extra)
        .status()
        .unwrap();
    assert!(st.success());
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("wall_seconds");
    v
}

/// thrash-cache runs 20 simulated seconds; 5 of them already take it through many reclaim
/// cycles (and the quickstart ends sooner on its own).
const SHORT: &str = "run.duration=5s";

#[test]
fn same_scenario_twice_gives_identical_json() {
    let d = scratch("determinism");
    for s in ["quickstart", "thrash-cache"] {
        // Both LRU implementations (the multi-gen LRU adds its lru_gen view to the JSON).
        for lru in ["policy.lru=classic", "policy.lru=mglru"] {
            let a = run_json(s, &d.join("a.json"), &["--set", lru, "--set", SHORT]);
            let b = run_json(s, &d.join("b.json"), &["--set", lru, "--set", SHORT]);
            assert_eq!(
                serde_json::to_string(&a).unwrap(),
                serde_json::to_string(&b).unwrap(),
                "{s} ({lru}) differs between two runs"
            );
        }
    }
}

#[test]
fn a_different_seed_changes_the_run() {
    let d = scratch("determinism-seed");
    let a = run_json(
        "thrash-cache",
        &d.join("a.json"),
        &["--seed", "1", "--set", SHORT],
    );
    let b = run_json(
        "thrash-cache",
        &d.join("b.json"),
        &["--seed", "2", "--set", SHORT],
    );
    assert_ne!(a["vmstat"], b["vmstat"]);
}

/// File creation, slab caches and shrinkers are deterministic too.
#[test]
fn file_creation_stream_is_deterministic() {
    let d = scratch("determinism-s3");
    let small = [
        "--set",
        "machine.memory=64M",
        "--set",
        "machine.dma32=24M",
        "--set",
        "object.dir.size=256M",
    ];
    let a = run_json("s3-slab-boost", &d.join("a.json"), &small);
    let b = run_json("s3-slab-boost", &d.join("b.json"), &small);
    assert!(a["vmstat"]["slabs_scanned"].as_u64().unwrap() > 0);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

/// The result's `accesses` (the headline of `refault bench`) counts page accesses: one per
/// touch and one per page of a `read()`; think time, phase markers and the end-of-operation
/// events are events but not accesses.
#[test]
fn accesses_count_touches_and_the_pages_of_reads() {
    let r = crate::util::sim(
        r#"
name = "accesses"
[machine]
memory = "64M"
[[device]]
name = "disk"
preset = "nvme"
[[object]]
name = "heap"
kind = "anon"
size = "4M"
[[object]]
name = "data"
kind = "file"
size = "8M"
[[task]]
name = "t"
[[task.phase]]
name = "touch"
access = "touch"
object = "heap"
pattern = "random"
ops = 300
think = "1us"
[[task.phase]]
name = "read"
access = "read"
object = "data"
pattern = "sequential"
pages_per_op = 8
ops = 100
"#,
        &[],
    );
    assert_eq!(r.accesses, 300 + 100 * 8);
    assert!(r.events > r.accesses / 8 + 300, "events {}", r.events);
}
