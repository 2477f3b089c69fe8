//! Writeback throttling (refault-sim's `wbt`, block/blk-wbt.c): a reclaimer swapping to a
//! request-based device never has more writes in flight than the throttle's limits and
//! sleeps for them; zram and a ram disk (bio-based, no rq_qos) are never throttled.

use crate::util::{sim, vm};
use refault_sim::SimResult;

/// A 64 MiB machine whose task writes a 128 MiB anon set once: reclaim swaps out about
/// 80 MiB. The swap device is an NVMe with a queue depth of 4, so wbt's depth is
/// min(16, 4) = 4 at scale step 0 (wb_normal 2, wb_background 1) and never more: scaling up
/// caps it at 3 * 4 / 4 = 3.
const GROW: &str = r#"
name = "wbt-grow"
[machine]
memory = "64M"
cpus = 2
[[device]]
name = "swapdev"
preset = "nvme"
queue_depth = 4
[[swap.area]]
device = "swapdev"
size = "256M"
[[object]]
name = "heap"
kind = "anon"
size = "128M"
[[task]]
name = "grow"
[[task.phase]]
access = "touch-write"
object = "heap"
"#;

fn wbt(r: &SimResult) -> &refault_sim::wbt::WbtStats {
    r.devices[0].stats.wbt.as_ref().expect("an NVMe has wbt")
}

fn peak(r: &SimResult, series: &str) -> f64 {
    r.timeseries[series].iter().copied().fold(0.0, f64::max)
}

/// The reclaimers (kswapd on its queue with max_depth, the task in direct reclaim with
/// wb_normal) never have more than 4 + 4 tracked requests in flight, each at most
/// BLK_MAX_SEGMENTS (128) pages, and they sleep for it; with `wbt_lat_usec = 0` the same
/// run hands the device far more.
#[test]
fn swap_out_to_nvme_stays_within_the_wbt_limit_and_waits() {
    let r = sim(GROW, &[]);
    let w = wbt(&r);
    assert!(vm(&r, "pswpout") > 10_000, "the run swaps");
    assert!(w.max_inflight <= 8, "{w:?}");
    assert!(w.max_inflight >= 2, "{w:?}");
    assert!(w.waits > 0 && w.wait_ns > 0, "{w:?}");
    let bounded = peak(&r, "nr_writeback");
    assert!(bounded <= 8.0 * 128.0, "nr_writeback peak {bounded}");

    let off = sim(GROW, &[("device.swapdev.wbt_lat_usec", "0")]);
    assert!(off.devices[0].stats.wbt.is_none());
    let unbounded = peak(&off, "nr_writeback");
    assert!(
        unbounded > 2.0 * bounded,
        "without wbt: nr_writeback peak {unbounded}, with: {bounded}"
    );
}

/// zram and brd are bio-based: no writeback throttling, whatever `wbt_lat_usec` says; the
/// run is the same with the knob at 0.
#[test]
fn zram_and_brd_are_not_throttled() {
    for preset in ["zram", "ramdisk"] {
        let toml = GROW.replace(
            "preset = \"nvme\"\nqueue_depth = 4",
            &format!("preset = \"{preset}\""),
        );
        let on = sim(&toml, &[]);
        assert!(on.devices[0].stats.wbt.is_none(), "{preset}");
        let off = sim(&toml, &[("device.swapdev.wbt_lat_usec", "0")]);
        assert!(vm(&on, "pswpout") > 10_000, "{preset}");
        assert_eq!(on.vmstat, off.vmstat, "{preset}");
    }
}
