//! Golden counters: the full vmstat map of bundled scenarios for fixed seeds. Any behaviour
//! change shows up as a readable per-counter diff; `REFAULT_BLESS=1 cargo test` rewrites the
//! files after a reviewed change.

use crate::util::root;
use std::collections::BTreeMap;

fn check(scenario: &str, seed: u64) {
    check_with(scenario, "", &[], seed);
}

/// Golden file `{scenario}{suffix}@{seed}.json` for the scenario with overrides.
fn check_with(scenario: &str, suffix: &str, overrides: &[(&str, &str)], seed: u64) {
    let path = root().join(format!("scenarios/{scenario}.toml"));
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let scn = refault_scenario::load(&path, &ov, Some(seed)).unwrap();
    let scenario = format!("{scenario}{suffix}");
    let r = refault_sim::run(&scn, Default::default()).unwrap();
    let mut got: BTreeMap<String, u64> = r.vmstat.clone();
    got.insert("events".into(), r.events);
    let golden = root().join(format!("crates/cli/tests/golden/{scenario}@{seed}.json"));
    if std::env::var_os("REFAULT_BLESS").is_some() {
        std::fs::write(&golden, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let text = std::fs::read_to_string(&golden)
        .unwrap_or_else(|_| panic!("{} missing: run with REFAULT_BLESS=1", golden.display()));
    let want: BTreeMap<String, u64> = serde_json::from_str(&text).unwrap();
    let mut diff = String::new();
    for k in want
        .keys()
        .chain(got.keys().filter(|k| !want.contains_key(*k)))
    {
        let (w, g) = (want.get(k), got.get(k));
        if w != g {
            diff += &format!("  {k}: golden {w:?}, now {g:?}\n");
        }
    }
    assert!(
        diff.is_empty(),
        "{scenario}@{seed} counters changed (REFAULT_BLESS=1 to accept):\n{diff}"
    );
}

#[test]
fn golden_quickstart_seed_1() {
    check("quickstart", 1);
}

#[test]
fn golden_quickstart_seed_7() {
    check("quickstart", 7);
}

#[test]
fn golden_thrash_cache_seed_1() {
    check("thrash-cache", 1);
}

/// The multi-gen LRU on the same scenarios.
#[test]
fn golden_quickstart_mglru_seed_1() {
    check_with("quickstart", "-mglru", &[("policy.lru", "mglru")], 1);
}

#[test]
fn golden_thrash_cache_mglru_seed_1() {
    check_with("thrash-cache", "-mglru", &[("policy.lru", "mglru")], 1);
}

#[test]
fn golden_s4_highalloc_seed_1() {
    check("s4-highalloc", 1);
}

#[test]
fn golden_s4_highalloc_kswapd_compaction_seed_1() {
    check_with(
        "s4-highalloc",
        "-kswapd",
        &[("policy.kswapd_compaction", "kswapd")],
        1,
    );
}

/// A small file-creation stream (seed S3's scenario at a quarter size): slab caches,
/// shrinkers, inode steals and writeback of created inodes.
#[test]
fn golden_s3_slab_boost_small_seed_1() {
    check_with(
        "s3-slab-boost",
        "-small",
        &[
            ("machine.memory", "128M"),
            ("machine.dma32", "48M"),
            ("object.dir.size", "512M"),
        ],
        1,
    );
}

/// Transparent huge pages on anonymous faults: THP faults with and without direct
/// compaction, fallbacks, THP swap-out to zram.
#[test]
fn golden_thp_seed_1() {
    check("thp", 1);
}
