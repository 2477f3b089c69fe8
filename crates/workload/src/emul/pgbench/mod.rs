//! pgbench's TPC-B-like transaction, as one PostgreSQL backend issues it to the kernel.
//!
//! # What it is for
//! Seed 000 (SEED-RESULTS.md §S0) measures pgbench, TPC-B (sort of), scale factor 420,
//! 8 clients: a 5.6 GiB database with 1 GiB of shared buffers on a 7 GiB machine. The
//! kernel sees three kinds of memory from it: the shared-buffer segment (shmem, on the anon
//! LRU, swappable), the database file's page cache (reads of blocks that miss in shared
//! buffers) and the WAL (small sequential writes, fdatasync per commit). Whether reclaim takes
//! idle anon or the database's cache is what the seed's two policies disagree on, so those
//! three streams and the skew between them are what this emulation must get right.
//!
//! # The database file
//! One file object holds all relations, laid out in page regions:
//!
//! ```text
//!   | hot 1% | accounts ~85%                    | accounts index 12% | history 2% |
//!     branches, tellers, index roots and inner pages: Zipf(zipf_s) popularity
//!              pgbench_accounts heap: uniform (aid uniform over 100000 x scale rows)
//!                                      pgbench_accounts_pkey leaves: the leaf of aid
//!                                                              append-only, wraps
//! ```
//!
//! The proportions are pgbench's at scale 420: accounts heap 5.3 GB, its primary-key index
//! about 0.9 GB (about 85% / 14% of the total), branches and tellers a few pages, history
//! growing from empty. Each region has at least one page (databases of fewer than 4 pages
//! put every region over the whole file).
//!
//! # One transaction (one `OpEnd`)
//! pgbench's script, and the block accesses each statement makes:
//!
//! ```text
//!   UPDATE pgbench_accounts ... WHERE aid = :aid   index inner page (hot, read),
//!                                                  index leaf of aid (read),
//!                                                  accounts page of aid (write)
//!   SELECT abalance FROM pgbench_accounts ...      the same page: always a hit, folded in
//!   UPDATE pgbench_tellers ... WHERE tid = :tid    a hot page (write)
//!   UPDATE pgbench_branches ... WHERE bid = :bid   a hot page (write)
//!   INSERT INTO pgbench_history ...                the current history page (write);
//!                                                  a new page every 80 rows (4 KiB / ~50 B)
//!   END                                            Write{wal, 1 page}; Fdatasync{wal}
//!   client round trip                              Think{think_ns}; OpEnd
//! ```
//!
//! Each block access goes through the client's buffer pool (`bufmgr.rs`, PostgreSQL's CLOCK
//! sweep with usage counts):
//!
//! ```text
//!   hit:   Touch{shared_buffers, buf, write}
//!   miss:  [Write{database, victim's old block, 1}  if the victim buffer was dirty]
//!          Read{database, block, 1}                 (Write instead for a new history
//!                                                    page: relation extension)
//!          Touch{shared_buffers, buf, write: true}  (the block is copied in)
//! ```
//!
//! # Faithful
//! - The skew: hot pages stay in shared buffers and are touched constantly; account and
//!   index-leaf accesses are uniform over ~97% of the file, so their hit ratio is about
//!   shared_buffers / database size, and the rest become 1-page reads of random file pages:
//!   the page-cache working set the seed's kernel had to protect.
//! - PostgreSQL's buffer replacement (CLOCK, usage counts up to 5, free list first) decides
//!   which shared-buffer pages stay hot for the kernel's LRU.
//! - Dirty buffers are written back (pwrite of one block) when reused, making dirty page
//!   cache that the kernel must write back before reclaiming it.
//! - synchronous_commit: one WAL write and one fdatasync per transaction (9.3's
//!   `wal_sync_method` defaults to fdatasync on Linux: `issue_xlog_fsync()`), wrapping at
//!   the WAL object's size as recycled WAL segments do. The segments are preallocated
//!   (`XLogFileInit()` zero-fills each one), so the flush overwrites allocated blocks and
//!   commits no journal transaction (refault_mm's `Mm::fdatasync`).
//!
//! # Shared between the clients
//! The instances of one task (pgbench's clients, each served by its own backend) share what
//! PostgreSQL keeps in shared memory ([`SharedState`]): one buffer pool with one buffer table
//! and one clock hand (src/backend/storage/buffer/README, "Buffer Ring Replacement
//! Strategy": `StrategyControl->nextVictimBuffer` is shared by all backends), one WAL insert
//! position (xlog.c, `XLogCtl->Insert`), and one pgbench_history relation whose tail page
//! every client inserts into. So a branch, teller or index inner page occupies one buffer
//! whichever client touches it, a block one client read is a hit for the others, and each
//! history page takes 80 rows from all clients together.
//!
//! # Simplified
//! - A client draws its whole transaction when the engine asks for its first event, so the
//!   shared pool sees a transaction's block accesses at once, not interleaved with other
//!   clients' at the times their IO completes; no buffer pins or content locks.
//! - One 4 KiB page per block (PostgreSQL's are 8 KiB); one WAL page per commit, with no
//!   group commit.
//! - No background writer, checkpointer (no periodic data-file fsync), autovacuum, HOT
//!   pruning, index splits, or sorting/hashing memory; no CPU time for query execution
//!   except what `think_ns` stands for.
//! - Tellers and branches are drawn from the hot region's Zipf, not from their real sizes
//!   (scale x 10 and scale rows).
//!
//! # Tests
//! `emul::pgbench::tests::*`, `emul::pgbench::bufmgr::tests::*`.

pub(crate) mod bufmgr;

use refault_scenario::{ObjectKind, ObjectSpec, PgbenchSpec};

use crate::error::{check, SourceErrorKind};
use crate::event::{EventSource, ObjId, Op};
use crate::rng::Rng;
use crate::seq::OpSeq;
use crate::zipf::Zipf;
use bufmgr::{BufAccess, BufferPool};
use std::sync::{Arc, Mutex};

/// History rows per 4 KiB page: pgbench_history rows are ~50 bytes with their header.
const HISTORY_ROWS_PER_PAGE: u64 = 80;

/// A contiguous run of database pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u32,
    pub len: u32,
}

impl Region {
    /// Whether `page` lies in the region.
    pub fn contains(&self, page: u32) -> bool {
        page >= self.start && page - self.start < self.len
    }
}

/// Where the relations sit in the database file (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbLayout {
    /// Branches, tellers, index roots and inner pages.
    pub hot: Region,
    /// pgbench_accounts heap.
    pub accounts: Region,
    /// pgbench_accounts_pkey leaf pages.
    pub index: Region,
    /// pgbench_history.
    pub history: Region,
}

impl DbLayout {
    /// The layout of a database of `pages` (1..=u32::MAX) pages.
    ///
    /// Example: 10000 pages → hot 0..100, accounts 100..8600, index 8600..9800,
    /// history 9800..10000.
    pub fn new(pages: u32) -> Self {
        if pages < 4 {
            let all = Region {
                start: 0,
                len: pages,
            };
            return DbLayout {
                hot: all,
                accounts: all,
                index: all,
                history: all,
            };
        }
        let p = u64::from(pages);
        let hot = (p / 100).max(1) as u32;
        let history = (p / 50).max(1) as u32;
        let index = (p * 12 / 100).max(1) as u32;
        let accounts = pages - hot - history - index;
        DbLayout {
            hot: Region { start: 0, len: hot },
            accounts: Region {
                start: hot,
                len: accounts,
            },
            index: Region {
                start: hot + accounts,
                len: index,
            },
            history: Region {
                start: hot + accounts + index,
                len: history,
            },
        }
    }
}

/// Counters of one client's buffer pool, for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgbenchStats {
    pub transactions: u64,
    /// Block accesses found in shared buffers.
    pub buffer_hits: u64,
    /// Block accesses that read (or extended) the database file.
    pub buffer_misses: u64,
    /// Dirty victims written back to the database file.
    pub dirty_writes: u64,
}

/// What PostgreSQL keeps in shared memory for all backends (see the module doc, "Shared
/// between the clients").
#[derive(Debug)]
pub(crate) struct SharedState {
    /// The buffer pool: buffer table, usage counts, clock hand.
    pool: BufferPool,
    /// The next WAL page to write (the WAL insert position).
    wal_pos: u32,
    /// Rows inserted into pgbench_history by all clients.
    history_rows: u64,
}

/// One pgbench client and the PostgreSQL backend serving it (see the module doc). Clones
/// share the [`SharedState`] as the instances of one task do.
#[derive(Clone, Debug)]
pub struct PgbenchSource {
    shared_buffers: ObjId,
    database: ObjId,
    wal: ObjId,
    layout: DbLayout,
    /// Popularity within the hot region.
    hot: Zipf,
    /// Shared with the other clients of the same database (`sharing`).
    shared: Arc<Mutex<SharedState>>,
    /// WAL size in pages.
    wal_pages: u32,
    /// Transactions to run; 0 = forever.
    transactions: u64,
    think_ns: u64,
    stats: PgbenchStats,
    rng: Rng,
    /// At most 6 block accesses x 3 events + WAL write + fdatasync.
    seq: OpSeq<24>,
}

impl PgbenchSource {
    /// A client of `spec`'s database drawing from `Rng::new(seed)`, alone on its server.
    pub fn new(
        spec: &PgbenchSpec,
        objects: &[ObjectSpec],
        seed: u64,
    ) -> Result<Self, SourceErrorKind> {
        Self::sharing(spec, objects, seed, None)
    }

    /// [`PgbenchSource::new`], connected to the same server as `other` (its buffer pool, WAL
    /// and history: [`SharedState`]) when `other` uses the same shared-buffer, database and
    /// WAL objects.
    pub fn sharing(
        spec: &PgbenchSpec,
        objects: &[ObjectSpec],
        seed: u64,
        other: Option<&PgbenchSource>,
    ) -> Result<Self, SourceErrorKind> {
        let sb = check::object(
            objects,
            spec.shared_buffers,
            &|| "shared_buffers".into(),
            &[ObjectKind::Shmem, ObjectKind::Anon],
            "shared memory (shmem or anon)",
        )?;
        let db = check::object(
            objects,
            spec.database,
            &|| "database".into(),
            &[ObjectKind::File],
            "a file",
        )?;
        let wal = check::object(
            objects,
            spec.wal,
            &|| "wal".into(),
            &[ObjectKind::File],
            "a file",
        )?;
        check::exponent(spec.zipf_s, &|| "zipf_s".into())?;
        let layout = DbLayout::new(db.size_pages as u32);
        let shared = match other {
            Some(o)
                if o.shared_buffers == spec.shared_buffers as ObjId
                    && o.database == spec.database as ObjId
                    && o.wal == spec.wal as ObjId =>
            {
                Arc::clone(&o.shared)
            }
            _ => Arc::new(Mutex::new(SharedState {
                pool: BufferPool::new(sb.size_pages as u32),
                wal_pos: 0,
                history_rows: 0,
            })),
        };
        Ok(PgbenchSource {
            shared_buffers: spec.shared_buffers as ObjId,
            database: spec.database as ObjId,
            wal: spec.wal as ObjId,
            layout,
            hot: Zipf::new(u64::from(layout.hot.len), spec.zipf_s),
            shared,
            wal_pages: wal.size_pages as u32,
            transactions: spec.transactions,
            think_ns: spec.think_ns,
            stats: PgbenchStats::default(),
            rng: Rng::new(seed),
            seq: OpSeq::new(),
        })
    }

    /// The database layout in use.
    pub fn layout(&self) -> &DbLayout {
        &self.layout
    }

    /// Counters so far.
    pub fn stats(&self) -> PgbenchStats {
        self.stats
    }

    /// Queues the events of one transaction.
    fn transaction(&mut self) {
        let shared = Arc::clone(&self.shared);
        let mut sh = shared.lock().unwrap_or_else(|e| e.into_inner());
        let sh = &mut *sh;
        let l = self.layout;
        // UPDATE accounts: descend the primary-key index to aid's leaf, update the row.
        let aid = self.rng.below(u64::from(l.accounts.len));
        let inner = l.hot.start + self.hot.sample(&mut self.rng) as u32;
        self.block(&mut sh.pool, inner, false, false);
        let leaf = aid * u64::from(l.index.len) / u64::from(l.accounts.len);
        self.block(&mut sh.pool, l.index.start + leaf as u32, false, false);
        self.block(&mut sh.pool, l.accounts.start + aid as u32, true, false);
        // SELECT abalance: the page just updated, a guaranteed hit (folded in).
        // UPDATE tellers, UPDATE branches.
        let teller = l.hot.start + self.hot.sample(&mut self.rng) as u32;
        self.block(&mut sh.pool, teller, true, false);
        let branch = l.hot.start + self.hot.sample(&mut self.rng) as u32;
        self.block(&mut sh.pool, branch, true, false);
        // INSERT INTO history: the tail page; a fresh page extends the relation.
        let row = sh.history_rows;
        sh.history_rows += 1;
        let hpage = (row / HISTORY_ROWS_PER_PAGE) % u64::from(l.history.len);
        // The first row of a page extends the relation (kept as `% == 0` in two steps for
        // the workspace's rust-version 1.80, which predates is_multiple_of).
        let row_in_page = row % HISTORY_ROWS_PER_PAGE;
        let extend = row_in_page == 0;
        self.block(&mut sh.pool, l.history.start + hpage as u32, true, extend);
        // COMMIT with synchronous_commit: the WAL record is written and flushed.
        self.seq.push(Op::Write {
            obj: self.wal,
            page: sh.wal_pos,
            nr: 1,
        });
        sh.wal_pos = if sh.wal_pos + 1 == self.wal_pages {
            0
        } else {
            sh.wal_pos + 1
        };
        self.seq.push(Op::Fdatasync { obj: self.wal });
        self.seq.finish(self.think_ns);
        self.stats.transactions += 1;
    }

    /// One block access through the buffer pool. `extend`: the block is new (relation
    /// extension writes a zeroed block instead of reading one).
    #[inline]
    fn block(&mut self, pool: &mut BufferPool, page: u32, write: bool, extend: bool) {
        match pool.access(page, write) {
            BufAccess::Hit { buf } => {
                self.stats.buffer_hits += 1;
                self.seq.push(Op::Touch {
                    obj: self.shared_buffers,
                    page: buf,
                    write,
                });
            }
            BufAccess::Miss { buf, evicted } => {
                self.stats.buffer_misses += 1;
                if let Some((old, true)) = evicted {
                    self.stats.dirty_writes += 1;
                    self.seq.push(Op::Write {
                        obj: self.database,
                        page: old,
                        nr: 1,
                    });
                }
                let io = if extend {
                    Op::Write {
                        obj: self.database,
                        page,
                        nr: 1,
                    }
                } else {
                    Op::Read {
                        obj: self.database,
                        page,
                        nr: 1,
                    }
                };
                self.seq.push(io);
                self.seq.push(Op::Touch {
                    obj: self.shared_buffers,
                    page: buf,
                    write: true,
                });
            }
        }
    }
}

impl EventSource for PgbenchSource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        if let Some(op) = self.seq.pop() {
            return Some(op);
        }
        if self.transactions != 0 && self.stats.transactions >= self.transactions {
            return None;
        }
        self.transaction();
        self.seq.pop()
    }

    /// Unknown: the events per transaction depend on buffer hits.
    fn len_hint(&self) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{file, shmem};

    const SB: usize = 0;
    const DB: usize = 1;
    const WAL: usize = 2;

    fn spec(transactions: u64) -> PgbenchSpec {
        PgbenchSpec {
            shared_buffers: SB,
            database: DB,
            wal: WAL,
            transactions,
            zipf_s: 0.99,
            think_ns: 500_000,
        }
    }

    fn objects(sb: u64, db: u64, wal: u64) -> Vec<ObjectSpec> {
        vec![shmem("sb", sb), file("db", db), file("wal", wal)]
    }

    /// Splits a stream into transactions (each ends with OpEnd).
    fn transactions(ops: &[Op]) -> Vec<&[Op]> {
        ops.split_inclusive(|o| *o == Op::OpEnd).collect()
    }

    #[test]
    fn layout_example() {
        let l = DbLayout::new(10_000);
        assert_eq!(l.hot, Region { start: 0, len: 100 });
        assert_eq!(
            l.accounts,
            Region {
                start: 100,
                len: 8500
            }
        );
        assert_eq!(
            l.index,
            Region {
                start: 8600,
                len: 1200
            }
        );
        assert_eq!(
            l.history,
            Region {
                start: 9800,
                len: 200
            }
        );
        let tiny = DbLayout::new(4);
        assert_eq!(
            [
                tiny.hot.len,
                tiny.accounts.len,
                tiny.index.len,
                tiny.history.len
            ],
            [1; 4]
        );
        assert_eq!(DbLayout::new(2).accounts, Region { start: 0, len: 2 });
    }

    #[test]
    fn every_transaction_commits_once() {
        let objs = objects(256, 20_000, 8);
        let mut src = PgbenchSource::new(&spec(500), &objs, 1).unwrap();
        let ops: Vec<Op> = std::iter::from_fn(|| src.next_op()).collect();
        let txs = transactions(&ops);
        assert_eq!(txs.len(), 500);
        let mut wal_pages = Vec::new();
        for tx in &txs {
            let wal_writes: Vec<u32> = tx
                .iter()
                .filter_map(|o| match *o {
                    Op::Write { obj, page, nr: 1 } if obj == WAL as u32 => Some(page),
                    _ => None,
                })
                .collect();
            assert_eq!(wal_writes.len(), 1, "{tx:?}");
            wal_pages.push(wal_writes[0]);
            assert_eq!(
                tx.iter()
                    .filter(|o| **o == Op::Fdatasync { obj: WAL as u32 })
                    .count(),
                1
            );
            // Commit order: WAL write, fdatasync, think, end.
            let n = tx.len();
            assert_eq!(
                &tx[n - 3..],
                [
                    Op::Fdatasync { obj: 2 },
                    Op::Think { ns: 500_000 },
                    Op::OpEnd
                ]
            );
            assert!(matches!(tx[n - 4], Op::Write { obj: 2, .. }));
            // Six block accesses, each ending with a touch of a buffer.
            let touches = tx
                .iter()
                .filter(|o| matches!(o, Op::Touch { obj: 0, .. }))
                .count();
            assert_eq!(touches, 6);
        }
        // The WAL is written sequentially and wraps at 8 pages.
        assert!(wal_pages
            .iter()
            .enumerate()
            .all(|(i, &p)| p as usize == i % 8));
        assert_eq!(src.stats().transactions, 500);
    }

    #[test]
    fn events_stay_inside_their_objects() {
        let objs = objects(100, 5_000, 64);
        let mut src = PgbenchSource::new(&spec(2_000), &objs, 3).unwrap();
        while let Some(op) = src.next_op() {
            match op {
                Op::Touch { obj, page, .. } => assert!(obj == SB as u32 && page < 100),
                Op::Read { obj, page, nr } => assert!(obj == DB as u32 && page < 5_000 && nr == 1),
                Op::Write { obj, page, .. } if obj == DB as u32 => assert!(page < 5_000),
                Op::Write { obj, page, .. } => assert!(obj == WAL as u32 && page < 64),
                Op::Fdatasync { obj } => assert_eq!(obj, WAL as u32),
                Op::Think { .. } | Op::OpEnd => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn buffer_directory_never_exceeds_shared_buffers() {
        let objs = objects(50, 10_000, 16);
        let mut src = PgbenchSource::new(&spec(3_000), &objs, 5).unwrap();
        let mut n = 0;
        while src.next_op().is_some() {
            n += 1;
            if n % 101 == 0 {
                let sh = src.shared.lock().unwrap();
                assert!(sh.pool.nr_valid() <= sh.pool.nbuffers());
                assert_eq!(sh.pool.nbuffers(), 50);
            }
        }
        let sh = src.shared.lock().unwrap();
        sh.pool.check();
        assert_eq!(sh.pool.nr_valid(), 50);
        let s = src.stats();
        // A 50-page pool over 10000 pages misses most account and leaf accesses, and
        // writes dirty victims back.
        assert!(s.buffer_misses > 5_000, "{s:?}");
        assert!(s.dirty_writes > 1_000, "{s:?}");
        assert_eq!(s.buffer_hits + s.buffer_misses, 6 * 3_000);
    }

    /// A database that fits in shared buffers is read at most once per page: after the
    /// warm-up every access hits and the stream is touches and WAL I/O only.
    #[test]
    fn repeated_accesses_hit_in_shared_buffers() {
        let objs = objects(512, 400, 16);
        let mut src = PgbenchSource::new(&spec(20_000), &objs, 9).unwrap();
        let mut reads = vec![0u32; 400];
        let mut db_writes = 0;
        let mut late_misses = 0;
        let mut ends = 0;
        while let Some(op) = src.next_op() {
            match op {
                Op::Read { page, .. } => {
                    reads[page as usize] += 1;
                    late_misses += u32::from(ends >= 10_000);
                }
                Op::Write { obj, .. } if obj == DB as u32 => db_writes += 1,
                Op::OpEnd => ends += 1,
                _ => {}
            }
        }
        assert!(reads.iter().all(|&r| r <= 1), "a page was read twice");
        // Half the accounts region is visited in the first 10000 transactions with
        // probability 1 - (1 - 1/340)^10000 ≈ 1: nothing is read afterwards.
        assert_eq!(late_misses, 0);
        // No dirty victims: nothing is ever evicted. The only database writes extend the
        // 8 history pages the first time; after the history wraps its pages are hits.
        assert_eq!(db_writes, 8);
        let s = src.stats();
        assert!(s.buffer_hits > 100 * s.buffer_misses, "{s:?}");
    }

    /// PostgreSQL's buffer pool, WAL insert position and history relation are shared by all
    /// backends (buffer/README; xlog.c XLogCtl->Insert): once one client has read the whole
    /// database (it fits in the pool), a second client of the same server reads and writes
    /// no database block, and its first commit writes the WAL page after the first client's
    /// last. With a pool of its own the second client would read every block it touches again
    /// and start its WAL at page 0.
    #[test]
    fn clients_share_one_buffer_pool_wal_and_history() {
        let objs = objects(512, 400, 16);
        let mut a = PgbenchSource::new(&spec(20_003), &objs, 1).unwrap();
        let mut b = PgbenchSource::sharing(&spec(2_000), &objs, 2, Some(&a)).unwrap();
        let a_reads = std::iter::from_fn(|| a.next_op())
            .filter(|o| matches!(o, Op::Read { .. }))
            .count();
        // Accounts (340 pages), leaves (48), hot (4): all visited by 20003 transactions.
        assert!(a_reads >= 390, "{a_reads}");
        let ops: Vec<Op> = std::iter::from_fn(|| b.next_op()).collect();
        let db_io = ops
            .iter()
            .filter(|o| {
                matches!(o, Op::Read { .. })
                    || matches!(o, Op::Write { obj, .. } if *obj == DB as u32)
            })
            .count();
        assert_eq!(db_io, 0);
        assert_eq!(b.stats().buffer_misses, 0);
        let first_wal = ops.iter().find_map(|o| match *o {
            Op::Write { obj, page, .. } if obj == WAL as u32 => Some(page),
            _ => None,
        });
        // 20003 commits on a 16-page WAL: the next page is 20003 % 16 = 3.
        assert_eq!(first_wal, Some(3));
        // A client of another database (different objects) gets its own server.
        let objs2 = vec![
            shmem("sb", 512),
            file("db", 400),
            file("wal", 16),
            file("db2", 400),
        ];
        let other = PgbenchSpec {
            database: 3,
            ..spec(10)
        };
        let mut c = PgbenchSource::sharing(&other, &objs2, 3, Some(&b)).unwrap();
        assert!(std::iter::from_fn(|| c.next_op()).any(|o| matches!(o, Op::Read { .. })));
    }

    #[test]
    fn deterministic_per_seed() {
        let objs = objects(64, 4_000, 16);
        let run = |seed| {
            let mut src = PgbenchSource::new(&spec(300), &objs, seed).unwrap();
            std::iter::from_fn(move || src.next_op()).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn hot_pages_dominate_and_accounts_are_uniform() {
        let objs = objects(1_000, 100_000, 16);
        let mut src = PgbenchSource::new(&spec(20_000), &objs, 4).unwrap();
        let l = *src.layout();
        let mut acct_reads = 0u32;
        let mut hot_reads = 0u32;
        while let Some(op) = src.next_op() {
            if let Op::Read { page, .. } = op {
                acct_reads += u32::from(l.accounts.contains(page));
                hot_reads += u32::from(l.hot.contains(page));
            }
        }
        // Accounts: 1000 buffers over 85000 pages, ~99% of the 20000 updates miss.
        assert!(acct_reads > 19_000, "{acct_reads}");
        // The 1000 hot pages take 60000 Zipf accesses: the head stays cached; far fewer
        // reads than accesses.
        assert!(hot_reads < 20_000, "{hot_reads}");
    }

    #[test]
    fn forever_runs_on() {
        let objs = objects(16, 100, 4);
        let mut src = PgbenchSource::new(&spec(0), &objs, 1).unwrap();
        assert_eq!(src.len_hint(), None);
        assert_eq!(
            std::iter::from_fn(|| src.next_op()).take(100_000).count(),
            100_000
        );
    }

    #[test]
    fn wrong_objects_are_rejected() {
        let objs = vec![file("notshm", 10), file("db", 100), shmem("wal", 4)];
        assert!(matches!(
            PgbenchSource::new(&spec(1), &objs, 1),
            Err(SourceErrorKind::WrongObjectKind { .. })
        ));
    }
}
