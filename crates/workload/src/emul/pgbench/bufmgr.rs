//! PostgreSQL's shared buffer manager, reduced to what decides the I/O it issues.
//!
//! # The problem
//! PostgreSQL caches table and index blocks in its own shared memory (`shared_buffers`) and
//! reads a block from the kernel (pread(), usually a page-cache hit, otherwise disk) only
//! when it is not there. Which blocks miss, and which buffer a missing block lands in,
//! decide both the file I/O the kernel sees and which pages of the shared-memory segment
//! stay hot. An emulation that touched random buffers would get neither right.
//!
//! # The idea
//! PostgreSQL's own replacement policy (src/backend/storage/buffer/freelist.c,
//! `StrategyGetBuffer()`, and bufmgr.c, `PinBuffer()`/`BufferAlloc()`) is a CLOCK sweep over
//! per-buffer usage counts:
//!
//! ```text
//!   hit:   usage = min(usage + 1, BM_MAX_USAGE_COUNT = 5)
//!   miss:  take a never-used buffer while any is left (the initial free list); otherwise
//!          sweep: at the hand, usage > 0 → usage -= 1 and advance; usage == 0 → victim.
//!          The victim's old block is written out first if dirty; the new block gets
//!          usage = 1.
//! ```
//!
//! A block referenced k times recently survives about k sweeps: heavily used index and
//! branch/teller pages stay, a uniformly random account page leaves after one or two.
//!
//! # In this model
//! [`BufferPool`] holds one byte of state per buffer (usage count and dirty bit), the block
//! each buffer holds (`tag`), and `buf_table`: the block → buffer map, here an
//! open-addressing table (linear probing, multiplicative hashing, load factor <= 1/2,
//! backward-shift deletion, so no tombstones and no rehashing), allocated once. State is
//! about 21-37 bytes per buffer, never per database page.
//!
//! Worked example (3 buffers, blocks a b c d): access a, b, c fill buffers 0, 1, 2 with
//! usage 1; access a again: usage(0) = 2; access d: the sweep decrements 0 (2 → 1), 1 (1 → 0),
//! 2 (1 → 0), 0 (1 → 0), then takes buffer 1 (b): hand stops after 1. Asserted by
//! `tests::clock_sweep_worked_example`.
//!
//! # Where we differ from PostgreSQL
//! - No pins: a buffer used earlier in the same transaction may be chosen as a victim if
//!   the sweep comes round twice (possible only with a handful of buffers).
//! - No ring buffers for bulk reads, no background writer, no checkpoints: a dirty block
//!   is written only when its buffer is reused (what a backend does when the bgwriter is
//!   behind). Checkpoint writes and their fsync of the data files are not emitted.
//! - Blocks are 4 KiB pages, not 8 KiB.

/// `tag` of a buffer that holds no block.
const NO_PAGE: u32 = u32::MAX;
/// PostgreSQL's BM_MAX_USAGE_COUNT (buf_internals.h).
pub(crate) const BM_MAX_USAGE_COUNT: u8 = 5;
/// `state` bit: the buffer was modified since it was read.
const DIRTY: u8 = 0x80;
const USAGE_MASK: u8 = 0x7f;
/// Empty `buf_table` entry.
const EMPTY: u64 = u64::MAX;

/// What one block access did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BufAccess {
    /// The block was in `buf`.
    Hit { buf: u32 },
    /// The block was not in the pool and now occupies `buf`, which previously held
    /// `evicted` (block, dirty) if anything.
    Miss {
        buf: u32,
        evicted: Option<(u32, bool)>,
    },
}

/// The shared buffer pool of one server, used by all its clients (see the module doc).
#[derive(Clone, Debug)]
pub(crate) struct BufferPool {
    /// Block held by each buffer, `NO_PAGE` if none.
    tag: Box<[u32]>,
    /// Per buffer: usage count (low bits) and `DIRTY`.
    state: Box<[u8]>,
    /// Buffers [0, nr_alloc) have been handed out from the initial free list.
    nr_alloc: u32,
    /// The clock hand (freelist.c's nextVictimBuffer).
    hand: u32,
    /// buf_table: entries `block << 32 | buffer`, or `EMPTY`.
    table: Box<[u64]>,
    /// 64 - log2(table.len()): multiplicative hashing keeps the top bits.
    shift: u32,
}

impl BufferPool {
    /// A pool of `nbuffers` (>= 1) empty buffers.
    pub(crate) fn new(nbuffers: u32) -> Self {
        assert!(nbuffers > 0);
        let cap = (2 * nbuffers as usize).next_power_of_two().max(2);
        BufferPool {
            tag: vec![NO_PAGE; nbuffers as usize].into_boxed_slice(),
            state: vec![0; nbuffers as usize].into_boxed_slice(),
            nr_alloc: 0,
            hand: 0,
            table: vec![EMPTY; cap].into_boxed_slice(),
            shift: 64 - cap.trailing_zeros(),
        }
    }

    /// Accesses `block` (a store if `write`): a hit bumps its usage count, a miss loads it
    /// into a free or victim buffer.
    #[inline]
    pub(crate) fn access(&mut self, block: u32, write: bool) -> BufAccess {
        debug_assert_ne!(block, NO_PAGE);
        let dirty = if write { DIRTY } else { 0 };
        if let Some(buf) = self.lookup(block) {
            let st = &mut self.state[buf as usize];
            if *st & USAGE_MASK < BM_MAX_USAGE_COUNT {
                *st += 1;
            }
            *st |= dirty;
            return BufAccess::Hit { buf };
        }
        let buf = self.get_victim();
        let old = self.tag[buf as usize];
        let evicted = if old == NO_PAGE {
            None
        } else {
            self.remove(old);
            Some((old, self.state[buf as usize] & DIRTY != 0))
        };
        self.tag[buf as usize] = block;
        self.state[buf as usize] = 1 | dirty;
        self.insert(block, buf);
        BufAccess::Miss { buf, evicted }
    }

    /// PostgreSQL: freelist.c StrategyGetBuffer(): a never-used buffer, else the
    /// first buffer with usage 0 under the clock hand, decrementing the others on the way.
    /// Each decrement undoes one earlier increment, so the sweep is O(1) amortised.
    #[inline]
    fn get_victim(&mut self) -> u32 {
        let n = self.tag.len() as u32;
        if self.nr_alloc < n {
            self.nr_alloc += 1;
            return self.nr_alloc - 1;
        }
        loop {
            let b = self.hand;
            self.hand = if b + 1 == n { 0 } else { b + 1 };
            let st = &mut self.state[b as usize];
            if *st & USAGE_MASK == 0 {
                return b;
            }
            *st -= 1;
        }
    }

    #[inline]
    fn home(&self, block: u32) -> usize {
        (u64::from(block).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    #[inline]
    fn lookup(&self, block: u32) -> Option<u32> {
        let mask = self.table.len() - 1;
        let mut i = self.home(block);
        loop {
            let e = self.table[i];
            if e == EMPTY {
                return None;
            }
            if (e >> 32) as u32 == block {
                return Some(e as u32);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn insert(&mut self, block: u32, buf: u32) {
        let mask = self.table.len() - 1;
        let mut i = self.home(block);
        while self.table[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.table[i] = (u64::from(block) << 32) | u64::from(buf);
    }

    /// Removes `block` (present) by backward-shift deletion: later entries of the probe run
    /// whose home is not in the cyclic interval (hole, entry] move back into the hole.
    #[inline]
    fn remove(&mut self, block: u32) {
        let mask = self.table.len() - 1;
        let mut hole = self.home(block);
        while (self.table[hole] >> 32) as u32 != block {
            debug_assert_ne!(self.table[hole], EMPTY, "removing an absent block");
            hole = (hole + 1) & mask;
        }
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let e = self.table[j];
            if e == EMPTY {
                break;
            }
            let home = self.home((e >> 32) as u32);
            // Distance from home to j versus from hole to j, both cyclic.
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.table[hole] = e;
                hole = j;
            }
        }
        self.table[hole] = EMPTY;
    }

    /// Buffers that hold a block.
    #[cfg(test)]
    pub(crate) fn nr_valid(&self) -> usize {
        self.tag.iter().filter(|&&t| t != NO_PAGE).count()
    }

    /// Number of buffers.
    #[cfg(test)]
    pub(crate) fn nbuffers(&self) -> usize {
        self.tag.len()
    }

    /// Self-check: `buf_table` maps exactly the held blocks to their buffers, usage counts
    /// are in range.
    #[cfg(test)]
    pub(crate) fn check(&self) {
        let entries = self.table.iter().filter(|&&e| e != EMPTY).count();
        assert_eq!(entries, self.nr_valid());
        for (b, &t) in self.tag.iter().enumerate() {
            if t != NO_PAGE {
                assert_eq!(self.lookup(t), Some(b as u32), "block {t} buffer {b}");
            }
            assert!(self.state[b] & USAGE_MASK <= BM_MAX_USAGE_COUNT);
        }
    }

    #[cfg(test)]
    fn usage(&self, buf: u32) -> u8 {
        self.state[buf as usize] & USAGE_MASK
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::BTreeMap;

    #[test]
    fn clock_sweep_worked_example() {
        let mut p = BufferPool::new(3);
        let (a, b, c, d) = (10, 20, 30, 40);
        for (i, blk) in [a, b, c].into_iter().enumerate() {
            assert_eq!(
                p.access(blk, false),
                BufAccess::Miss {
                    buf: i as u32,
                    evicted: None
                }
            );
        }
        assert_eq!(p.access(a, true), BufAccess::Hit { buf: 0 });
        assert_eq!(p.usage(0), 2);
        assert_eq!(
            p.access(d, false),
            BufAccess::Miss {
                buf: 1,
                evicted: Some((b, false))
            }
        );
        assert_eq!([p.usage(0), p.usage(1), p.usage(2)], [0, 1, 0]);
        assert_eq!(p.hand, 2);
        // Next miss takes buffer 2 (c, usage 0) at once; then a's buffer 0, dirty.
        assert_eq!(
            p.access(50, false),
            BufAccess::Miss {
                buf: 2,
                evicted: Some((c, false))
            }
        );
        assert_eq!(
            p.access(60, false),
            BufAccess::Miss {
                buf: 0,
                evicted: Some((a, true))
            }
        );
        p.check();
    }

    #[test]
    fn usage_count_saturates() {
        let mut p = BufferPool::new(1);
        for _ in 0..10 {
            p.access(7, false);
        }
        assert_eq!(p.usage(0), BM_MAX_USAGE_COUNT);
    }

    /// The table against a BTreeMap under random traffic with heavy collisions and
    /// wrap-around of probe runs.
    #[test]
    fn buf_table_matches_reference() {
        for nbuf in [1u32, 2, 3, 7, 64] {
            let mut p = BufferPool::new(nbuf);
            let mut reference: BTreeMap<u32, u32> = BTreeMap::new();
            let mut rng = Rng::new(u64::from(nbuf));
            for step in 0..20_000 {
                let blk = rng.below(u64::from(nbuf) * 3) as u32;
                match p.access(blk, rng.chance(0.3)) {
                    BufAccess::Hit { buf } => assert_eq!(reference.get(&blk), Some(&buf)),
                    BufAccess::Miss { buf, evicted } => {
                        assert!(!reference.contains_key(&blk));
                        if let Some((old, _)) = evicted {
                            assert_eq!(reference.remove(&old), Some(buf));
                        }
                        reference.insert(blk, buf);
                    }
                }
                assert!(reference.len() <= nbuf as usize);
                if step % 997 == 0 {
                    p.check();
                }
            }
            p.check();
            assert_eq!(p.nr_valid(), reference.len());
        }
    }
}
