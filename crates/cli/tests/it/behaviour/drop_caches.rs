//! `[[run.drop_caches]]`: `echo N > /proc/sys/vm/drop_caches` written at a simulated time
//! of a run (`drop_caches_sysctl_handler()`).

use crate::util::{sim, vm};

/// 4000 files of one page, created and fsynced (clean pages, clean inodes) on a machine
/// large enough that nothing is reclaimed, then 2 s of touching one anonymous page (a run
/// ends with its last task, so something must still run when the write is due).
const CREATED: &str = r#"
[run]
sample_interval = "100ms"
[machine]
memory = "256M"
[[object]]
name = "dir"
kind = "file"
size = "16000K"
exists = false
[[task]]
name = "creator"
[[task.phase]]
access = "create"
object = "dir"
pages_per_op = 1
fsync = true
[[task.phase]]
access = "touch"
object = "heap"
ops = 2000
think = "1ms"
[[object]]
name = "heap"
kind = "anon"
size = "4K"
"#;

fn series(r: &refault_sim::SimResult, k: &str) -> Vec<f64> {
    r.timeseries[k].clone()
}

/// The dentry and inode caches' pages for 4000 files: 192-byte dentries, 21 a page, and
/// 960-byte inodes in order-3 slabs of 34. (`nr_slab_reclaimable` also holds the file's
/// page-cache xarray nodes.)
const DENTRY_INODE_PAGES: u64 = 4000u64.div_ceil(21) + 4000u64.div_ceil(34) * 8;
/// What stays of them when every object is freed: each cache's current (CPU) slab.
const CURRENT_SLABS: u64 = 1 + 8;

/// `nr_slab_reclaimable` just before 1 s and at the first sample from 1 s, and at the end.
fn slab_around_1s(r: &refault_sim::SimResult) -> (u64, u64, u64) {
    let t = series(r, "t_s");
    let slab = series(r, "nr_slab_reclaimable");
    let before = t.iter().rposition(|&x| x < 0.95).unwrap();
    let after = t.iter().position(|&x| x >= 1.0).unwrap();
    (
        slab[before] as u64,
        slab[after] as u64,
        *slab.last().unwrap() as u64,
    )
}

/// `vm.drop_caches = 2` at 1 s empties the reclaimable slab nothing pins: the dentries
/// and the clean inodes go (each inode's clean page with it, as `inode_lru_isolate()`
/// invalidates an inode's mapping before freeing it), leaving the two caches' current
/// slabs; the page cache is not dropped as such (`drop_pagecache` stays 0). Before 1 s the
/// slab is whole: the write happens at its time, not at the start.
#[test]
fn drop_caches_2_empties_reclaimable_slab_not_pinned() {
    let toml = format!("{CREATED}\n[[run.drop_caches]]\nat = \"1s\"\nvalue = 2\n");
    let r = sim(&toml, &[]);
    let (before, after, end) = slab_around_1s(&r);
    assert!(before >= DENTRY_INODE_PAGES, "{before} slab pages before");
    assert!(
        before - after >= DENTRY_INODE_PAGES - CURRENT_SLABS,
        "only the current slabs of the two caches remain: {before} -> {after}"
    );
    assert_eq!(end, after);
    assert_eq!(vm(&r, "drop_slab"), 1);
    assert_eq!(vm(&r, "drop_pagecache"), 0);
    assert_eq!(
        vm(&r, "pginodesteal"),
        4000,
        "each inode's clean page went with it"
    );
    assert_eq!(*series(&r, "nr_file_pages").last().unwrap(), 0.0);
}

/// `vm.drop_caches = 1` drops the clean page cache and leaves the dentries and inodes; 3
/// does both, the page cache first.
#[test]
fn drop_caches_1_drops_page_cache_only_and_3_both() {
    let toml = format!("{CREATED}\n[[run.drop_caches]]\nat = \"1s\"\nvalue = 1\n");
    let r = sim(&toml, &[]);
    let (before, _, end) = slab_around_1s(&r);
    assert_eq!(*series(&r, "nr_file_pages").last().unwrap(), 0.0);
    assert!(before >= DENTRY_INODE_PAGES);
    assert!(
        end >= DENTRY_INODE_PAGES,
        "the dentries and inodes stay: {end}"
    );
    assert_eq!((vm(&r, "drop_pagecache"), vm(&r, "drop_slab")), (1, 0));
    let toml = format!("{CREATED}\n[[run.drop_caches]]\nat = \"1s\"\nvalue = 3\n");
    let r = sim(&toml, &[]);
    let (before, after, _) = slab_around_1s(&r);
    assert_eq!(*series(&r, "nr_file_pages").last().unwrap(), 0.0);
    assert!(before - after >= DENTRY_INODE_PAGES - CURRENT_SLABS);
    assert_eq!((vm(&r, "drop_pagecache"), vm(&r, "drop_slab")), (1, 1));
    assert_eq!(vm(&r, "pginodesteal"), 0, "the pages were dropped first");
}

/// A value the kernel refuses, or a time the run never reaches, is an error naming the key.
#[test]
fn drop_caches_bad_value_or_time_is_refused() {
    for (extra, needle) in [
        ("at = \"1s\"\nvalue = 5", "run.drop_caches value 5"),
        ("at = \"3s\"\nvalue = 1", "is not before run.duration"),
        ("value = 1", "at"),
    ] {
        let toml = format!("{CREATED}\n[[run.drop_caches]]\n{extra}\n");
        let duration = [("run.duration".to_string(), "2s".to_string())];
        let e = refault_scenario::parse(&toml, "t.toml", &duration, None).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains(needle), "{msg}");
        assert!(msg.contains("drop_caches"), "{msg}");
    }
}
