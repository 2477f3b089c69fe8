//! Random event streams through the model with the invariant checks after every step
//! (property tests; the seeds that ever failed are kept in `REGRESSION_SEEDS`).

use crate::testutil::*;
use crate::*;

/// Seeds that once broke an invariant, kept so they are always re-run.
const REGRESSION_SEEDS: &[u64] = &[];

/// Seeds per property test: 12 in debug builds, 40 in release, or `REFAULT_PROPTEST_SEEDS`.
fn seeds() -> u64 {
    std::env::var("REFAULT_PROPTEST_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) { 12 } else { 40 })
}

fn machine_with(seed: u64, lru: LruKind) -> Mm {
    let mut rng = TestRng(seed);
    let mut cfg = tiny_config(
        if rng.below(2) == 0 {
            BalanceKind::RefaultCost
        } else {
            BalanceKind::Legacy
        },
        2048 + rng.below(2048),
    );
    cfg.zones = vec![("DMA32", 1024), ("Normal", cfg.zones[0].1)];
    cfg.objects.push(ObjectCfg {
        kind: ObjKind::Shmem,
        size_pages: 1024,
        exists: true,
        hugepage: HugepageAdvice::None,
        mlock: false,
    });
    cfg.memcgs = vec![
        MemcgCfg {
            max_pages: Some(600 + rng.below(600)),
            swappiness: Some(rng.below(201)),
            swap_max_pages: None,
        },
        MemcgCfg {
            max_pages: None,
            swappiness: None,
            swap_max_pages: None,
        },
    ];
    cfg.swap_areas[0].synchronous = rng.below(2) == 0;
    cfg.swap_areas[0].size_pages = 1024 + rng.below(8192);
    cfg.swap_readahead = if rng.below(2) == 0 {
        SwapRaKind::Vma
    } else {
        SwapRaKind::Cluster
    };
    cfg.max_file_folio_order = rng.below(6) as u32;
    cfg.swappiness = rng.below(201);
    cfg.lru = lru;
    if lru == LruKind::Mglru {
        cfg.balance = BalanceKind::RefaultCost;
        // Exercise the min_ttl OOM path in some machines.
        cfg.lru_gen_min_ttl_ns = if rng.below(4) == 0 { 5_000_000 } else { 0 };
    }
    Mm::new(cfg)
}

fn drive(seed: u64, steps: usize) -> vmstat::VmEvents {
    drive_with(seed, steps, LruKind::Classic)
}

fn drive_with(seed: u64, steps: usize, lru: LruKind) -> vmstat::VmEvents {
    let mut mm = machine_with(seed, lru);
    let mut rng = TestRng(seed ^ 0x5555);
    let mut io = DelayIo(1 + rng.below(50_000));
    let mut now = 0u64;
    let anon_pages = mm.objects[0].size_pages;
    let file_pages = mm.objects[1].size_pages;
    // Kernel memory held by the stream (freed at random): fragments the zones.
    let mut kmem: Vec<Pfn> = Vec::new();
    for step in 0..steps {
        now += rng.below(20_000);
        mm.run_completions(now);
        let memcg = rng.below(3) as u16;
        let mut ctx = Ctx::new(now, &mut io, memcg);
        match rng.below(10) {
            0..=2 => mm.touch(&mut ctx, 0, rng.below(anon_pages) as u32, rng.below(2) == 0),
            3 => mm.touch(&mut ctx, 2, rng.below(1024) as u32, rng.below(2) == 0),
            4 => mm.touch(&mut ctx, 1, rng.below(file_pages) as u32, rng.below(4) == 0),
            5 | 6 => {
                let p = rng.below(file_pages - 64);
                mm.file_read(&mut ctx, 1, p as u32, 1 + rng.below(64) as u32)
            }
            7 => {
                let p = rng.below(file_pages - 16);
                mm.file_write(&mut ctx, 1, p as u32, 1 + rng.below(16) as u32)
            }
            8 => match rng.below(8) {
                0 => mm.fsync(&mut ctx, 1),
                1 | 2 => {
                    mm.flusher_run(&mut ctx, 1_000_000);
                }
                3 | 4 => {
                    // Kernel allocations of any order and type, GFP_KERNEL or GFP_NOWAIT.
                    let gfp = alloc::Gfp {
                        mt: rng.below(3) as u8,
                        direct_reclaim: rng.below(2) == 0,
                        kswapd_reclaim: true,
                        noretry: false,
                        retry_mayfail: false,
                        high: rng.below(2) == 0,
                        atomic: rng.below(4) == 0,
                    };
                    let order = [0, 0, 1, 2, 3, 9][rng.below(6) as usize];
                    if let Some(p) = mm.alloc_kernel_pages(&mut ctx, order, gfp) {
                        kmem.push(p);
                    }
                    ctx.oom = false;
                }
                5 => {
                    if !kmem.is_empty() {
                        let p = kmem.swap_remove(rng.below(kmem.len() as u64) as usize);
                        mm.free_kernel_pages(p);
                    }
                }
                6 => {
                    let prio = [
                        compaction::CompactPriority::Async,
                        compaction::CompactPriority::SyncLight,
                        compaction::CompactPriority::SyncFull,
                    ][rng.below(3) as usize];
                    let _ = mm.try_to_compact_pages(&mut ctx, 1 + rng.below(10) as u32, 0, prio);
                }
                _ => {
                    mm.wakeup_kcompactd(9);
                    if mm.kcompactd.wake_pending {
                        mm.kcompactd_do_work(&mut ctx);
                    }
                    let _ = mm.kcompactd_proactive(&mut ctx);
                }
            },
            _ => {
                mm.wakeup_kswapd(0, true);
                for _ in 0..rng.below(8) {
                    if mm.kswapd_step(&mut ctx) == kswapd::KswapdNext::Done {
                        break;
                    }
                }
            }
        }
        if ctx.oom {
            // An OOM kill ends the task in the simulator; the model itself stays consistent.
        }
        if let Err(e) = mm.check_invariants() {
            panic!("seed {seed} step {step}: {e}");
        }
    }
    mm.ev.clone()
}

#[test]
fn random_streams_keep_every_invariant() {
    let n = seeds();
    let mut total = vmstat::VmEvents::default();
    for seed in (1..=n).chain(REGRESSION_SEEDS.iter().copied()) {
        let ev = drive(seed, 1500);
        for (t, e) in total.0.iter_mut().zip(ev.0.iter()) {
            *t += e;
        }
    }
    // The streams must actually exercise the paths the invariants guard.
    use vmstat::Ev::*;
    for e in [
        PgStealKswapd,
        PgStealDirect,
        PswpOut,
        PswpIn,
        WorkingsetRefaultFile,
        WorkingsetRefaultAnon,
        PgDeactivate,
        PgRotated,
        NrVmscanImmediateReclaim,
        PgmigrateSuccess,
        CompactMigrateScanned,
        ExtfragFallback,
    ] {
        assert!(total.get(e) > 0, "{e:?} never happened");
    }
}

/// The same random streams through the multi-gen LRU: the generation lists, page counts per
/// generation and the compatibility active/inactive sizes are checked after every step.
#[test]
fn random_streams_keep_every_invariant_under_mglru() {
    let n = seeds();
    let mut total = vmstat::VmEvents::default();
    for seed in 1..=n {
        let ev = drive_with(seed, 1500, LruKind::Mglru);
        for (t, e) in total.0.iter_mut().zip(ev.0.iter()) {
            *t += e;
        }
    }
    use vmstat::Ev::*;
    for e in [
        PgStealKswapd,
        PgStealDirect,
        PswpOut,
        PswpIn,
        WorkingsetRefaultFile,
        WorkingsetRefaultAnon,
        PgRefill,
        PgActivate,
    ] {
        assert!(
            total.get(e) > 0,
            "{e:?} never happened under the multi-gen LRU"
        );
    }
}
