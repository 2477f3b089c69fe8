//! The multi-gen LRU: what its design dictates.

use crate::util::{sim, vm};

const MACHINE: &str = r#"
[machine]
memory = "128M"
cpus = 2
[[device]]
name = "disk"
preset = "nvme"
[[device]]
name = "zram0"
preset = "zram"
[fs]
device = "disk"
[[swap.area]]
device = "zram0"
size = "256M"
"#;

/// A hot anon set survives a buffered read stream: stream pages read once enter the oldest
/// generation (lru_gen_folio_seq) and are evicted from there, while the anon set, faulted in
/// young and kept young by its accesses (look-around and the page-table walk), never reaches
/// the oldest generation.
#[test]
fn hot_anon_survives_a_buffered_stream() {
    let toml = format!(
        r#"
[run]
duration = "20s"
[policy]
lru = "mglru"
{MACHINE}
[[object]]
name = "hot"
kind = "anon"
size = "48M"
[[object]]
name = "stream"
kind = "file"
size = "512M"
[[task]]
name = "hot"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "hot"
pattern = "sequential"
think = "2us"
[[task]]
name = "stream"
start = "1s"
[[task.phase]]
access = "read"
object = "stream"
pattern = "sequential"
pages_per_op = 32
"#
    );
    let r = sim(&toml, &[]);
    let hot_pages = 48 * 256;
    assert!(
        vm(&r, "pgsteal_file") > 3 * hot_pages,
        "stream not reclaimed"
    );
    assert!(
        vm(&r, "pswpout") < hot_pages / 20,
        "pswpout {}",
        vm(&r, "pswpout")
    );
    assert!(vm(&r, "nr_anon_pages") > hot_pages * 95 / 100);
}

/// Pages read twice through a descriptor are protected by their tier once their refault rate
/// is higher than the first tier's: a small file read at random (each page a few times between
/// evictions: refs 2..4, tiers 1 and 2) beside a stream read once (tier 0, which never
/// refaults). Hot pages evicted early refault (lru_gen_refault() restores their refs and
/// credits their tier), so tiers 1 and 2 refault at a far higher rate than tier 0; the
/// controller (get_tier_idx) then protects them, and sort_folio() moves such folios to the
/// next generation instead of evicting them, counting them as protected.
#[test]
fn fd_tiers_protect_pages_read_twice() {
    let toml = format!(
        r#"
[run]
duration = "30s"
[policy]
lru = "mglru"
{MACHINE}
[[object]]
name = "hot"
kind = "file"
size = "40M"
[[object]]
name = "stream"
kind = "file"
size = "2G"
[[task]]
name = "hot"
repeat = 0
[[task.phase]]
access = "read"
object = "hot"
pattern = "random"
think = "20us"
[[task]]
name = "stream"
start = "1s"
[[task.phase]]
access = "read"
object = "stream"
pattern = "sequential"
pages_per_op = 32
"#
    );
    let r = sim(&toml, &[]);
    let lg = &r.lru_gen.as_ref().expect("lru_gen in the result")[0];
    let t = &lg.tiers_file;
    let rate = |tiers: &[refault_sim::result::LruGenTier]| {
        let refaulted: u64 = tiers.iter().map(|t| t.refaulted + t.avg_refaulted).sum();
        let total: u64 = tiers
            .iter()
            .map(|t| t.evicted + t.protected + t.avg_total)
            .sum();
        refaulted as f64 / total.max(1) as f64
    };
    // The stream went through and is the bulk of tier 0, which barely refaults...
    assert!(vm(&r, "pgsteal_file") > 8 * 40 * 256);
    assert!(
        rate(&t[..1]) < 0.05,
        "tier 0 refault rate {}",
        rate(&t[..1])
    );
    // ...while pages read more than once refault when evicted, so they were protected.
    assert!(
        rate(&t[1..3]) > 0.5,
        "tiers 1-2 refault rate {}",
        rate(&t[1..3])
    );
    let protected: u64 = t[1..].iter().map(|t| t.protected).sum();
    assert!(protected > 0, "no folio of a tier above 0 was protected");
}

/// A workload that thrashes its generations triggers aging: random touches of an anon region
/// larger than memory evict the oldest generations until only two are left, and
/// try_to_inc_max_seq() walks the page tables (the walk's PTE count and CPU are visible) to
/// create new ones.
#[test]
fn thrashing_a_generation_triggers_aging() {
    let toml = format!(
        r#"
[run]
duration = "10s"
[policy]
lru = "mglru"
{MACHINE}
[[object]]
name = "big"
kind = "anon"
size = "160M"
[[task]]
name = "toucher"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "big"
pattern = "random"
# No MADV_RANDOM: a VMA without recency is skipped by the walk (should_skip_vma()).
advice = "normal"
"#
    );
    let r = sim(&toml, &[]);
    let lg = &r.lru_gen.as_ref().expect("lru_gen in the result")[0];
    assert!(lg.agings >= 2, "agings {}", lg.agings);
    assert!(lg.max_seq >= 5, "max_seq {}", lg.max_seq);
    assert!(lg.pte_total > 0 && lg.pte_young > 0, "walk saw no PTEs");
    assert!(r.reclaim_cpu.page_table_walk > 0.0);
    assert!(vm(&r, "pswpout") > 0 && vm(&r, "workingset_refault_anon") > 0);
}

/// The classic-only balance model is refused with the multi-gen LRU, naming both keys.
#[test]
fn legacy_balance_is_refused_with_mglru() {
    let toml = format!(
        "[run]\nduration = \"1s\"\n[policy]\nlru = \"mglru\"\nbalance = \"legacy\"\n{MACHINE}\n[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch\"\nobject = \"a\"\n"
    );
    // Refused at load time, at the key.
    let e = refault_scenario::parse(&toml, "t.toml", &[], None)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("t.toml:5:"), "{e}");
    assert!(e.contains("policy.balance") && e.contains("mglru"), "{e}");
}

/// The lru_lock under many readers (seed S1's mechanism, crates/mm/src/lrulock.rs): 16
/// buffered random readers on 8 CPUs in a memcg a third the size of their file. The classic
/// LRU activates on the second read and deactivates in reclaim, so it takes the memcg's
/// lru_lock more often per read than the multi-gen LRU (which keeps tiers in folio flags),
/// spins longer on it, and reads less; the spinning shows up per thread and in reclaim's
/// `lock_wait` bucket.
#[test]
fn lru_lock_contention_costs_the_classic_lru_more() {
    let toml = r#"
[run]
duration = "300ms"
warmup = "100ms"
[machine]
memory = "256M"
cpus = 8
[model]
memcg_stats_flush_ms = 0
[[device]]
name = "ram"
preset = "ramdisk"
read_bw = 80_000_000_000
queue_depth = 8
[fs]
device = "ram"
[[cgroup]]
name = "test"
"memory.max" = "32M"
[[object]]
name = "files"
kind = "file"
size = "96M"
[[task]]
name = "fio"
instances = 16
cgroup = "test"
repeat = 0
[[task.phase]]
access = "read"
object = "files"
pattern = "random"
pages_per_op = 1
"#;
    let classic = sim(toml, &[("policy.lru", "classic")]);
    let mglru = sim(toml, &[("policy.lru", "mglru")]);
    let reads = |r: &refault_sim::SimResult| r.tasks.iter().map(|t| t.ops).sum::<u64>() as f64;
    let per_read = |r: &refault_sim::SimResult| r.lru_lock.acquisitions as f64 / reads(r);
    assert!(
        per_read(&classic) > 1.3 * per_read(&mglru),
        "lock acquisitions per read: classic {} mglru {}",
        per_read(&classic),
        per_read(&mglru)
    );
    assert!(classic.lru_lock.contended > 0 && classic.lru_lock.wait_seconds > 0.0);
    assert!(classic.reclaim_cpu.lock_wait > 0.0);
    let spun: f64 = classic
        .sched
        .threads
        .iter()
        .map(|t| t.lru_lock_wait_seconds)
        .sum();
    // Per thread over the whole run, the totals over the measured period only.
    assert!(spun >= classic.lru_lock.wait_seconds - 1e-9);
    assert!(
        reads(&mglru) > reads(&classic),
        "{} vs {}",
        reads(&mglru),
        reads(&classic)
    );
}
