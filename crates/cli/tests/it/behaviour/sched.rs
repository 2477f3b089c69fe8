//! The CPU scheduler (refault-sim's `sched`, EEVDF and v6.1's CFS): kswapd gets a CPU on a
//! busy one-CPU machine, also inside the task's direct reclaim, and two CPUs leave an
//! uncontended run as it was.

use crate::util::{sim, vm};
use refault_sim::SimResult;

/// A 128 MiB machine with zram swap and one task that never blocks: it faults in a 160 MiB
/// anon set and re-touches it at random (zram swap-ins and swap-outs are synchronous CPU
/// work, so the task is always runnable).
const BUSY_ANON: &str = r#"
name = "busy-anon"
[machine]
memory = "128M"
cpus = 1
[[device]]
name = "zram0"
preset = "zram"
[[swap.area]]
device = "zram0"
size = "256M"
[[object]]
name = "heap"
kind = "anon"
size = "160M"
[[task]]
name = "anon"
[[task.phase]]
name = "fill"
access = "touch-write"
object = "heap"
[[task.phase]]
name = "reuse"
access = "touch"
object = "heap"
pattern = "random"
write_fraction = 0.2
ops = 60000
"#;

fn thread<'a>(r: &'a SimResult, name: &str) -> &'a refault_sim::result::ThreadSchedResult {
    r.sched.threads.iter().find(|t| t.name == name).unwrap()
}

/// Issue 20 item 1: on one CPU the woken kswapd waits at most until the task's slice is
/// used up and then runs, so it does most of the reclaim, as the kernel's kswapd does; the
/// task enters direct reclaim only when it allocates faster than kswapd frees. (Before the
/// scheduler, ties went to the lowest thread id and kswapd never ran: pgsteal_kswapd 0.)
/// Under 6.1's CFS and 6.12's EEVDF alike, kswapd does the scanning, the first pass over
/// young pages included (the Debian 6.1 guest's v01 trace, a task as busy: kswapd 52,982 of
/// 56,944 pages scanned). Since a woken kswapd takes the CPU at the `cond_resched()` points
/// inside direct reclaim (session 20), it scans 78% (6.1) and 82% (6.12) of the pages,
/// against 64% and 49% when it had to wait for the end of the task's direct reclaim. With
/// the per-CPU lists' size rules (session 21: v5.14's `ZONE_RECLAIM_ACTIVE` cap while
/// `balance_pgdat()` runs, v6.7's `pcp->high` autotuning) it scans 74% (6.1) and 87%
/// (6.12); on 6.1 only the cap applies, and why it lowers kswapd's share here is not traced
/// (under the cap the pages kswapd frees reach NR_FREE_PAGES at once instead of sitting on
/// the lists, which may end its runs sooner). The bound is two thirds, above the 64% and
/// 49% of a kswapd that waits for the end of direct reclaim; the Debian 6.1 guest's kswapd
/// scans 89-93% (v01), so the model errs low, not high.
#[test]
fn kswapd_takes_its_share_of_reclaim_on_one_cpu() {
    for kernel in ["6.1", "6.12"] {
        let r = sim(BUSY_ANON, &[("model.kernel", &format!("\"{kernel}\""))]);
        let (k, d) = (vm(&r, "pgsteal_kswapd"), vm(&r, "pgsteal_direct"));
        assert!(k > 0, "{kernel}: kswapd reclaimed nothing");
        assert!(
            k > 4 * d,
            "{kernel}: pgsteal_kswapd {k} vs pgsteal_direct {d}"
        );
        let (ks_scan, d_scan) = (vm(&r, "pgscan_kswapd"), vm(&r, "pgscan_direct"));
        assert!(
            ks_scan * 3 >= (ks_scan + d_scan) * 2,
            "{kernel}: pgscan_kswapd {ks_scan} vs pgscan_direct {d_scan}"
        );
        let ks = thread(&r, "kswapd0");
        let task = thread(&r, "anon");
        assert!(ks.cpu_seconds > 0.0 && ks.nr_waits > 0);
        // The task lost the CPU to kswapd, and both waited: one CPU is shared.
        assert!(task.nr_preempted > 0 && task.runqueue_wait_seconds > 0.0);
        // CPU time adds up: the simulated second is no longer than the CPU work done on it,
        // and the task's CPU time equals what the task result reports.
        let busy: f64 = r.sched.threads.iter().map(|t| t.cpu_seconds).sum();
        assert!(
            busy <= r.sim_seconds * 1.0001,
            "{kernel}: {busy} s busy in {} s",
            r.sim_seconds
        );
        assert!((task.cpu_seconds - r.tasks[0].cpu_seconds).abs() < 1e-9);
        // A woken kswapd waits for the task's slice: EEVDF's 0.75 ms and the tick after it
        // (4 ms at HZ = 250), CFS's ideal slice of two threads (3 ms) and the tick after
        // it, then for the task's next preemption point, at most one SWAP_CLUSTER_MAX batch
        // of reclaim away. It used to wait for the end of the step, which could be a whole
        // direct reclaim pass: 11.4 ms under both schedulers.
        let bound = if kernel == "6.1" { 7.5 } else { 5.0 };
        assert!(
            ks.max_wait_ms < bound,
            "{kernel}: kswapd waited {} ms",
            ks.max_wait_ms
        );
        assert_eq!(r.sched.base_slice_ms, 0.75);
    }
}

/// With a CPU for each runnable thread nothing waits, and the run is what it was before the
/// scheduler.
#[test]
fn two_cpus_leave_an_uncontended_run_as_it_was() {
    let r = sim(BUSY_ANON, &[("machine.cpus", "2")]);
    for t in &r.sched.threads {
        assert_eq!(t.runqueue_wait_seconds, 0.0, "{} waited", t.name);
        assert_eq!(t.nr_preempted, 0, "{} was preempted", t.name);
    }
    // Golden counters: with no wait and no preemption (checked above) the scheduler never
    // intervened, so these are the engine's without it. When the scheduler was introduced
    // they equalled the previous engine's exactly (22654 / 4316 / 83); page-table charging
    // (issue 12) moved them to 22607 / 4368 / 84; the x86-64 zone layout (issue 20 item 3:
    // this 128 MiB machine is DMA + DMA32, less the boot reservations, with the boot-time
    // watermarks and lowmem_reserve), the page
    // caches' xarray nodes and the lru_lock's cost (issue 16: kswapd's isolation and
    // putback take the lock) to 24891 / 4268 / 87; zram's requests no longer queueing
    // behind each other (issue 16: a synchronous device copies on the submitting CPU) to
    // 24726 / 4317 / 88; kswapd woken by a DMA-zone boost reclaiming for DMA only
    // (issue 14: `wakeup_kswapd(zone, 0, 0, zone_idx(zone))`, the DMA32 folios skipped) to
    // 24578 / 4688 / 97; the DMA zone booting as x86-64 leaves it (issue 20 item 3: its
    // holes, reserved and boot pages in its first pageblock, which stays UNMOVABLE; DMA32
    // from frame 4096) to 24894 / 4348 / 87; the TLB shootdowns (session 18,
    // refault_mm::tlb: kswapd on the second CPU unmaps pages of the task running on the
    // first, so every flush is deferred and an IPI round, 5.27 us, goes out before each
    // folio with a dirty PTE is written) and the measured rmap costs slow kswapd down, and
    // the task reclaims more itself: 18023 / 9647 / 199; the per-CPU page lists (session
    // 20: order-0 pages held per CPU, out of NR_FREE_PAGES) to 18027 / 9698 / 200; their
    // size rules (session 21: this run follows 6.18, so the v5.14 `ZONE_RECLAIM_ACTIVE` cap
    // and the v6.7 `pcp->high` autotuning apply) to these. The anon faults' stalls are
    // `allocstall_movable`, as the kernel counts them (`gfp_zone(GFP_HIGHUSER_MOVABLE)`),
    // not those of the highest zone.
    assert_eq!(
        [
            vm(&r, "pgsteal_kswapd"),
            vm(&r, "pgsteal_direct"),
            vm(&r, "allocstall_movable"),
            vm(&r, "allocstall_dma32") + vm(&r, "allocstall_normal"),
        ],
        [17927, 9936, 204, 0]
    );
    assert_eq!(r.sched.base_slice_ms, 1.5);
}

/// The VM suite's used-once stream: a 256 MiB file read twice next to a hot 96 MiB anon set
/// on a 256 MiB machine with zram swap, whose nvme-like device keeps up.
fn stream_next_to_hot_anon(overrides: &[(&str, &str)]) -> SimResult {
    let path = crate::util::root().join("fidelity-vm/v03-file-stream-hot-anon-sw200.toml");
    let ov: Vec<(String, String)> = overrides
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let scn = refault_scenario::load(&path, &ov, None).unwrap();
    refault_sim::run(&scn, Default::default()).unwrap()
}

/// Issue 20 item 2: the kernel's kswapd keeps up with a used-once stream (Debian 6.1 on one
/// CPU: 8 ± 8 allocation stalls, 298 pages reclaimed directly against 110127 by kswapd);
/// the model, with kswapd starved on one CPU, stalled 2151 times and reclaimed 68833 pages
/// directly. kswapd, woken at the low watermark and running within a slice, reclaims the
/// clean stream pages faster than the reader allocates them.
#[test]
fn used_once_stream_next_to_hot_anon_needs_no_direct_reclaim() {
    for (cpus, swappiness) in [("1", "200"), ("1", "60"), ("2", "60")] {
        let r = stream_next_to_hot_anon(&[("machine.cpus", cpus), ("vm.swappiness", swappiness)]);
        let stalls = vm(&r, "allocstall_movable") + vm(&r, "allocstall_normal");
        let (k, d) = (vm(&r, "pgsteal_kswapd"), vm(&r, "pgsteal_direct"));
        assert!(
            stalls <= 16 && d * 100 <= k,
            "{cpus} cpus, swappiness {swappiness}: {stalls} stalls, pgsteal_direct {d}, \
             pgsteal_kswapd {k}"
        );
        assert!(k > 90_000, "the stream is reclaimed by kswapd: {k}");
    }
}

/// kswapd that goes back to sleep after its HZ/10 nap gives up the CPU it was woken onto.
/// The VM suite's v04 (a file stream next to a hot anon set, multi-gen LRU) on the machine
/// Debian 6.1's guest had (its /proc/zoneinfo: a 16 MiB DMA zone that keeps the node
/// balanced while DMA32 sits at its low watermark): kswapd's nap ended while the one CPU was
/// idle (the reader waiting for IO), it found the node balanced and went to sleep still
/// holding the CPU, and the reader, woken by its IO, waited for that CPU for ever: both
/// tasks stopped after 1.2 s and the run ended at the flusher's 5 s wakeup with nothing
/// reclaimed.
#[test]
fn kswapd_going_to_sleep_after_its_nap_gives_the_cpu_back() {
    let root = crate::util::root();
    let text =
        std::fs::read_to_string(root.join("fidelity-vm/v04-file-stream-hot-anon-mglru.toml"))
            .unwrap()
            .replace(
                "memory = \"256M\"",
                "from_zoneinfo = \"docs/zoneinfo/guest-debian-6.1-256m.zoneinfo\"",
            );
    let origin = root.join("guest-v04.toml");
    let scn = refault_scenario::parse(&text, origin.to_str().unwrap(), &[], None).unwrap();
    let r = refault_sim::run(&scn, Default::default()).unwrap();
    for t in &r.tasks {
        assert!(t.finished, "task {} stopped after {} ops", t.name, t.ops);
    }
    assert!(
        vm(&r, "pgsteal_file") > 90_000,
        "{}",
        vm(&r, "pgsteal_file")
    );
}

/// The VM suite's v02 (a 256 MiB file read twice next to a hot anon set, classic LRU) on the
/// Debian 6.1 guest's machine (its /proc/zoneinfo) with 6.1's CFS.
fn guest_v02_on_6_1() -> SimResult {
    let root = crate::util::root();
    let text = std::fs::read_to_string(root.join("fidelity-vm/v02-file-stream-hot-anon-sw60.toml"))
        .unwrap()
        .replace(
            "memory = \"256M\"",
            "from_zoneinfo = \"docs/zoneinfo/guest-debian-6.1-256m.zoneinfo\"",
        );
    let origin = root.join("guest-v02.toml");
    let ov = [("model.kernel".to_string(), "\"6.1\"".to_string())];
    let scn = refault_scenario::parse(&text, origin.to_str().unwrap(), &ov, None).unwrap();
    refault_sim::run(&scn, Default::default()).unwrap()
}

/// Issue 20 item 2: a kswapd woken by the reader's readahead allocation is on the run queue
/// when the reader then sleeps on its IO, and `schedule()` picks it (the leftmost: woken
/// after a sleep, CFS places it half a latency behind `min_vruntime`); it runs at once and
/// is not preempted before its first step. The model used to make the wakeup after the
/// reader had given its CPU to the hot task, and kept the reader's own wakeup preemption
/// (`check_preempt_wakeup()` against the hot task) armed against kswapd once kswapd had
/// the CPU: kswapd waited 1,243 times (16.8 ms) and was preempted before running in every
/// one of its 621 runs; the guest's trace shows kswapd running about 0.1 ms after each
/// wakeup.
#[test]
fn kswapd_woken_by_a_reader_runs_when_the_reader_sleeps() {
    let r = guest_v02_on_6_1();
    let ks = thread(&r, "kswapd0");
    let runs = vm(&r, "pageoutrun");
    assert!(runs > 100, "kswapd ran {runs} times");
    assert!(
        ks.nr_preempted * 100 <= runs,
        "kswapd preempted {} times in {runs} runs",
        ks.nr_preempted
    );
    // The waits average under the guest's 0.1 ms. Since the reader's direct reclaim has
    // `cond_resched()` points (session 20), a wakeup raised inside it is taken there and
    // kswapd waits for the rest of the reader's step (226 waits of at most 0.02 ms, 4.1 ms
    // in all, where before it was counted from the step's end: 2 waits, 21 us). With the
    // per-CPU page lists the same run has 63 waits, 1.29 ms in all, the longest 0.18 ms:
    // the remainder of one of the reader's steps after the wakeup (which part of the step it
    // was is not traced), so the longest wait is bounded at 0.25 ms rather than 0.1 ms. Since
    // each folio allocation of a readahead window is a preemption point (session 21), the
    // waits are 303 (4.4 ms in all), the longest still 0.18 ms: kswapd, not far enough
    // behind the reader in vruntime to preempt it, waits for a later point.
    let mean_ms = ks.runqueue_wait_seconds * 1e3 / ks.nr_waits.max(1) as f64;
    assert!(mean_ms < 0.1, "kswapd waited {mean_ms} ms on average");
    assert!(
        ks.max_wait_ms < 0.25,
        "kswapd waited up to {} ms for the CPU",
        ks.max_wait_ms
    );
}
