//! The `vm.*` sysctls we model: one definition per knob (name, default, range, unit, doc).
//!
//! This table is the single source of the `[sysctl]` section: parsing, range checks, `--set
//! vm.*` overrides, the commented `scenarios/reference.toml` and `docs/sysctls.md` all come
//! from it. Keys are the `/proc/sys` names exactly (`vm.page-cluster` keeps its dash) and
//! values are integers, as the kernel writes them.
//!
//! Adding a sysctl: a field in [`crate::model::Sysctl`], one entry here, one line in the
//! `each_definition_*` tests below.

use crate::model::Sysctl;

/// Largest value of an `int` sysctl (the kernel's `INT_MAX`).
const INT_MAX: i64 = i32::MAX as i64;
/// Largest `vm.dirty_bytes` the kernel accepts: the limit in pages must fit in 32 bits
/// (`dirty_bytes_handler()`).
const DIRTY_BYTES_MAX: i64 = (u32::MAX as i64) * 4096;

/// Default of a sysctl.
#[derive(Clone, Copy, Debug)]
pub enum SysctlDefault {
    /// A fixed default.
    Value(i64),
    /// Computed from the machine when absent; the text says how, the number is a typical
    /// value for the reference file.
    Computed { how: &'static str, example: i64 },
}

/// One modelled sysctl.
#[derive(Clone, Copy)]
pub struct SysctlDef {
    /// The /proc/sys name, e.g. `vm.swappiness`.
    pub name: &'static str,
    pub default: SysctlDefault,
    /// Allowed range, inclusive (the kernel's `extra1`/`extra2` where it has them).
    pub min: i64,
    pub max: i64,
    /// Unit of the value, for the docs.
    pub unit: &'static str,
    /// What it means, in our words.
    pub doc: &'static str,
    set: fn(&mut Sysctl, i64),
}

impl SysctlDef {
    /// The range check; the error names the key.
    pub fn check(&self, value: i64) -> Result<(), String> {
        if value < self.min || value > self.max {
            Err(format!(
                "{} = {value} is out of range ({})",
                self.name,
                self.range_text()
            ))
        } else {
            Ok(())
        }
    }

    /// "0..=200", or "0 or more" when the kernel only bounds it by `INT_MAX`.
    pub fn range_text(&self) -> String {
        if self.max == INT_MAX {
            format!("{} or more", self.min)
        } else {
            format!("{}..={}", self.min, self.max)
        }
    }

    /// Stores an in-range value into `sysctl`.
    pub fn apply(&self, sysctl: &mut Sysctl, value: i64) {
        (self.set)(sysctl, value)
    }
}

/// Every modelled sysctl, in the order of the docs.
pub static SYSCTLS: &[SysctlDef] = &[
    SysctlDef {
        name: "vm.swappiness",
        default: SysctlDefault::Value(60),
        min: 0,
        max: 200,
        unit: "",
        doc: "How reclaim weighs swapping anon pages against dropping file pages: anon \
              receives swappiness/200 of the pressure before the cost balancing of \
              get_scan_count(). 0 avoids swap in global reclaim while file pages remain; \
              above 100 favours swapping.",
        set: |s, v| s.swappiness = v as u32,
    },
    SysctlDef {
        name: "vm.min_free_kbytes",
        default: SysctlDefault::Computed {
            how: "computed as at boot, int_sqrt(16 * memory in KiB) clamped to 128..=262144",
            example: 16384,
        },
        min: 0,
        max: INT_MAX,
        unit: "KiB",
        doc: "Memory kept free for atomic allocations: sets the min watermark of each zone \
              (split in proportion to zone size); low and high are derived from it and \
              vm.watermark_scale_factor. Must be below machine.memory.",
        set: |s, v| s.min_free_kbytes = Some(v as u64),
    },
    SysctlDef {
        name: "vm.watermark_scale_factor",
        default: SysctlDefault::Value(10),
        min: 1,
        max: 3000,
        unit: "1/10000 of zone",
        doc: "Distance between the min, low and high watermarks as a fraction of each zone: \
              how early kswapd wakes and how much it frees before sleeping.",
        set: |s, v| s.watermark_scale_factor = v as u32,
    },
    SysctlDef {
        name: "vm.watermark_boost_factor",
        default: SysctlDefault::Value(15000),
        min: 0,
        max: INT_MAX,
        unit: "1/10000 of high wmark",
        doc: "How far the watermarks are boosted after a fragmentation event so that kswapd \
              reclaims a little extra and compaction gets free pageblocks. 0 disables boosting.",
        set: |s, v| s.watermark_boost_factor = v as u32,
    },
    SysctlDef {
        name: "vm.extfrag_threshold",
        default: SysctlDefault::Value(500),
        min: 0,
        max: 1000,
        unit: "1/1000",
        doc: "Compaction of a costly order (> 3) is skipped when the zone's fragmentation \
              index for that order is at most this: the failure would be due to lack of \
              memory, not fragmentation, so reclaim is needed instead.",
        set: |s, v| s.extfrag_threshold = v as u32,
    },
    SysctlDef {
        name: "vm.compaction_proactiveness",
        default: SysctlDefault::Value(20),
        min: 0,
        max: 100,
        unit: "",
        doc: "How hard kcompactd compacts proactively: every 500 ms it compacts the node \
              when its fragmentation score (order-9 unusable free memory, %) is above \
              100 - proactiveness + leeway, down to 100 - proactiveness. 0 disables proactive \
              compaction.",
        set: |s, v| s.compaction_proactiveness = v as u32,
    },
    SysctlDef {
        name: "vm.page-cluster",
        default: SysctlDefault::Computed {
            how: "3, or 2 when machine.memory is below 16 MiB (as swap_setup() does)",
            example: 3,
        },
        min: 0,
        max: 31,
        unit: "log2 pages",
        doc: "Swap-in readahead window: up to 2^page-cluster pages are read per swap fault \
              (the VMA window is capped at 2^5). 0 disables swap readahead.",
        set: |s, v| s.page_cluster = v as u32,
    },
    SysctlDef {
        name: "vm.dirty_ratio",
        default: SysctlDefault::Value(20),
        min: 0,
        max: 100,
        unit: "% of available memory",
        doc: "Dirty page-cache limit at which a writing task is throttled and writes back \
              itself.",
        set: |s, v| s.dirty_ratio = v as u32,
    },
    SysctlDef {
        name: "vm.dirty_background_ratio",
        default: SysctlDefault::Value(10),
        min: 0,
        max: 100,
        unit: "% of available memory",
        doc: "Dirty page-cache level at which the flusher starts background writeback. When \
              not below vm.dirty_ratio the kernel uses half of the dirty limit instead.",
        set: |s, v| s.dirty_background_ratio = v as u32,
    },
    SysctlDef {
        name: "vm.dirty_bytes",
        default: SysctlDefault::Value(0),
        min: 0,
        max: DIRTY_BYTES_MAX,
        unit: "bytes",
        doc: "The dirty limit as an amount instead of vm.dirty_ratio, which it replaces when \
              non-zero (rounded up to pages). 0: vm.dirty_ratio applies. (The kernel keeps \
              one of the two: writing either zeroes the other.)",
        set: |s, v| s.dirty_bytes = v as u64,
    },
    SysctlDef {
        name: "vm.dirty_background_bytes",
        default: SysctlDefault::Value(0),
        min: 0,
        max: DIRTY_BYTES_MAX,
        unit: "bytes",
        doc: "The background writeback threshold as an amount instead of \
              vm.dirty_background_ratio, which it replaces when non-zero. 0: the ratio applies.",
        set: |s, v| s.dirty_background_bytes = v as u64,
    },
    SysctlDef {
        name: "vm.dirty_expire_centisecs",
        default: SysctlDefault::Value(3000),
        min: 0,
        max: INT_MAX,
        unit: "1/100 s",
        doc: "Age after which dirty data is written back by the periodic flusher run.",
        set: |s, v| s.dirty_expire_centisecs = v as u32,
    },
    SysctlDef {
        name: "vm.dirty_writeback_centisecs",
        default: SysctlDefault::Value(500),
        min: 0,
        max: INT_MAX,
        unit: "1/100 s",
        doc: "Interval of the periodic flusher run. 0 disables periodic writeback.",
        set: |s, v| s.dirty_writeback_centisecs = v as u32,
    },
    SysctlDef {
        name: "vm.vfs_cache_pressure",
        default: SysctlDefault::Value(100),
        min: 0,
        max: INT_MAX,
        unit: "%",
        doc: "Reclaim pressure on the dentry and inode caches relative to page cache: \
              scales what the slab shrinkers report as freeable. 0 never reclaims them.",
        set: |s, v| s.vfs_cache_pressure = v as u32,
    },
    SysctlDef {
        name: "vm.laptop_mode",
        default: SysctlDefault::Value(0),
        min: 0,
        max: INT_MAX,
        unit: "s",
        doc: "Non-zero: reclaim does not write dirty pages until its priority has dropped \
              (may_writepage starts at 0). The kernel's value is a writeback delay in \
              seconds; the model only uses whether it is non-zero.",
        set: |s, v| s.laptop_mode = v != 0,
    },
];

/// The definition of a sysctl by its /proc/sys name.
pub fn lookup(name: &str) -> Option<&'static SysctlDef> {
    SYSCTLS.iter().find(|d| d.name == name)
}

/// Names of every modelled sysctl, comma-separated, for error messages.
pub(crate) fn known_names() -> String {
    SYSCTLS
        .iter()
        .map(|d| d.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sysctls with every default applied for a machine of `memory_pages`.
pub fn defaults(memory_pages: u64) -> Sysctl {
    let mut s = Sysctl {
        swappiness: 0,
        min_free_kbytes: None,
        watermark_scale_factor: 0,
        watermark_boost_factor: 0,
        extfrag_threshold: 0,
        compaction_proactiveness: 0,
        page_cluster: 0,
        dirty_ratio: 0,
        dirty_background_ratio: 0,
        dirty_bytes: 0,
        dirty_background_bytes: 0,
        dirty_expire_centisecs: 0,
        dirty_writeback_centisecs: 0,
        vfs_cache_pressure: 0,
        laptop_mode: false,
    };
    for def in SYSCTLS {
        match def.default {
            SysctlDefault::Value(v) => def.apply(&mut s, v),
            SysctlDefault::Computed { .. } => match def.name {
                // None: the simulator computes it as the kernel does at boot.
                "vm.min_free_kbytes" => s.min_free_kbytes = None,
                // Kernel: mm/swap.c swap_setup().
                "vm.page-cluster" => {
                    let megs = (memory_pages * crate::model::PAGE_SIZE) >> 20;
                    s.page_cluster = if megs < 16 { 2 } else { 3 };
                }
                other => unreachable!("no rule computes the default of {other}"),
            },
        }
    }
    s
}

/// `docs/sysctls.md`: a markdown table generated from [`SYSCTLS`].
pub fn docs_markdown() -> String {
    let mut out = String::new();
    out.push_str("# Sysctls\n\n");
    out.push_str(
        "<!-- Generated from crates/scenario/src/sysctl.rs by `REFAULT_BLESS=1 cargo test -p \
         refault-scenario`; do not edit. -->\n\n",
    );
    out.push_str(
        "The `vm.*` sysctls refault models. Set them in a scenario's `[sysctl]` table under \
         their /proc/sys names, or on the command line with `--set vm.NAME=VALUE`. Values are \
         integers, as the kernel writes them; a value outside the range is an error.\n\n",
    );
    out.push_str("| sysctl | default | range | unit | meaning |\n");
    out.push_str("|---|---|---|---|---|\n");
    for def in SYSCTLS {
        let default = match def.default {
            SysctlDefault::Value(v) => v.to_string(),
            SysctlDefault::Computed { how, .. } => how.to_string(),
        };
        let unit = if def.unit.is_empty() { "-" } else { def.unit };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            def.name,
            default,
            def.range_text(),
            unit,
            def.doc
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, ErrorKind};

    const MACHINE: &str = "[machine]\nmemory = \"1G\"\n";

    fn with_sysctl(line: &str) -> String {
        format!("{MACHINE}[sysctl]\n{line}\n")
    }

    fn sysctl_of(text: &str, overrides: &[(&str, &str)]) -> Sysctl {
        let overrides: Vec<(String, String)> = overrides
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(text, "t.toml", &overrides, None).unwrap().sysctl
    }

    /// Default, in-range value from the file, `--set` override and an out-of-range error
    /// naming the key, for one sysctl.
    fn check_definition(name: &str, default: Option<i64>, get: fn(&Sysctl) -> i64) {
        let def = lookup(name).unwrap();
        if let Some(default) = default {
            assert_eq!(get(&sysctl_of(MACHINE, &[])), default, "{name} default");
        }
        assert_eq!(
            get(&sysctl_of(
                &with_sysctl(&format!("\"{name}\" = {}", def.min)),
                &[]
            )),
            def.min
        );
        let v = (def.min + 1).min(def.max);
        assert_eq!(
            get(&sysctl_of(MACHINE, &[(name, &v.to_string())])),
            v,
            "{name} --set"
        );
        if def.max != INT_MAX {
            let bad = def.max + 1;
            let err = parse(
                &with_sysctl(&format!("\"{name}\" = {bad}")),
                "t.toml",
                &[],
                None,
            )
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidValue);
            let col = name.len() + 6;
            assert_eq!(
                err.to_string(),
                format!(
                    "t.toml:4:{col}: {name} = {bad} is out of range ({})",
                    def.range_text()
                )
            );
        }
        if def.min > 0 || def.max != INT_MAX {
            let bad = def.min - 1;
            let err = parse(
                &with_sysctl(&format!("\"{name}\" = {bad}")),
                "t.toml",
                &[],
                None,
            )
            .unwrap_err();
            assert_eq!(err.kind(), ErrorKind::InvalidValue, "{err}");
            assert!(err.message().starts_with(name), "{err}");
        }
    }

    #[test]
    fn each_definition_swappiness() {
        check_definition("vm.swappiness", Some(60), |s| s.swappiness as i64);
    }

    #[test]
    fn each_definition_min_free_kbytes() {
        assert_eq!(sysctl_of(MACHINE, &[]).min_free_kbytes, None);
        check_definition("vm.min_free_kbytes", None, |s| {
            s.min_free_kbytes.unwrap() as i64
        });
    }

    #[test]
    fn each_definition_watermark_scale_factor() {
        check_definition("vm.watermark_scale_factor", Some(10), |s| {
            s.watermark_scale_factor as i64
        });
    }

    #[test]
    fn each_definition_watermark_boost_factor() {
        check_definition("vm.watermark_boost_factor", Some(15000), |s| {
            s.watermark_boost_factor as i64
        });
    }

    #[test]
    fn each_definition_compaction() {
        check_definition("vm.extfrag_threshold", Some(500), |s| {
            s.extfrag_threshold as i64
        });
        check_definition("vm.compaction_proactiveness", Some(20), |s| {
            s.compaction_proactiveness as i64
        });
    }

    #[test]
    fn each_definition_page_cluster() {
        check_definition("vm.page-cluster", Some(3), |s| s.page_cluster as i64);
        // swap_setup(): machines below 16 MiB read ahead 4 pages, not 8.
        let small = sysctl_of("[machine]\nmemory = \"8M\"\n", &[]);
        assert_eq!(small.page_cluster, 2);
    }

    #[test]
    fn each_definition_dirty() {
        check_definition("vm.dirty_ratio", Some(20), |s| s.dirty_ratio as i64);
        check_definition("vm.dirty_background_ratio", Some(10), |s| {
            s.dirty_background_ratio as i64
        });
        check_definition("vm.dirty_bytes", Some(0), |s| s.dirty_bytes as i64);
        check_definition("vm.dirty_background_bytes", Some(0), |s| {
            s.dirty_background_bytes as i64
        });
        check_definition("vm.dirty_expire_centisecs", Some(3000), |s| {
            s.dirty_expire_centisecs as i64
        });
        check_definition("vm.dirty_writeback_centisecs", Some(500), |s| {
            s.dirty_writeback_centisecs as i64
        });
    }

    #[test]
    fn each_definition_vfs_cache_pressure() {
        check_definition("vm.vfs_cache_pressure", Some(100), |s| {
            s.vfs_cache_pressure as i64
        });
    }

    #[test]
    fn each_definition_laptop_mode() {
        check_definition("vm.laptop_mode", Some(0), |s| s.laptop_mode as i64);
        assert!(sysctl_of(MACHINE, &[("vm.laptop_mode", "5")]).laptop_mode);
    }

    #[test]
    fn every_definition_is_tested() {
        // Keep this list in step with the each_definition_* tests above.
        let tested = [
            "vm.swappiness",
            "vm.min_free_kbytes",
            "vm.watermark_scale_factor",
            "vm.watermark_boost_factor",
            "vm.extfrag_threshold",
            "vm.compaction_proactiveness",
            "vm.page-cluster",
            "vm.dirty_ratio",
            "vm.dirty_background_ratio",
            "vm.dirty_bytes",
            "vm.dirty_background_bytes",
            "vm.dirty_expire_centisecs",
            "vm.dirty_writeback_centisecs",
            "vm.vfs_cache_pressure",
            "vm.laptop_mode",
        ];
        let names: Vec<&str> = SYSCTLS.iter().map(|d| d.name).collect();
        assert_eq!(names, tested);
    }

    #[test]
    fn unknown_sysctl_lists_the_known_ones() {
        let err = parse(&with_sysctl("\"vm.swapiness\" = 10"), "t.toml", &[], None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownKey);
        assert_eq!(
            err.to_string(),
            format!(
                "t.toml:4:1: unknown sysctl `vm.swapiness` (did you mean `vm.swappiness`?); \
                 known: {}",
                known_names()
            )
        );
    }

    #[test]
    fn sysctl_values_are_integers() {
        let err = parse(
            &with_sysctl("\"vm.swappiness\" = \"60\""),
            "t.toml",
            &[],
            None,
        )
        .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidValue);
        assert_eq!(
            err.to_string(),
            "t.toml:4:19: vm.swappiness must be an integer, not a string"
        );
    }
}
