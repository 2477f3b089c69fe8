//! refault-report: readable summaries and mmtests-style comparison tables of result files.
//!
//! Everything here works on a result file as a [`serde_json::Value`], not on the simulator's
//! types, so that any two result files can be compared, including ones written by an older
//! refault. The keys read here:
//!
//! | key | shape |
//! |---|---|
//! | `scenario` | the resolved scenario; `name` and `policy` (`lru`, `balance`, `swap_readahead`) are shown |
//! | `vmstat` | object: /proc/vmstat counter name -> integer |
//! | `tasks` | array of `{name, ops, ops_per_sec, latency_us: {mean, p50, p90, p99, p999, max}}` |
//! | `timeseries` | `{t_s: [...], <series>: [...]}` (not used by the text reports) |
//! | `sim_seconds`, `wall_seconds`, `events` | numbers |
//! | `reclaim_cpu` | optional object: activity -> seconds |
//! | `sched` | optional `{cpus, base_slice_ms, threads: [{name, cpu_seconds, runqueue_wait_seconds, max_wait_ms, nr_waits, nr_preempted}]}` |
//! | `lru_gen` | optional (multi-gen LRU): per memcg generations, tiers, walk statistics |
//!
//! Missing keys and values of the wrong type read as missing (`-`), never as errors, so a
//! partial or older result still prints what it can.
//!
//! | what | where |
//! |---|---|
//! | one run, for people: header, tasks, grouped vmstat counters, reclaim CPU | [`summary()`] |
//! | several runs side by side: value and change against the first | [`compare()`], [`Table`] |
//! | a `refault reproduce` table: baseline policy vs changed policy | [`SeedRow`], [`render_seed_table()`] |
//! | how numbers and percentages are printed | [`format_value()`], [`format_percent()`], [`percent_change()`] |
//! | the order and grouping of vmstat counters | [`vmstat`] |
//! | the multi-gen LRU's generations, like debugfs `lru_gen_full` | [`lru_gen_text()`] |
//! | writing output files so they are never half-written | [`write_atomic()`] |

mod atomic;
mod compare;
mod format;
mod lrugen;
pub mod mmtests;
mod result;
mod seed;
pub mod stats;
mod summary;
mod text;
pub mod vmstat;

pub use atomic::{check_writable, out_target, write_atomic, OutTarget};
pub use compare::{
    better, compare, compare_runs, Better, Kind, Options as CompareOptions, Row, Table,
};
pub use format::{format_percent, format_value, percent_change};
pub use lrugen::lru_gen_text;
pub use seed::{render_seed_table, SeedRow};
pub use stats::{mmtests_stats, welch_p, MmtestsStats};
pub use summary::summary;
