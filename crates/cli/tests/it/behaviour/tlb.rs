//! The TLB flushes of reclaim's unmaps (refault_mm::tlb).

use crate::util::{sim, vm};

/// A task of `threads` threads sharing one anonymous heap, writing it at random, above its
/// memcg's limit: the threads reclaim their own pages (memcg limit reclaim; the machine has
/// room, so kswapd never runs). With several threads running on the other CPUs, every
/// unmap is deferred (`should_defer_flush()`) and the dirty PTEs make
/// `try_to_unmap_flush_dirty()` send an IPI round before each swap-out; a single thread
/// has the mm on no other running CPU and flushes only its own TLB.
fn threaded_heap(threads: u32) -> refault_sim::SimResult {
    let toml = format!(
        r#"
[run]
duration = "400ms"
warmup = "100ms"
[machine]
memory = "512M"
cpus = 4
[model]
memcg_stats_flush_ms = 0
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
[[cgroup]]
name = "box"
"memory.max" = "16M"
[[object]]
name = "heap"
kind = "anon"
size = "24M"
[[task]]
name = "worker"
instances = {threads}
cgroup = "box"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "random"
think = "2us"
"#
    );
    sim(&toml, &[])
}

#[test]
fn a_threaded_task_pays_shootdowns_a_single_thread_none() {
    let one = threaded_heap(1);
    let four = threaded_heap(4);
    for r in [&one, &four] {
        assert_eq!(vm(r, "pgscan_kswapd"), 0, "kswapd reclaimed");
        assert!(vm(r, "pswpout") > 1_000, "too little swap-out to tell");
    }
    let c1 = &one.reclaim_cpu;
    assert_eq!(c1.tlb_shootdowns, 0);
    // Its unmaps flush the local TLB: 137 ns each.
    assert!(c1.tlb_flush > 0.0);
    let c4 = &four.reclaim_cpu;
    assert!(c4.tlb_shootdowns > 0);
    // At most the three other CPUs per round, and at least one.
    let per_round = c4.tlb_shootdown_cpus as f64 / c4.tlb_shootdowns as f64;
    assert!(
        (1.0..=3.0).contains(&per_round),
        "{per_round} CPUs per round"
    );
    // Every swapped-out page had a dirty PTE: about one round per page written.
    let rounds_per_pswpout = c4.tlb_shootdowns as f64 / vm(&four, "pswpout") as f64;
    assert!(
        (0.5..=1.5).contains(&rounds_per_pswpout),
        "{rounds_per_pswpout} IPI rounds per page swapped out"
    );
    // Per page reclaimed, the four threads pay several microseconds more for flushes.
    let per_page =
        |r: &refault_sim::SimResult| r.reclaim_cpu.tlb_flush / vm(r, "pgsteal_anon") as f64;
    assert!(
        per_page(&four) > 10.0 * per_page(&one),
        "flush CPU per reclaimed page: 1 thread {} s, 4 threads {} s",
        per_page(&one),
        per_page(&four)
    );
}

/// One task writing an anonymous heap larger than the machine at random: global reclaim,
/// kswapd's and the allocating task's.
fn global_heap() -> refault_sim::SimResult {
    let toml = r#"
[run]
duration = "400ms"
warmup = "100ms"
[machine]
memory = "64M"
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
size = "128M"
[[object]]
name = "heap"
kind = "anon"
size = "80M"
[[task]]
name = "worker"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "random"
think = "2us"
"#;
    sim(toml, &[])
}

/// `kswapd_cpu` is kswapd's part of `reclaim_cpu`: none under memcg limit reclaim (kswapd
/// never runs), and under global reclaim each activity at most the all-reclaimers figure,
/// all of them within kswapd's CPU, equal to it when nothing reclaimed directly.
#[test]
fn the_kswapd_profile_is_kswapds_part_of_the_reclaim_cpu() {
    let memcg = threaded_heap(4);
    let k = &memcg.kswapd_cpu;
    assert_eq!(vm(&memcg, "pgscan_kswapd"), 0);
    assert_eq!(
        (
            k.cpu,
            k.folio_referenced,
            k.try_to_unmap,
            k.io_submit,
            k.tlb_shootdowns
        ),
        (0.0, 0.0, 0.0, 0.0, 0)
    );
    let g = global_heap();
    assert!(
        vm(&g, "pgsteal_kswapd") > 1_000,
        "kswapd reclaimed too little"
    );
    let (k, all) = (&g.kswapd_cpu, &g.reclaim_cpu);
    assert!(k.folio_referenced > 0.0 && k.try_to_unmap > 0.0 && k.io_submit > 0.0);
    let eps = 1e-9;
    for (part, whole) in [
        (k.folio_referenced + k.try_to_unmap, all.rmap_walk),
        (k.scan, all.scan),
        (k.tlb_flush, all.tlb_flush),
        (k.page_table_walk, all.page_table_walk),
        (k.reclaim, all.reclaim),
        (k.io_submit, all.io_submit),
        (k.lock_wait, all.lock_wait),
    ] {
        assert!(part <= whole + eps, "{part} > {whole}");
        if vm(&g, "pgscan_direct") == 0 {
            assert!((part - whole).abs() < eps, "{part} != {whole}");
        }
    }
    let charged = k.scan
        + k.folio_referenced
        + k.try_to_unmap
        + k.tlb_flush
        + k.page_table_walk
        + k.reclaim
        + k.io_submit
        + k.lock_wait;
    assert!(charged <= k.cpu + eps, "{charged} charged of {} s", k.cpu);
    // The measured period's CPU is part of the whole run's.
    assert!(k.cpu <= all.kswapd_total + eps);
}
