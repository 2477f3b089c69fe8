//! Memory-cgroup limit reclaim.

use crate::util::{sim, vm};

/// Charges above memory.max trigger limit reclaim in the charging task
/// (try_to_free_mem_cgroup_pages), so the cgroup's usage never exceeds its limit; on a
/// machine with plenty of free memory kswapd and direct reclaim never run, and the global
/// pgscan_kswapd/pgscan_direct counters stay 0 while pgscan_file counts the limit reclaim.
#[test]
fn memcg_limit_reclaim_keeps_usage_at_or_below_max() {
    let toml = r#"
[run]
duration = "20s"
sample_interval = "100ms"
[machine]
memory = "512M"
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
"memory.max" = "64M"
[[object]]
name = "anon"
kind = "anon"
size = "32M"
[[object]]
name = "data"
kind = "file"
size = "128M"
[[task]]
name = "anon"
cgroup = "box"
repeat = 0
[[task.phase]]
access = "touch-write"
object = "anon"
pattern = "random"
think = "5us"
[[task]]
name = "reader"
cgroup = "box"
repeat = 0
[[task.phase]]
access = "read"
object = "data"
pattern = "sequential"
pages_per_op = 8
"#;
    let r = sim(toml, &[]);
    let max = 64 * 256;
    let usage = &r.timeseries["cgroup.box.usage_pages"];
    assert!(
        usage.iter().all(|&u| u <= max as f64),
        "usage above memory.max"
    );
    assert!(
        usage.iter().any(|&u| u >= (max - 64) as f64),
        "the limit was never reached"
    );
    assert_eq!(vm(&r, "pgscan_kswapd"), 0);
    assert_eq!(vm(&r, "pgscan_direct"), 0);
    assert_eq!(
        vm(&r, "allocstall_movable") + vm(&r, "allocstall_normal"),
        0
    );
    assert!(vm(&r, "pgscan_file") > 0, "no limit reclaim counted");
    assert!(r.cgroups[0].pgscan > 0);
    assert!(r.cgroups[0].usage_pages <= max);
}
