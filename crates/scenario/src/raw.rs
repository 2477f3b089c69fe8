//! The scenario file as written: every key optional, nothing resolved.
//!
//! These structs mirror the schema of `crate::defs` (a test compares their field lists) and
//! deny unknown fields, as a backstop behind the schema check that gives nicer messages.
//! Defaults, cross-references and ranges are the resolver's job (`crate::resolve`), which
//! can say where in the file a problem is.

use crate::model::{
    Access, Advice, BalanceKind, HugepageAdviceKind, KallocGfp, KallocMigratetype,
    KswapdCompactionKind, LruKind, ObjectKind, SwapReadaheadKind, ThpDefragKind, ThpEnabledKind,
};
use crate::size::{Bandwidth, Duration, SampleInterval, Size};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawScenario {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<u64>,
    pub run: RawRun,
    pub machine: RawMachine,
    /// Checked against `crate::sysctl::SYSCTLS` by the resolver (names and integer values).
    pub sysctl: BTreeMap<String, toml::Value>,
    pub policy: RawPolicy,
    pub lru_gen: RawLruGen,
    pub transparent_hugepage: RawThp,
    pub swap: RawSwap,
    pub fs: RawFs,
    pub device: Vec<RawDevice>,
    pub cgroup: Vec<RawCgroup>,
    pub object: Vec<RawObject>,
    pub task: Vec<RawTask>,
    pub model: RawModel,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawRun {
    pub duration: Option<Duration>,
    pub warmup: Option<Duration>,
    pub sample_interval: Option<SampleInterval>,
    pub drop_caches: Vec<RawDropCaches>,
    pub sysctl: Vec<RawSysctlWrite>,
}

/// One `[[run.sysctl]]`: `echo value > /proc/sys/<name>` at a simulated time.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawSysctlWrite {
    pub at: Option<Duration>,
    pub name: Option<String>,
    pub value: Option<toml::Value>,
}

/// One `[[run.drop_caches]]`: `echo value > /proc/sys/vm/drop_caches` at a simulated time.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawDropCaches {
    pub at: Option<Duration>,
    pub value: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawMachine {
    pub memory: Option<Size>,
    pub cpus: Option<u32>,
    pub dma32: Option<Size>,
    pub kernel_reserved: Option<Size>,
    pub kernel_memory: Option<Size>,
    pub from_zoneinfo: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawPolicy {
    pub lru: Option<LruKind>,
    pub balance: Option<BalanceKind>,
    pub kswapd_compaction: Option<KswapdCompactionKind>,
    pub boosted_reclaim_skips_slab: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawLruGen {
    pub enabled: Option<bool>,
    pub min_ttl_ms: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawThp {
    pub enabled: Option<ThpEnabledKind>,
    pub defrag: Option<ThpDefragKind>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawSwap {
    pub vma_ra_enabled: Option<bool>,
    pub readahead: Option<SwapReadaheadKind>,
    pub area: Vec<RawSwapArea>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawSwapArea {
    pub device: Option<String>,
    pub size: Option<Size>,
    pub priority: Option<i32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawFs {
    pub device: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawDevice {
    pub name: Option<String>,
    pub preset: Option<String>,
    pub latency: Option<Duration>,
    pub seek: Option<Duration>,
    pub read_bw: Option<Bandwidth>,
    pub write_bw: Option<Bandwidth>,
    pub queue_depth: Option<u32>,
    pub rotational: Option<bool>,
    pub synchronous: Option<bool>,
    pub cpu_per_page: Option<Duration>,
    pub wbt_lat_usec: Option<u64>,
}

/// `memory.max`: a size or "max".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    Max,
    Bytes(u64),
}

impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Limit, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Int(u64),
            Str(String),
        }
        match Either::deserialize(d)
            .map_err(|_| serde::de::Error::custom("expected a size such as \"2G\" or \"max\""))?
        {
            Either::Int(b) => Ok(Limit::Bytes(b)),
            Either::Str(s) if s == "max" => Ok(Limit::Max),
            Either::Str(s) => crate::size::parse_size(&s)
                .map(Limit::Bytes)
                .map_err(|e| serde::de::Error::custom(format!("{e}; or \"max\" for no limit"))),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawCgroup {
    pub name: Option<String>,
    #[serde(rename = "memory.max")]
    pub memory_max: Option<Limit>,
    #[serde(rename = "memory.swap.max")]
    pub memory_swap_max: Option<Limit>,
    #[serde(rename = "memory.swappiness")]
    pub memory_swappiness: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawObject {
    pub name: Option<String>,
    pub kind: Option<ObjectKind>,
    pub size: Option<Size>,
    pub exists: Option<bool>,
    pub file_size: Option<Size>,
    pub madvise: Option<HugepageAdviceKind>,
    pub mlock: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum WorkloadName {
    Phases,
    Pgbench,
    Memcached,
    Copy,
    Kalloc,
    Process,
}

impl WorkloadName {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadName::Phases => "phases",
            WorkloadName::Pgbench => "pgbench",
            WorkloadName::Memcached => "memcached",
            WorkloadName::Copy => "copy",
            WorkloadName::Kalloc => "kalloc",
            WorkloadName::Process => "process",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawTask {
    pub name: Option<String>,
    pub cgroup: Option<String>,
    pub instances: Option<u32>,
    pub start: Option<Duration>,
    pub workload: Option<WorkloadName>,
    pub repeat: Option<u64>,
    pub phase: Vec<RawPhase>,
    pub pgbench: Option<RawPgbench>,
    pub memcached: Option<RawMemcached>,
    pub copy: Option<RawCopy>,
    pub kalloc: Option<RawKalloc>,
    pub process: Option<RawProcess>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawProcess {
    pub object: Option<String>,
    pub count: Option<u64>,
    pub ops: Option<u64>,
    pub think: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawKalloc {
    pub order: Option<u32>,
    pub count: Option<u64>,
    pub gfp: Option<KallocGfp>,
    pub migratetype: Option<KallocMigratetype>,
    pub live: Option<u64>,
    pub think: Option<Duration>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PatternName {
    Sequential,
    Random,
    Zipf,
    HotCold,
}

impl PatternName {
    pub fn as_str(self) -> &'static str {
        match self {
            PatternName::Sequential => "sequential",
            PatternName::Random => "random",
            PatternName::Zipf => "zipf",
            PatternName::HotCold => "hot-cold",
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawPhase {
    pub name: Option<String>,
    pub access: Option<Access>,
    pub object: Option<String>,
    pub pattern: Option<PatternName>,
    pub zipf_s: Option<f64>,
    pub scatter: Option<bool>,
    pub hot_fraction: Option<f64>,
    pub hot_probability: Option<f64>,
    pub range: Option<(Size, Size)>,
    pub ops: Option<u64>,
    pub pages_per_op: Option<u32>,
    pub write_fraction: Option<f64>,
    pub think: Option<Duration>,
    pub advice: Option<Advice>,
    pub fsync: Option<bool>,
    pub source: Option<RawSource>,
    pub mix: Option<Vec<RawMix>>,
}

/// One entry of `mix = [...]` in a phase.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawMix {
    pub object: Option<String>,
    pub weight: Option<f64>,
    pub access: Option<Access>,
    pub pattern: Option<PatternName>,
    pub zipf_s: Option<f64>,
    /// The name for `zipf_s`.
    pub skew: Option<f64>,
    pub scatter: Option<bool>,
    pub hot_fraction: Option<f64>,
    pub hot_probability: Option<f64>,
    pub range: Option<(Size, Size)>,
    pub pages_per_op: Option<u32>,
    pub write_fraction: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawSource {
    pub trace: Option<String>,
    pub format: Option<String>,
    pub task: Option<String>,
    pub columns: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawPgbench {
    pub shared_buffers: Option<String>,
    pub database: Option<String>,
    pub wal: Option<String>,
    pub transactions: Option<u64>,
    pub zipf_s: Option<f64>,
    pub think: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawMemcached {
    pub items: Option<String>,
    pub fill: Option<bool>,
    pub requests: Option<u64>,
    pub set_fraction: Option<f64>,
    pub zipf_s: Option<f64>,
    pub pages_per_request: Option<u32>,
    pub item_size: Option<u32>,
    pub hashtable: Option<String>,
    pub think: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawCopy {
    pub src: Option<String>,
    pub dst: Option<String>,
    pub chunk_pages: Option<u32>,
    pub passes: Option<u64>,
    pub fsync: Option<bool>,
    pub think: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawModel {
    pub readahead_kb: Option<u64>,
    pub max_file_folio_order: Option<u32>,
    pub check_interval: Option<u64>,
    pub cgroup_version: Option<u32>,
    pub memcg_stats_flush_ms: Option<u64>,
    pub memcg_stats_first_flush_ms: Option<u64>,
    pub kernel: Option<String>,
    pub cost: RawCost,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RawCost {
    pub touch: Option<Duration>,
    pub minor_fault: Option<Duration>,
    pub major_fault: Option<Duration>,
    pub pagecache_hit: Option<Duration>,
    pub page_alloc: Option<Duration>,
    pub scan_per_page: Option<Duration>,
    pub rmap_per_call: Option<Duration>,
    pub rmap_per_mapping: Option<Duration>,
    pub unmap_per_mapping: Option<Duration>,
    pub tlb_flush_local: Option<Duration>,
    pub tlb_shootdown: Option<Duration>,
    pub tlb_shootdown_per_cpu: Option<Duration>,
    pub pt_walk_per_pte: Option<Duration>,
    pub reclaim_per_page: Option<Duration>,
    pub io_submit: Option<Duration>,
    pub compact_scan_per_page: Option<Duration>,
    pub migrate_per_page: Option<Duration>,
    pub lru_lock: Option<Duration>,
    pub lru_move: Option<Duration>,
}

#[cfg(test)]
mod tests {
    //! The raw structs and the schema table must list the same keys.
    use super::*;
    use crate::defs::{section_at, SectionDef};
    use serde::de::{self, Visitor};

    /// A deserialiser that only records the field list serde asks for.
    struct Fields;

    #[derive(Debug)]
    struct Captured(&'static [&'static str]);
    impl std::fmt::Display for Captured {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{:?}", self.0)
        }
    }
    impl std::error::Error for Captured {}
    impl de::Error for Captured {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Captured(&[])
        }
    }

    impl<'de> de::Deserializer<'de> for Fields {
        type Error = Captured;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Captured> {
            Err(Captured(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Captured> {
            Err(Captured(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }

    fn fields_of<T: for<'de> Deserialize<'de>>() -> Vec<&'static str> {
        let Err(Captured(fields)) = T::deserialize(Fields) else {
            panic!("the capturing deserialiser never succeeds")
        };
        let mut v = fields.to_vec();
        v.sort_unstable();
        v
    }

    fn schema_of(path: &str) -> Vec<&'static str> {
        let s: &SectionDef = section_at(path).unwrap();
        let mut v = s.known();
        v.sort_unstable();
        v
    }

    #[test]
    fn raw_structs_match_the_schema() {
        let mut root = schema_of("");
        root.retain(|k| *k != "sysctl");
        let mut raw_root = fields_of::<RawScenario>();
        raw_root.retain(|k| *k != "sysctl");
        assert_eq!(raw_root, root);
        assert_eq!(fields_of::<RawRun>(), schema_of("run"));
        assert_eq!(fields_of::<RawDropCaches>(), schema_of("run.drop_caches"));
        assert_eq!(fields_of::<RawSysctlWrite>(), schema_of("run.sysctl"));
        assert_eq!(fields_of::<RawMachine>(), schema_of("machine"));
        assert_eq!(fields_of::<RawPolicy>(), schema_of("policy"));
        assert_eq!(fields_of::<RawLruGen>(), schema_of("lru_gen"));
        assert_eq!(fields_of::<RawThp>(), schema_of("transparent_hugepage"));
        assert_eq!(fields_of::<RawSwap>(), schema_of("swap"));
        assert_eq!(fields_of::<RawSwapArea>(), schema_of("swap.area"));
        assert_eq!(fields_of::<RawFs>(), schema_of("fs"));
        assert_eq!(fields_of::<RawDevice>(), schema_of("device"));
        assert_eq!(fields_of::<RawCgroup>(), schema_of("cgroup"));
        assert_eq!(fields_of::<RawObject>(), schema_of("object"));
        assert_eq!(fields_of::<RawTask>(), schema_of("task"));
        assert_eq!(fields_of::<RawPhase>(), schema_of("task.phase"));
        assert_eq!(fields_of::<RawSource>(), schema_of("task.phase.source"));
        assert_eq!(fields_of::<RawPgbench>(), schema_of("task.pgbench"));
        assert_eq!(fields_of::<RawMemcached>(), schema_of("task.memcached"));
        assert_eq!(fields_of::<RawKalloc>(), schema_of("task.kalloc"));
        assert_eq!(fields_of::<RawProcess>(), schema_of("task.process"));
        assert_eq!(fields_of::<RawCopy>(), schema_of("task.copy"));
        assert_eq!(fields_of::<RawModel>(), schema_of("model"));
        assert_eq!(fields_of::<RawCost>(), schema_of("model.cost"));
    }
}
