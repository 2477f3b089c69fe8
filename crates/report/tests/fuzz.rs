//! A standing fuzz test of the result reader `refault compare` uses (issue 11, item 14).
//!
//! `refault compare` parses each file with `serde_json` (whose errors carry line and column)
//! and hands the documents to [`compare`], [`summary`] and [`lru_gen_text`], which must read
//! whatever a file holds: missing keys and values of the wrong type print as missing. Seeded
//! and bounded, under plain `cargo test`: the seeds are results in the shape the simulator
//! writes (classic and multi-gen LRU) and the golden counter files of the CLI's tests;
//! mutations are byte flips, inserts and deletes on the JSON text and structural ones on the
//! parsed document (a node replaced by null, a huge or negative or fractional number, a
//! string, an empty or deeply nested container; a key dropped). Property, for every input:
//! no panic, within [`PER_INPUT`]; a text that does not parse is an error with a line.
//!
//! `REFAULT_FUZZ_N` (default 10,000) and `REFAULT_FUZZ_SEED` as in the scenario crate's fuzz
//! test; failing inputs are written under `target/fuzz-failures/`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use refault_report::{compare, lru_gen_text, summary};
use serde_json::{json, Value};

const PER_INPUT: Duration = Duration::from_secs(5);

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn result(lru: &str) -> Value {
    let mut v = json!({
        "scenario": {"name": "seed", "policy": {"lru": lru, "balance": "classic",
                     "swap_readahead": "vma"}, "seed": 1},
        "sim_seconds": 2.5, "wall_seconds": 0.1, "events": 123456, "check_interval": 0,
        "vmstat": {"pgscan_kswapd": 100, "pgsteal_kswapd": 90, "pgscan_direct": 3,
                   "workingset_refault_file": 40, "workingset_refault_anon": 2,
                   "pswpin": 5, "pswpout": 9, "pgmajfault": 11, "nr_free_pages": 1000,
                   "oom_kill": 0, "allocstall_normal": 1},
        "tasks": [
            {"name": "reader", "ops": 1000, "ops_per_sec": 400.0, "cpu_seconds": 0.5,
             "major_faults": 3, "finished": true, "oom_killed": false,
             "latency_us": {"mean": 10.0, "p50": 5.0, "p90": 20.0, "p99": 90.0,
                            "p999": 200.0, "max": 400.0}},
            {"name": "reader", "ops": 990, "ops_per_sec": 396.0,
             "latency_us": {"mean": 11.0, "p50": 5.0, "p90": 21.0, "p99": 95.0,
                            "p999": 210.0, "max": 420.0}}
        ],
        "timeseries": {"t_s": [0.0, 1.0, 2.0], "nr_free_pages": [10, 20, 30],
                       "task.reader.ops": [0, 500, 1000]},
        "reclaim_cpu": {"kswapd": 0.01, "direct": 0.002}
    });
    if lru == "mglru" {
        v["lru_gen"] = json!([{
            "memcg": "/", "min_seq_anon": 1, "min_seq_file": 2, "max_seq": 4,
            "generations": [{"seq": 3, "age_ms": 100, "nr_anon": 10, "nr_file": 20},
                            {"seq": 4, "age_ms": 5, "nr_anon": 1, "nr_file": 2}],
            "tiers_anon": [{"tier": 0, "refaulted": 1, "evicted": 2, "protected": 0,
                            "avg_refaulted": 1, "avg_total": 2}],
            "tiers_file": [],
            "agings": 3, "vmas_walked": 4, "pmd_total": 5, "pmd_found": 6, "pmd_added": 7,
            "pte_total": 8, "pte_young": 9, "look_arounds": 10, "look_around_young": 11
        }]);
    }
    v
}

fn seeds() -> Vec<String> {
    let mut out = vec![
        serde_json::to_string_pretty(&result("classic")).unwrap(),
        serde_json::to_string_pretty(&result("mglru")).unwrap(),
    ];
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/golden");
    if let Ok(entries) = std::fs::read_dir(&golden) {
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for p in paths {
            // Flat counter files: wrap them as a result's vmstat.
            if let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(&p).unwrap()) {
                let mut r = result("classic");
                r["vmstat"] = v;
                out.push(serde_json::to_string(&r).unwrap());
            }
        }
    }
    out
}

fn odd_value(rng: &mut Rng) -> Value {
    match rng.below(12) {
        0 => Value::Null,
        1 => json!(u64::MAX),
        2 => json!(i64::MIN),
        3 => json!(-1),
        4 => json!(1e308),
        5 => json!(-0.5),
        6 => json!("x"),
        7 => json!([]),
        8 => json!({}),
        9 => json!(true),
        10 => {
            let mut v = json!(1);
            for _ in 0..64 {
                v = json!([v]);
            }
            v
        }
        _ => json!({"name": "", "ops": "many", "latency_us": [1, 2]}),
    }
}

/// Replaces (or drops) one node of `v`, chosen by a random walk.
fn mutate_tree(rng: &mut Rng, v: &mut Value, depth: usize) {
    if depth < 6 && rng.below(4) != 0 {
        match v {
            Value::Object(m) if !m.is_empty() => {
                let keys: Vec<String> = m.keys().cloned().collect();
                let k = keys[rng.below(keys.len())].clone();
                if rng.below(8) == 0 {
                    m.remove(&k);
                } else {
                    mutate_tree(rng, m.get_mut(&k).expect("a key just listed"), depth + 1);
                }
                return;
            }
            Value::Array(a) if !a.is_empty() => {
                let i = rng.below(a.len());
                mutate_tree(rng, &mut a[i], depth + 1);
                return;
            }
            _ => {}
        }
    }
    *v = odd_value(rng);
}

fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..=rng.below(3) {
        match rng.below(3) {
            0 if !b.is_empty() => {
                let i = rng.below(b.len());
                b[i] ^= 1 << rng.below(8);
            }
            1 => {
                let i = rng.below(b.len() + 1);
                let c = b"{}[],:\"0-e.9 \n\\"[rng.below(15)];
                b.insert(i, c);
            }
            _ if !b.is_empty() => {
                let i = rng.below(b.len());
                let n = rng.below(8).min(b.len() - i);
                b.drain(i..i + n);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// What `refault compare` and `refault run`'s summary do with two documents.
fn read_all(a: &str, b: &str) -> Result<(), String> {
    let parse = |t: &str| -> Result<Value, String> {
        serde_json::from_str::<Value>(t).map_err(|e| {
            if e.line() == 0 {
                format!("a JSON error without a line: {e}")
            } else {
                String::new()
            }
        })
    };
    let (va, vb) = match (parse(a), parse(b)) {
        (Ok(va), Ok(vb)) => (va, vb),
        (Err(e), _) | (_, Err(e)) if !e.is_empty() => return Err(e),
        _ => return Ok(()),
    };
    let _ = compare(&[("a".into(), va.clone()), ("b".into(), vb.clone())]).render_text();
    let _ = summary(&va);
    let _ = lru_gen_text(&vb);
    Ok(())
}

#[test]
fn fuzz_result_reader() {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let n: usize = std::env::var("REFAULT_FUZZ_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let seed: u64 = std::env::var("REFAULT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5eed_f022);
    let mut rng = Rng(seed.max(1));
    let corpus = seeds();
    let started = Instant::now();
    let mut failures = Vec::new();
    for i in 0..n {
        let base = &corpus[rng.below(corpus.len())];
        let other = &corpus[rng.below(corpus.len())];
        let mutated = if rng.below(2) == 0 {
            mutate_text(&mut rng, base)
        } else {
            let mut v: Value = serde_json::from_str(base).unwrap();
            for _ in 0..=rng.below(4) {
                mutate_tree(&mut rng, &mut v, 0);
            }
            serde_json::to_string(&v).unwrap()
        };
        let t = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| read_all(other, &mutated)));
        let why = match outcome {
            _ if t.elapsed() > PER_INPUT => Some(format!("took {:?}", t.elapsed())),
            Err(p) => Some(format!(
                "panicked: {}",
                p.downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_default()
            )),
            Ok(Err(e)) => Some(e),
            Ok(Ok(())) => None,
        };
        if let Some(why) = why {
            let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
            let _ = std::fs::create_dir_all(&dir);
            let path = dir.join(format!("result-{i}.json"));
            let _ = std::fs::write(&path, &mutated);
            failures.push(format!("input {i} ({}): {why}", path.display()));
        }
    }
    std::panic::set_hook(hook);
    eprintln!(
        "fuzz: {n} result documents in {:.1?}, {} failures",
        started.elapsed(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
