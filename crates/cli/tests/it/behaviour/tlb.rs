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
