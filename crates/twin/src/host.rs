//! What the host offers: root, the memory cgroup hierarchy (v1 or v2), swap, zram, and the
//! kernel's own settings that the model must mirror.

use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CgroupVersion {
    V1,
    V2,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Host {
    pub kernel: String,
    pub cgroup: CgroupVersion,
    /// The directory new memory cgroups are created in.
    pub cgroup_root: PathBuf,
    pub zram: bool,
    pub lru_gen: bool,
}

/// Check what the twin needs; the error says what is missing.
pub fn preflight() -> Result<Host, String> {
    if unsafe { libc::geteuid() } != 0 {
        return Err(
            "the live-kernel twin needs root (it creates memory cgroups and swap devices)".into(),
        );
    }
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let (cgroup, cgroup_root) = if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()
    {
        (CgroupVersion::V1, PathBuf::from("/sys/fs/cgroup/memory"))
    } else if std::fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
        .map(|s| s.split_whitespace().any(|c| c == "memory"))
        .unwrap_or(false)
    {
        (CgroupVersion::V2, PathBuf::from("/sys/fs/cgroup"))
    } else {
        return Err("no memory cgroup hierarchy: neither /sys/fs/cgroup/memory (v1) nor a v2 hierarchy with the memory controller".into());
    };
    if !Path::new("/proc/swaps").exists() {
        return Err("the kernel has no swap support (/proc/swaps missing)".into());
    }
    let zram = Path::new("/sys/class/zram-control/hot_add").exists();
    let lru_gen = Path::new("/sys/kernel/mm/lru_gen/enabled").exists();
    Ok(Host {
        kernel,
        cgroup,
        cgroup_root,
        zram,
        lru_gen,
    })
}

/// /proc/vmstat as (name, value) pairs.
pub fn read_vmstat() -> Vec<(String, u64)> {
    parse_kv(&std::fs::read_to_string("/proc/vmstat").unwrap_or_default())
}

/// "name value" lines (vmstat, memory.stat).
pub fn parse_kv(text: &str) -> Vec<(String, u64)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

/// Active swap areas (/proc/swaps file names).
pub fn active_swaps() -> Vec<String> {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

const KDAMONDS: &str = "/sys/kernel/mm/damon/admin/kdamonds";

/// The host's running DAMON schemes whose action is `pageout` (their sysfs directories).
/// Such a scheme reclaims through `reclaim_pages()` outside any cgroup's limit reclaim: on
/// a host with one, swap-outs of other memory to the twin's swap device show up in the
/// global pswpout, and the scheme's own statistics say how much it paged out.
pub fn damon_pageout_kdamonds() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let list = |p: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(p)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for kd in list(Path::new(KDAMONDS)) {
        let on = std::fs::read_to_string(kd.join("state")).is_ok_and(|s| s.trim() == "on");
        if !on {
            continue;
        }
        for ctx in list(&kd.join("contexts")) {
            for scheme in list(&ctx.join("schemes")) {
                if std::fs::read_to_string(scheme.join("action"))
                    .is_ok_and(|a| a.trim() == "pageout")
                {
                    out.push(scheme);
                }
            }
        }
    }
    out
}

/// Bytes paged out so far by the given DAMON schemes (`stats/sz_applied`), after asking
/// their kdamonds to refresh the statistics (`update_schemes_stats`, which changes nothing
/// else). None when there is no such scheme or the statistics cannot be read.
pub fn damon_pageout_bytes(schemes: &[PathBuf]) -> Option<u64> {
    if schemes.is_empty() {
        return None;
    }
    // .../kdamonds/<k>/contexts/<c>/schemes/<s>: the kdamond is four levels up.
    let mut kdamonds: Vec<&Path> = schemes
        .iter()
        .filter_map(|s| s.ancestors().nth(4))
        .collect();
    kdamonds.dedup();
    for kd in kdamonds {
        std::fs::write(kd.join("state"), "update_schemes_stats").ok()?;
    }
    let mut sum = 0;
    for s in schemes {
        sum += std::fs::read_to_string(s.join("stats/sz_applied"))
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()?;
    }
    Some(sum)
}

/// read_ahead_kb of the block device holding `path`.
pub fn read_ahead_kb(path: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let sys = format!("/sys/dev/block/{major}:{minor}");
    let mut p = std::fs::canonicalize(&sys).ok()?;
    // A partition's queue lives in its parent disk.
    for _ in 0..2 {
        let q = p.join("queue/read_ahead_kb");
        if let Ok(s) = std::fs::read_to_string(&q) {
            return s.trim().parse().ok();
        }
        p = p.parent()?.to_path_buf();
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_key_value_lines() {
        let kv = super::parse_kv("nr_free_pages 12\npgscan_kswapd 7\nbogus\n");
        assert_eq!(
            kv,
            vec![("nr_free_pages".into(), 12), ("pgscan_kswapd".into(), 7)]
        );
    }
}
