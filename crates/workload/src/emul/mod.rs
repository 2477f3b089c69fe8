//! Emulations of the benchmarks the seed documents report (SEED-RESULTS.md).
//!
//! Each emulation turns a benchmark into the calls its processes make to the kernel: the
//! pages they touch through mappings, the read()/write() calls, the fsyncs, and their CPU
//! time in between. They keep just enough of the application's own logic (PostgreSQL's
//! buffer manager, the copy loop) to get *which* pages and calls right, and each module
//! says what it keeps and what it leaves out.
//!
//! | module | benchmark | seed |
//! |---|---|---|
//! | [`pgbench`] | pgbench TPC-B-like client + PostgreSQL backend | 000 (§S0) |
//! | [`memcached`] | memcachetest (parallelio) / memtier against memcached | 000, 001 |
//! | [`copy`] | parallelio's background large-file copy | 000 |
//! | [`kalloc`] | mmtests stress-highalloc; kernel-object churn | 004 |
//! | [`process`] | a build's short-lived compilers (fork, fault, exit) | 004 |

pub mod copy;
pub mod kalloc;
pub mod memcached;
pub mod pgbench;
pub mod process;
