//! Workingset detection and the use-once cache.

use crate::util::{sim, vm};

/// A used-once file stream does not push out a re-touched anon set: streamed pages enter the
/// inactive file list and are reclaimed from there before their second access, while the
/// anon set's young bits promote it (folio_check_references), and the balance finds no cost
/// in dropping the stream (no refaults of workingset pages).
#[test]
fn used_once_stream_keeps_hot_anon() {
    let toml = r#"
[run]
duration = "20s"
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
size = "128M"
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
"#;
    for balance in ["refault-cost", "legacy"] {
        let r = sim(toml, &[("policy.balance", balance)]);
        let hot_pages = 48 * 256;
        // The whole 512 MiB stream went through a 128 MiB machine...
        assert!(
            vm(&r, "pgsteal_file") > 3 * hot_pages,
            "{balance}: stream was not reclaimed"
        );
        // ...but the hot set stayed: almost no swap-out, and it is still resident.
        assert!(
            vm(&r, "pswpout") < hot_pages / 20,
            "{balance}: pswpout {}",
            vm(&r, "pswpout")
        );
        assert!(vm(&r, "nr_anon_pages") > hot_pages * 95 / 100, "{balance}");
    }
}

/// A refault whose distance fits in the active list is activated: file `a` is read twice
/// (its second read activates it through folio_mark_accessed), then file `b`, larger than
/// what is left, is read twice; b's pages evicted during the first pass come back with a
/// refault distance shorter than the active list (workingset_test_recent), so
/// workingset_activate_file counts them. The run is shorter than the memcg stats flush
/// period, so the rule is checked with exact statistics (`model.memcg_stats_flush_ms = 0`);
/// with the kernel's stale statistics see `stale_stats_hide_the_active_list`.
#[test]
fn short_distance_refaults_activate() {
    let toml = r#"
[run]
duration = "60s"
[machine]
memory = "96M"
cpus = 2
[model]
memcg_stats_flush_ms = 0
[[device]]
name = "disk"
preset = "nvme"
[[object]]
name = "a"
kind = "file"
size = "40M"
[[object]]
name = "b"
kind = "file"
size = "60M"
[[task]]
name = "reader"
[[task.phase]]
access = "read"
object = "a"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "a"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "b"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "b"
pattern = "sequential"
advice = "random"
"#;
    let r = sim(toml, &[]);
    let refaults = vm(&r, "workingset_refault_file");
    let activated = vm(&r, "workingset_activate_file");
    assert!(refaults > 0, "no refaults at all");
    assert!(
        activated > refaults / 2,
        "{activated} of {refaults} refaults activated"
    );
}

/// The same transition with the kernel's memcg statistics flushing (FLUSH_TIME = 2 s, first
/// flush half a period in): the run ends before the first flush, so `workingset_test_recent()`
/// reads the statistics of the empty cgroup (active list 0) and B's refaults are not
/// activated, as the live kernel shows on a run this short (docs/fidelity.md, f08).
#[test]
fn stale_stats_hide_the_active_list() {
    let toml = r#"
[run]
duration = "60s"
[machine]
memory = "96M"
cpus = 2
[[device]]
name = "disk"
preset = "nvme"
[[object]]
name = "a"
kind = "file"
size = "40M"
[[object]]
name = "b"
kind = "file"
size = "60M"
[[task]]
name = "reader"
[[task.phase]]
access = "read"
object = "a"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "a"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "b"
pattern = "sequential"
advice = "random"
[[task.phase]]
access = "read"
object = "b"
pattern = "sequential"
advice = "random"
"#;
    let r = sim(toml, &[]);
    assert!(r.sim_seconds < 1.0, "the run outlasted the first flush");
    let refaults = vm(&r, "workingset_refault_file");
    let activated = vm(&r, "workingset_activate_file");
    assert!(refaults > 0, "no refaults at all");
    assert!(
        activated < refaults / 10,
        "{activated} of {refaults} refaults activated"
    );
}
