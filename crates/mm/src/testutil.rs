//! Small machines for unit tests.

use crate::workingset::KernelVersion;
use crate::*;

pub fn tiny_config(balance: BalanceKind, pages: u64) -> MmConfig {
    MmConfig {
        zones: vec![("Normal", pages)],
        zone_boot: vec![],
        lowmem_reserve_ratio: crate::mmzone::DEFAULT_LOWMEM_RESERVE_RATIO,
        swappiness: 60,
        min_free_kbytes: Some(16),
        watermark_scale_factor: 10,
        watermark_boost_factor: 15_000,
        extfrag_threshold: 500,
        compaction_proactiveness: 20,
        kswapd_compaction: KswapdCompaction::Kcompactd,
        page_cluster: 3,
        dirty_ratio: 20,
        dirty_background_ratio: 10,
        dirty_bytes: 0,
        dirty_background_bytes: 0,
        dirty_expire_ns: 30_000_000_000,
        laptop_mode: false,
        balance,
        lru: LruKind::Classic,
        lru_gen_min_ttl_ns: 0,
        swap_readahead: SwapRaKind::Vma,
        objects: vec![
            ObjectCfg {
                kind: ObjKind::Anon,
                size_pages: pages * 2,
                exists: true,
                hugepage: HugepageAdvice::None,
                mlock: false,
            },
            ObjectCfg {
                kind: ObjKind::File,
                size_pages: pages * 4,
                exists: true,
                hugepage: HugepageAdvice::None,
                mlock: false,
            },
        ],
        memcgs: vec![],
        swap_areas: vec![SwapAreaCfg {
            dev: 1,
            size_pages: pages * 4,
            priority: 0,
            synchronous: true,
            rotational: false,
        }],
        fs_dev: 0,
        readahead_max_pages: 32,
        max_file_folio_order: 9,
        thp_enabled: ThpEnabled::Never,
        thp_defrag: ThpDefrag::Madvise,
        cgroup_v1: false,
        fs: Default::default(),
        memcg_stats_flush_ns: 0,
        memcg_stats_first_flush_ns: 0,
        kernel: KernelVersion::default(),
        costs: Costs::default(),
        // Unit tests count free pages exactly; the per-CPU lists are tested on their own.
        nr_cpus: 0,
    }
}

pub fn tiny_mm(balance: BalanceKind, pages: u64) -> Mm {
    Mm::new(tiny_config(balance, pages))
}

/// A kswapd pass at priority 0 over the node (`balance_pgdat()` → `shrink_node()`) reclaiming
/// up to `nr` pages, as a kernel thread that takes the CPU at a preemption point runs it.
pub fn kswapd_pass_at(mm: &mut Mm, io: &mut dyn Io, now: u64, nr: u64) -> u64 {
    let mut ctx = Ctx::new(now, io, 0);
    ctx.kswapd = true;
    let mut sc = crate::vmscan::ScanControl::new(nr, 0);
    sc.kswapd = true;
    sc.priority = 0;
    mm.shrink_node(&mut ctx, &mut sc)
}

/// An [`Io`] whose requests take a fixed time (exercises writeback and IO waits).
pub struct DelayIo(pub u64);
impl Io for DelayIo {
    fn submit(&mut self, _d: u32, now: u64, _op: BioOp, _k: bool, _s: u64, _n: u32) -> Submitted {
        Submitted {
            issued: now,
            done: now + self.0,
            cpu_ns: 0,
        }
    }
}

/// SplitMix64, for test streams.
pub struct TestRng(pub u64);
impl TestRng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

impl Mm {
    /// The lists of a lruvec as pfn vectors, head first (list-state tests).
    pub fn dump_lru(&self, lv: usize) -> [Vec<u32>; 4] {
        let mut out: [Vec<u32>; 4] = Default::default();
        for (i, o) in out.iter_mut().enumerate() {
            let mut p = self.lruvecs[lv].lists[i].head;
            while p != crate::types::NIL {
                o.push(p);
                p = self.pages.hot[p as usize].next;
            }
        }
        out
    }
}
