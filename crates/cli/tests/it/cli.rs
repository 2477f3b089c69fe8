//! The commands' output contracts.

use crate::util::{bin, results_bin, root, scratch};
use std::process::Command;

#[test]
fn run_writes_the_result_json_contract() {
    let d = scratch("cli-run");
    let out = d.join("r.json");
    let st = Command::new(bin())
        .args([
            "run",
            root().join("scenarios/quickstart.toml").to_str().unwrap(),
        ])
        .args(["--set", "vm.swappiness=100", "--out", out.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(st.success());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    for k in [
        "scenario",
        "vmstat",
        "tasks",
        "timeseries",
        "sim_seconds",
        "wall_seconds",
        "events",
    ] {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(v["scenario"]["sysctl"]["swappiness"], 100);
    for c in [
        "pgscan_kswapd",
        "pgscan_direct",
        "pgscan_anon",
        "pgscan_file",
        "pgsteal_kswapd",
        "pgsteal_direct",
        "pgsteal_anon",
        "pgsteal_file",
        "pgrefill",
        "pgactivate",
        "pgdeactivate",
        "pgrotated",
        "pgmajfault",
        "pgfault",
        "pswpin",
        "pswpout",
        "workingset_refault_anon",
        "workingset_refault_file",
        "workingset_activate_anon",
        "workingset_activate_file",
        "workingset_restore_anon",
        "workingset_restore_file",
        "allocstall_movable",
        "allocstall_normal",
        "allocstall_dma32",
        "allocstall_dma",
        "pgalloc_dma",
        "nr_mlock",
        "unevictable_pgs_mlocked",
    ] {
        assert!(v["vmstat"].get(c).is_some(), "missing counter {c}");
    }
    let t = &v["tasks"][0];
    for k in ["name", "ops", "ops_per_sec", "latency_us"] {
        assert!(t.get(k).is_some(), "task missing {k}");
    }
    assert!(v["timeseries"]["t_s"].as_array().unwrap().len() > 1);
}

#[test]
fn run_without_out_prints_a_summary() {
    let o = Command::new(bin())
        .args([
            "run",
            root().join("scenarios/quickstart.toml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(
        s.contains("workingset_refault_file") && s.contains("tasks"),
        "{s}"
    );
}

/// `--lru-gen-stats` prints each memcg's generations under the multi-gen LRU, and is refused
/// (exit 2, before simulating) for a classic-LRU run.
#[test]
fn run_lru_gen_stats() {
    let scn = root().join("scenarios/quickstart.toml");
    let o = Command::new(bin())
        .args([
            "run",
            scn.to_str().unwrap(),
            "--set",
            "policy.lru=mglru",
            "--lru-gen-stats",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{text}");
    let stats = text
        .split("\nlru_gen\n")
        .nth(1)
        .expect("an lru_gen section");
    assert!(stats.starts_with("memcg     0 /\n node     0\n"), "{stats}");
    assert!(
        stats.contains("min_seq anon") && stats.contains("file tier"),
        "{stats}"
    );
    let o = Command::new(bin())
        .args(["run", scn.to_str().unwrap(), "--lru-gen-stats"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("does not run the multi-gen LRU"), "{err}");
}

#[test]
fn run_check_validates_invariants() {
    let o = Command::new(bin())
        .args([
            "run",
            root().join("scenarios/quickstart.toml").to_str().unwrap(),
            "--check",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn compare_prints_percent_changes() {
    let d = scratch("cli-compare");
    for (n, sw) in [("a", "10"), ("b", "200")] {
        let st = Command::new(bin())
            .args([
                "run",
                root().join("scenarios/thrash-cache.toml").to_str().unwrap(),
            ])
            .args(["--set", &format!("vm.swappiness={sw}")])
            // A fifth of the bundled run: reclaim has balanced anon and file by then.
            .args(["--set", "run.duration=4s", "--set", "run.warmup=1s"])
            .args(["--out", d.join(format!("{n}.json")).to_str().unwrap()])
            .status()
            .unwrap();
        assert!(st.success());
    }
    let o = Command::new(bin())
        .arg("compare")
        .arg(d.join("a.json"))
        .arg(d.join("b.json"))
        .args(["--out", d.join("t.json").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success());
    let s = String::from_utf8(o.stdout).unwrap();
    assert!(s.contains("pgscan_anon") && s.contains('%'), "{s}");
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("t.json")).unwrap()).unwrap();
    assert!(!t["rows"].as_array().unwrap().is_empty());
}

/// Run `refault reproduce NAME --quick --out`, check it succeeds and reports every direction
/// of the seed as reproduced, and return its JSON.
fn reproduce_quick(name: &str) -> serde_json::Value {
    let (text, v) = reproduce_quick_text(name);
    assert!(
        text.contains("every direction the seed reports is reproduced"),
        "{text}"
    );
    v
}

/// Run `refault reproduce NAME --quick --out`, check it succeeds, and return its text and
/// JSON.
fn reproduce_quick_text(name: &str) -> (String, serde_json::Value) {
    let d = scratch(&format!("cli-reproduce-{name}"));
    let out = d.join("table.json");
    let o = Command::new(results_bin())
        .args(["reproduce", name, "--quick", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{text}");
    let v = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (text, v)
}

/// `refault reproduce mglru --quick`: every direction of seed S1's table holds (throughput
/// higher under the multi-gen LRU, rmap-walk CPU lower), no run is OOM-killed, the runs
/// follow the seed's kernel, and the JSON names the policies.
#[test]
fn reproduce_mglru_quick_matches_the_seed_directions() {
    let (text, v) = reproduce_quick_text("mglru");
    assert_eq!(v["reproduce"], "mglru");
    // The seed's kernel (5.17-rc2 and the series on it; the model's nearest is 6.1): reclaim
    // reads exact memcg statistics. Under 6.18's ratelimited flush the 1/256-scaled memcached
    // run drains its inactive anon list between two flushes, reclaim stops deactivating and
    // every server thread was OOM-killed.
    assert_eq!(v["kernel"], "6.1");
    assert!(text.contains("kernel 6.1 rules"), "{text}");
    assert!(!text.contains("OOM-killed"), "{text}");
    let policies: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(policies, ["classic", "mglru", "classic", "mglru"]);
    let mglru = &v["runs"][3]["result"];
    assert!(mglru["lru_gen"].as_array().is_some_and(|a| !a.is_empty()));
    assert!(v["runs"][2]["result"].get("lru_gen").is_none());
}

/// `refault reproduce kcompactd --quick` runs the seed's kernel, 4.6 (title and JSON say
/// so). Under its rules (kswapd balances at the order-0 watermark plus the request and
/// leaves the high-order page to kcompactd; ext4 page cache in order-0 folios only, as
/// before v6.16; v4.7's reclaim balancing) every direction of the seed's table holds since
/// issue 13's page-lock fix (compaction migrates a page-cache folio whose read has
/// completed): GFP_NOWAIT success rises in all three phases (4.5% -> 36.5% / 4.5% -> 31% /
/// 19.5% -> 71.5%; the seed: 1.4 -> 6.2 / 1.8 -> 6.4 / 41.8 -> 63.8); before the fix phases 1
/// and 2 stayed at 4.5%. With direct reclaim and compaction allowed phases 1 and 2 do not
/// fall (68.5 -> 75.5%, 68 -> 88%; the seed: 8 -> 10%, 8.2 -> 10%) and phase 3 is about
/// equal. README.md, S4. Compaction work by kcompactd only after the change, fewer direct
/// compaction stalls, and the runs carry the buddyinfo view and the compaction figures.
#[test]
fn reproduce_kcompactd_quick_runs_the_seed_kernel() {
    let (text, v) = reproduce_quick_text("kcompactd");
    assert_eq!(v["kernel"], "4.6");
    assert!(text.contains("kernel 4.6 rules"), "{text}");
    assert!(
        text.contains("every direction the seed reports is reproduced"),
        "{text}"
    );
    let table = v["table"].as_array().unwrap();
    let holds: Vec<bool> = table
        .iter()
        .filter(|r| r["figure"].as_str().unwrap().starts_with("Success"))
        .map(|r| r["direction_holds"].as_bool().unwrap())
        .collect();
    assert_eq!(holds[..3], [true, true, true]);
    let success = |run: usize, phase: &str| {
        let t = v["runs"][run]["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == phase)
            .unwrap();
        t["kalloc_success"].as_f64().unwrap_or(0.0) / t["kalloc_attempts"].as_f64().unwrap()
    };
    // With direct reclaim and compaction allowed, phases 1 and 2 succeed about as often
    // under both policies, or more often with kcompactd (seed: 8 -> 10 and 8.2 -> 10; issue
    // 13: "success about equal"): kcompactd's run may be at most 5 points (10 of 200
    // attempts) lower. Since v4.6's compaction_ready() and should_continue_reclaim()
    // (branch s4k) phase 1 is 88% -> 87%.
    for phase in ["highalloc-1", "highalloc-2"] {
        let (b, c) = (success(2, phase), success(3, phase));
        assert!(b > 0.0 && c >= b - 0.05, "{phase}: {b} -> {c}");
    }
    let policies: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["policy"].as_str().unwrap())
        .collect();
    assert_eq!(policies, ["kswapd", "kcompactd", "kswapd", "kcompactd"]);
    let old = &v["runs"][0]["result"];
    let new = &v["runs"][1]["result"];
    assert_eq!(old["compaction"]["kcompactd_awake_seconds"], 0.0);
    assert!(
        new["compaction"]["kcompactd_awake_seconds"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert_eq!(old["vmstat"]["compact_daemon_wake"], 0);
    let b = new["buddyinfo"].as_array().unwrap();
    assert!(b.len() > 10);
    // 512 MiB in one Normal zone (dma32 = 0): 256 pageblocks, the top 4 wholly reserved at
    // boot (131072 * 120286 / 6287360 = 2507 pages) and so unmovable.
    let z = &b[0]["zones"][0];
    assert_eq!(z["free_blocks"].as_array().unwrap().len(), 11);
    assert_eq!(z["pageblocks_by_type"]["Movable"], 252);
    assert_eq!(z["pageblocks_by_type"]["Unmovable"], 4);
    // Phase 3 runs "at rest" as mmtests' script prepares it: the caches are dropped before
    // it, and with direct reclaim and compaction allowed its success is about equal under
    // both policies (seed: 75.6% and 75.2%; before the drop it was 16% against 70.5%).
    let runs = v["runs"].as_array().unwrap();
    for r in runs {
        assert_eq!(r["result"]["vmstat"]["drop_pagecache"], 1);
    }
    let phase3 = |r: &serde_json::Value| {
        let t = r["result"]["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "highalloc-3")
            .unwrap();
        t["kalloc_success"].as_f64().unwrap_or(0.0) / t["kalloc_attempts"].as_f64().unwrap()
    };
    let (b3, c3) = (phase3(&runs[2]), phase3(&runs[3]));
    assert!((c3 - b3).abs() / b3 < 0.25, "phase 3: {b3} -> {c3}");
}

/// `refault reproduce lru-balance --quick`: every direction of seed S0's table holds.
#[test]
fn reproduce_lru_balance_quick_matches_the_seed_directions() {
    let (text, v) = reproduce_quick_text("lru-balance");
    let table = v["table"].as_array().unwrap();
    for row in table {
        for k in ["figure", "baseline", "change", "percent"] {
            assert!(row.get(k).is_some(), "row missing {k}");
        }
    }
    // Every row holds, the refault reduction's size (at least 25%) included.
    assert!(!text.contains("differs from the seed"), "{text}");
    let total = table
        .iter()
        .find(|r| r["figure"].as_str().unwrap().starts_with("total refaults"))
        .unwrap();
    let (b, c) = (
        total["baseline"].as_f64().unwrap(),
        total["change"].as_f64().unwrap(),
    );
    // The seed: -54%. -35.07% (82798 -> 53762) since both runs follow the seed's kernel,
    // 4.7 (v4.7's reclaim rules, the legacy balance's use-once bias, and the series as
    // posted for refault-cost); -11.39% before, under v5.5-v5.7 rules.
    assert!(c < b * 0.75, "total refaults fell only from {b} to {c}");
    // pgbench under both balances, then parallelio under both at each of the seed's four IO
    // sizes (0, 769M, 2565M, 4361M scaled 1/16: 0, 48, 160, 272 MiB): the 0 MiB step runs
    // no dd, the others write that much.
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 10);
    for (i, want) in [None, None, Some("48M"), Some("160M"), Some("272M")]
        .iter()
        .enumerate()
    {
        let (b, c) = (&runs[2 * i], &runs[2 * i + 1]);
        assert_eq!(
            (&b["policy"], &c["policy"]),
            (&"legacy".into(), &"refault-cost".into())
        );
        if i == 0 {
            continue;
        }
        let has_dd = |r: &serde_json::Value| {
            r["result"]["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "dd")
        };
        assert_eq!(has_dd(b), want.is_some(), "run {}", 2 * i);
        if let Some(size) = want {
            assert_eq!(b["set"][0], format!("object.largefile.size={size}"));
        }
    }
    // Every parallelio table has the seed's three checks; the dd steps add the duration.
    for title in ["dd 0 MiB", "dd 48 MiB", "dd 160 MiB", "dd 272 MiB"] {
        let rows: Vec<&str> = table
            .iter()
            .filter(|r| r["table"].as_str().unwrap().contains(title))
            .map(|r| r["figure"].as_str().unwrap())
            .collect();
        assert!(rows.contains(&"memcached ops/s"), "{title}: {rows:?}");
        assert!(
            rows.contains(&"swap activity (swap in + swap out)"),
            "{title}"
        );
        assert_eq!(
            rows.contains(&"dd duration (s)"),
            title != "dd 0 MiB",
            "{title}"
        );
    }
}

/// `refault reproduce swap-readahead --quick`: every direction of seed S2's tables holds
/// (VMA readahead: higher sequential throughput, lower latency, higher hit rate; Linpack
/// faster), and the runs are the two scenarios under cluster and VMA readahead.
#[test]
fn reproduce_swap_readahead_quick_matches_the_seed_directions() {
    let v = reproduce_quick("swap-readahead");
    let runs: Vec<(&str, &str)> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["scenario"].as_str().unwrap(),
                r["policy"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("s2-vm-scalability", "cluster"),
            ("s2-vm-scalability", "vma"),
            ("s2-linpack", "cluster"),
            ("s2-linpack", "vma"),
        ]
    );
    let hit = |i: usize| {
        let vm = &v["runs"][i]["result"]["vmstat"];
        vm["swap_ra_hit"].as_f64().unwrap() / vm["swap_ra"].as_f64().unwrap().max(1.0)
    };
    // VMA readahead's hits: nearly every page read ahead is used.
    assert!(hit(1) > 0.99 && hit(3) > 0.99, "{} {}", hit(1), hit(3));
}

/// `run.sample_interval = "auto"` (the default): a run with a duration gets 200 intervals;
/// a run that lasts until its tasks end starts at 10 ms and halves its resolution as it goes,
/// ending with 200-400 evenly spaced samples. Either way the samples only observe: the
/// counters equal those of a run sampled every second.
#[test]
fn automatic_sample_interval_gives_about_200_samples_and_changes_nothing() {
    let d = scratch("cli-auto-sample");
    // 4,000 touches 25 ms apart: 100 s simulated in a few thousand events.
    let toml = "[machine]\nmemory = \"64M\"\n[[object]]\nname = \"a\"\nkind = \"anon\"\n\
                size = \"8M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch-write\"\n\
                object = \"a\"\npattern = \"random\"\nops = 4000\nthink = \"25ms\"\n";
    let s = d.join("s.toml");
    std::fs::write(&s, toml).unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = d.join("r.json");
        let st = Command::new(bin())
            .arg("run")
            .arg(&s)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            st.status.success(),
            "{}",
            String::from_utf8_lossy(&st.stderr)
        );
        serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap()
    };
    let t_s = |v: &serde_json::Value| -> Vec<f64> {
        v["timeseries"]["t_s"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let adaptive = run(&[]);
    assert_eq!(adaptive["scenario"]["run"]["sample_interval_ns"], 0);
    let t = t_s(&adaptive);
    let end = adaptive["sim_seconds"].as_f64().unwrap();
    assert!(end > 99.0, "{end}");
    // The boundary samples (all but the end-of-run one), evenly spaced by 10 ms x 2^k.
    let step = t[1] - t[0];
    let k = (step / 0.01).log2();
    assert!((k - k.round()).abs() < 1e-9, "interval {step}");
    for w in t[..t.len() - 1].windows(2) {
        assert!(
            (w[1] - w[0] - step).abs() < 1e-9,
            "{w:?} with interval {step}"
        );
    }
    assert!((201..=402).contains(&(t.len() - 1)), "{} samples", t.len());
    let fixed = run(&["--set", "run.sample_interval=1s"]);
    assert_eq!(t_s(&fixed).len(), 101 + usize::from(end > 100.0));
    assert_eq!(adaptive["vmstat"], fixed["vmstat"]);
    assert_eq!(adaptive["tasks"], fixed["tasks"]);
    // With a duration: the duration / 200.
    let timed = run(&["--set", "run.duration=50s"]);
    assert_eq!(
        timed["scenario"]["run"]["sample_interval_ns"],
        250_000_000u64
    );
    assert_eq!(t_s(&timed).len(), 201);
    // 0 is refused with the key's place; "auto" can be set explicitly.
    let o = Command::new(bin())
        .arg("run")
        .arg(&s)
        .args(["--set", "run.sample_interval=0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("sample_interval"));
    let auto = run(&["--set", "run.sample_interval=auto"]);
    assert_eq!(t_s(&auto), t);
}

/// `refault reproduce --kernel` belongs to the reproductions that run their seed's kernel
/// (slab-boost, kcompactd, mglru): another reproduction refuses it
/// (exit 2) before running anything.
#[test]
fn reproduce_kernel_option_is_for_slab_boost_only() {
    let o = Command::new(bin())
        .args(["reproduce", "lru-balance", "--quick", "--kernel", "5.3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--kernel applies to"));
}

/// `reproduce kcompactd --kernel` below kcompactd's first release (4.6) is refused with the
/// scenario key's error, exit 2.
#[test]
fn reproduce_kcompactd_kernel_before_kcompactd_is_refused() {
    let o = Command::new(bin())
        .args(["reproduce", "kcompactd", "--quick", "--kernel", "4.5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("model.kernel") && e.contains("kcompactd's first release is 4.6"),
        "{e}"
    );
}

/// `refault reproduce slab-boost --quick`: both runs complete, the table has the seed's
/// figures, fs_mark's files/sec carry mmtests' statistics and the time series the slab
/// gauges. (The model does not reproduce every direction of seed S3 yet: README.md, S3.)
#[test]
fn reproduce_slab_boost_quick_reports_the_seed_figures() {
    let d = scratch("cli-reproduce-slab-boost");
    let out = d.join("table.json");
    let o = Command::new(bin())
        .args([
            "reproduce",
            "slab-boost",
            "--quick",
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{text}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["reproduce"], "slab-boost");
    // The seed's kernel, said in the title and recorded in every run.
    assert_eq!(v["kernel"], "5.3");
    assert!(text.contains("kernel 5.3 rules"), "{text}");
    let figures: Vec<&str> = v["table"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["figure"].as_str().unwrap())
        .collect();
    for f in [
        "slab/pagecache ratio (steady-state mean)",
        "kswapd_inodesteal",
        "slabs_scanned stddev per interval",
        "kswapd efficiency %",
        "nr_vmscan_immediate_reclaim",
        "kswapd reclaim in boosted passes %",
        "boosted kswapd runs dropping the boost %",
        "files/sec Hmean",
    ] {
        assert!(figures.contains(&f), "{f} missing: {figures:?}");
    }
    for (i, policy) in ["true", "false"].iter().enumerate() {
        assert_eq!(v["runs"][i]["policy"], *policy);
        let r = &v["runs"][i]["result"];
        assert_eq!(
            r["scenario"]["policy"]["boosted_reclaim_skips_slab"],
            *policy == "true"
        );
        assert_eq!(r["scenario"]["model"]["kernel"], "5.3");
        let slab = r["timeseries"]["nr_slab_reclaimable"].as_array().unwrap();
        assert!(slab.iter().any(|x| x.as_f64().unwrap() > 0.0));
        let s = &v["files_per_sec"][i];
        assert!(s["hmean"].as_f64().unwrap() > 0.0 && s["n"].as_u64().unwrap() > 5);
        // kswapd's boosted/normal split: boosted runs, some of them dropping the boost;
        // boosted passes scan no slab under the old rule, some under the fix; every
        // kswapd_inodesteal and slabs_scanned of the run falls in one of the two kinds
        // (no warm-up here, and kswapd is the only reclaimer: pgscan_direct is 0).
        let k = &r["kswapd_boost"];
        let n = |key: &str| k[key].as_u64().unwrap();
        assert!(n("runs") >= n("boosted_runs") && n("boosted_runs") > n("boost_dropped"));
        assert!(n("boost_dropped") > 0 && n("boosted_passes") > 0, "{k}");
        let vm = |key: &str| r["vmstat"][key].as_u64().unwrap();
        assert_eq!(vm("pgscan_direct"), 0);
        assert_eq!(
            n("inodesteal_boosted") + n("inodesteal_normal"),
            vm("kswapd_inodesteal")
        );
        assert_eq!(
            n("slabs_scanned_boosted") + n("slabs_scanned_normal"),
            vm("slabs_scanned")
        );
        assert!(n("reclaimed_boosted") + n("reclaimed_normal") >= vm("pgsteal_kswapd"));
        assert_eq!(n("slabs_scanned_boosted") == 0, *policy == "true", "{k}");
        // Every mm_page_alloc_extfrag event falls in one zone's fragmenting or
        // whole-pageblock count; the fragmenting ones boosted (5.3 rules).
        let mut fallbacks = 0;
        let mut fragmenting = 0;
        let mut boosts = 0;
        for z in r["watermarks"].as_array().unwrap() {
            let x = &z["extfrag"];
            let sum = |key: &str| {
                x[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_u64().unwrap())
                    .sum::<u64>()
            };
            fallbacks += sum("fragmenting") + sum("whole_pageblock");
            fragmenting += sum("fragmenting");
            boosts += x["boosts"].as_u64().unwrap();
        }
        assert_eq!(fallbacks, vm("mm_page_alloc_extfrag"));
        assert!(
            fragmenting > 0 && boosts > 0 && boosts <= fragmenting,
            "{fragmenting} {boosts}"
        );
    }
}
