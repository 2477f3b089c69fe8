//! The highatomic reserve (`reserve_highatomic_pageblock()`): a high-order allocation that
//! succeeds in the allocator's slow path with ALLOC_HARDER (v4.x, GFP_ATOMIC's
//! `__GFP_ATOMIC`) / ALLOC_HIGHATOMIC (v6.3+, non-blocking; v6.17+ also `__GFP_HIGH`)
//! turns its pageblock into MIGRATE_HIGHATOMIC.

use crate::util::sim;

/// A 256 MiB one-zone machine whose memory an anonymous working set keeps near the
/// watermarks, and seed S4's order-9 allocations (GFP_NOWAIT | __GFP_HIGH, held) 10 ms apart.
const HIGHALLOC: &str = r#"
[run]
duration = "3s"
sample_interval = "500ms"
[machine]
memory = "256M"
dma32 = 0
cpus = 4
[[device]]
name = "swapdev"
preset = "sata-ssd"
[[swap.area]]
device = "swapdev"
size = "512M"
[[object]]
name = "heap"
kind = "anon"
size = "240M"
[[task]]
name = "toucher"
[[task.phase]]
access = "touch-write"
object = "heap"
pattern = "random"
think = "5us"
ops = 400000
[[task]]
name = "highalloc"
start = "1s"
workload = "kalloc"
[task.kalloc]
order = 9
count = 100
gfp = "nowait"
migratetype = "unmovable"
think = "10ms"
"#;

/// Pageblocks of type HighAtomic at the last sample, over the zones.
fn highatomic_blocks(r: &refault_sim::SimResult) -> u64 {
    r.buddyinfo
        .last()
        .unwrap()
        .zones
        .iter()
        .map(|z| z.pageblocks_by_type.get("HighAtomic").copied().unwrap_or(0))
        .sum()
}

/// Under v6.18 the seed's GFP_NOWAIT | __GFP_HIGH order-9 allocations reserve pageblocks
/// (ALLOC_HIGHATOMIC); under v4.6 they have no ALLOC_HARDER and reserve none, while
/// GFP_ATOMIC does. The limits: v4.6 1% of the 65536-page zone plus a pageblock, 655 + 512
/// = 1167 pages, reached at the third block (1536); v6.18 1% aligned up to pageblocks,
/// 1024 pages, two blocks.
#[test]
fn highatomic_reserve_forms_under_the_seed_nowait_table_from_6_3() {
    for (kernel, gfp, blocks) in [
        ("\"4.6\"", "\"nowait\"", 0),
        ("\"4.6\"", "\"atomic\"", 3),
        ("\"6.18\"", "\"nowait\"", 2),
        ("\"6.18\"", "\"kernel-high\"", 0),
    ] {
        let r = sim(
            HIGHALLOC,
            &[("model.kernel", kernel), ("task.highalloc.kalloc.gfp", gfp)],
        );
        assert_eq!(highatomic_blocks(&r), blocks, "kernel {kernel} gfp {gfp}");
    }
}
