//! A memcached-like server under a memtier/memcachetest-like load.
//!
//! # What it is for
//! Two seeds use a key-value server as the anonymous-memory workload: mmtests `parallelio`
//! in seed 000 (memcachetest while large files are copied; transactions must not suffer
//! from the new balancing) and memtier against memcached in seed 001 (random gets after a
//! sequential fill; MGLRU doubles the throughput). What the kernel sees of memcached is its
//! item memory: a large anonymous region, written once by the fill and then read and
//! rewritten by requests, with popularity skewed or uniform over the keys.
//!
//! # The stream
//! ```text
//!   fill (optional):  for each batch of pages_per_request pages, in order:
//!                       Touch{items, page, write} x batch; OpEnd       (no think: pipelined)
//!   requests times:   key ~ uniform, or Zipf(zipf_s) scattered over the item slots
//!                       with hashtable: Touch{hashtable, bucket page} (read), then
//!                         Touch{items, header page} (read) per item ahead in the chain
//!                       get: Touch{items, page, write} (the item header), then
//!                            Touch{items, page+i} for the rest of the item (read)
//!                       set: Touch{items, page, write} x pages_per_request
//!                       Think{think_ns}; OpEnd
//! ```
//!
//! Keys map to aligned slots of `pages_per_request` pages (an item and its neighbours in a
//! slab page), or, with `item_size`, to memcached's slab chunks: chunks of `item_size` bytes
//! packed into 1 MiB slab pages (slabs.c `do_slabs_newslab()` cuts a slab page into
//! `slab_page_size / size` chunks and leaves the remainder unused), and a request touches
//! every 4 KiB page its chunk spans: a get copies the whole item (header, key and value)
//! into the reply, a set writes it. A get also stores to the item's header, at the start of
//! its chunk: memcached's `do_item_get()` takes a reference (`refcount_incr(&it->refcount)`,
//! an atomic add) that `item_remove()` drops after the reply is sent, and `do_item_bump()`
//! sets `ITEM_FETCHED`/`ITEM_ACTIVE` in `it->it_flags` (items.c), so the first page of every
//! item a get reads has its PTE dirtied: swapping it out again needs a write and, with the
//! other threads of the process running, a TLB shootdown before it (`try_to_unmap_flush_dirty()`). A 2320-byte chunk spans two pages in 2319 of 4096 byte
//! offsets, 1.57 pages per request on average. Zipf ranks go through the object's [`Scatter`](crate::zipf::Scatter)
//! permutation, as memcached's hashing spreads popular keys over its slabs, and every
//! instance uses the same permutation (they model clients of one key space).
//!
//! With a `hashtable` object, a request first finds its item as memcached's `assoc_find()`
//! does (assoc.c): it reads the key's bucket in the bucket array (`primary_hashtable`, one
//! 8-byte pointer per bucket) and follows the chain (`it->h_next`), comparing each item's key
//! (`it->nkey`, then `ITEM_key(it)`), so it reads the header of every item ahead of its own
//! in the chain: a read of the first page of that item's chunk. The table has 2^hashpower
//! buckets, hashpower being what memcached grows to for the item slots
//! ([`memcached_hashpower`]: 2^18 for the 1/256-scaled seed's 253 k items, 2^26 for its 65
//! M, 0.97 items per bucket either way), and a key's bucket is a hash of its slot (memcached
//! hashes the key with MurmurHash3, whose low bits are as good as uniform). `assoc_insert()`
//! puts a new item at the head of its chain, so the chain holds the slots in reverse fill
//! order (slot order); a key finds on average 0.48 items ahead of its own (half the other
//! items of its bucket).
//!
//! # Simplified
//! - The hash table is built once at its final size; memcached's expansions rehash the
//!   items by moving each to the head of its new chain (`assoc_maintenance_thread()`), which
//!   reverses the order of the items an expansion moved: which items are ahead differs, not
//!   how many on average. The fill does not write the bucket array (give it a phase of its
//!   own in the scenario).
//! - A set overwrites the item in place; memcached allocates a fresh chunk and frees the
//!   old one (slab rebalancing, LRU crawler and eviction of items are not modelled).
//! - No hash-table or connection-buffer memory, no network stack; `think_ns` stands for
//!   the request's CPU and network time.
//! - Requests per instance are independent (no shared request queue).
//!
//! # Tests
//! `emul::memcached::tests::*`.

use std::sync::Arc;

use refault_scenario::{
    memcached_hashpower, memcached_slots, MemcachedSpec, ObjectSpec, Pattern, MEMCACHED_SLAB_PAGE,
    PAGE_SIZE,
};

use crate::error::{check, SourceErrorKind};
use crate::event::{EventSource, ObjId, Op};
use crate::gen::pattern::Sampler;
use crate::rng::{mix64, Rng};
use crate::seq::{think_events, OpSeq};
use crate::source::object_scatter_key;

/// No item (an empty chain, the end of a chain).
const NONE: u32 = u32::MAX;

/// memcached's hash table over the item slots (assoc.c; the module doc): the chain of every
/// bucket, newest insert first.
#[derive(Debug)]
pub struct HashChains {
    /// log2 of the bucket count.
    power: u32,
    /// Keys the slot-to-bucket hash.
    key: u64,
    /// The first slot of each bucket's chain (`primary_hashtable[bucket]`), or [`NONE`].
    head: Vec<u32>,
    /// The slot after each slot in its chain (`it->h_next`), or [`NONE`].
    next: Vec<u32>,
}

impl HashChains {
    /// The table of `slots` items inserted in slot order, each at the head of its chain
    /// (`assoc_insert()`), with 2^[`memcached_hashpower`] buckets.
    pub fn new(slots: u64, key: u64) -> Self {
        let power = memcached_hashpower(slots);
        let mut chains = HashChains {
            power,
            key,
            head: vec![NONE; 1 << power],
            next: vec![NONE; slots as usize],
        };
        for slot in 0..slots as u32 {
            let b = chains.bucket(slot);
            chains.next[slot as usize] = chains.head[b];
            chains.head[b] = slot;
        }
        chains
    }

    /// The bucket of `slot`: the top `power` bits of a 64-bit hash of it.
    #[inline]
    fn bucket(&self, slot: u32) -> usize {
        (mix64(self.key ^ u64::from(slot)) >> (64 - self.power)) as usize
    }

    /// The slots `assoc_find()` passes before it reaches `slot`, in chain order.
    fn ahead(&self, slot: u32) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.head[self.bucket(slot)];
        std::iter::from_fn(move || {
            if cur == slot || cur == NONE {
                return None;
            }
            let here = cur;
            cur = self.next[cur as usize];
            Some(here)
        })
    }
}

/// A lookup under way: the bucket read, then the items ahead in the chain.
#[derive(Clone, Copy, Debug)]
///
/// Host speed: the chain's links are read after they were prefetched (the bucket's head when
/// the request is drawn, one request ahead; a slot's `next` when its header is emitted, one
/// call of [`EventSource::next_op`] ahead), so the random load into
/// the 1 MiB arrays (for the scaled seed) overlaps the simulation of an operation instead of
/// stalling the stream. The touches emitted are the same.
struct Lookup {
    /// The bucket's page in the bucket array is still to read.
    bucket_page: Option<u32>,
    /// The bucket whose chain head is still to be loaded into `cur`, or [`NONE`].
    head_of: u32,
    /// `cur` was emitted: its `next` is still to be loaded into `cur`.
    advance: bool,
    /// The next chain slot to read, or the request's own slot when the walk is done.
    cur: u32,
    /// The request's slot.
    slot: u32,
    /// The request's item run: first page, pages, a set.
    first: u32,
    nr: u32,
    write: bool,
}

/// One memcached worker serving one client (see the module doc).
#[derive(Clone, Debug)]
pub struct MemcachedSource {
    items: ObjId,
    /// Pages of the item memory.
    pages: u64,
    /// Pages per request, clamped to `pages`.
    ppr: u32,
    /// Key slots: `pages / ppr`, or the chunks of `item_size` bytes.
    slots: u64,
    /// The slab chunk size in bytes; 0 = slots of `ppr` pages.
    item_size: u64,
    /// Chunks per 1 MiB slab page (with `item_size`).
    per_slab: u64,
    keys: Sampler,
    set_fraction: f64,
    think_ns: u64,
    /// Requests to serve after the fill; 0 = forever.
    requests: u64,
    /// Next page the fill writes (`pages` when the fill is done or disabled).
    fill_pos: u64,
    /// Requests served.
    served: u64,
    rng: Rng,
    seq: OpSeq<1>,
    total: Option<u64>,
    /// The bucket array and the chains, with `hashtable` (shared by the instances).
    hash: Option<(ObjId, Arc<HashChains>)>,
    /// The lookup being emitted.
    lookup: Option<Lookup>,
    /// The next request, drawn one request ahead (the same draws in the same order) so that
    /// its bucket's chain head, prefetched when it is drawn, has a whole request's
    /// simulation to arrive in.
    drawn: Option<Lookup>,
}

impl MemcachedSource {
    /// A worker on `spec.items`, drawing from `Rng::new(seed)`; `scenario_seed` keys the
    /// key-popularity permutation.
    pub fn new(
        spec: &MemcachedSpec,
        objects: &[ObjectSpec],
        seed: u64,
        scenario_seed: u64,
    ) -> Result<Self, SourceErrorKind> {
        Self::sharing(spec, objects, seed, scenario_seed, None)
    }

    /// [`MemcachedSource::new`], reusing `other`'s hash table when it has one (the instances
    /// of one task serve one memcached's table).
    pub fn sharing(
        spec: &MemcachedSpec,
        objects: &[ObjectSpec],
        seed: u64,
        scenario_seed: u64,
        other: Option<&MemcachedSource>,
    ) -> Result<Self, SourceErrorKind> {
        let obj = check::object(objects, spec.items, &|| "items".into(), &[], "")?;
        check::positive(u64::from(spec.pages_per_request), &|| {
            "pages_per_request".into()
        })?;
        check::probability(spec.set_fraction, &|| "set_fraction".into())?;
        check::exponent(spec.zipf_s, &|| "zipf_s".into())?;
        let pages = obj.size_pages;
        let ppr = u64::from(spec.pages_per_request).min(pages) as u32;
        let item_size = u64::from(spec.item_size);
        // Chunks per slab page; `None` without `item_size`.
        let per_slab = MEMCACHED_SLAB_PAGE.checked_div(item_size);
        let slots = memcached_slots(pages, ppr, spec.item_size);
        let per_slab = per_slab.unwrap_or(0);
        check::positive(slots, &|| "item_size".into())?;
        let items = spec.items as ObjId;
        let hash = match spec.hashtable {
            None => None,
            Some(t) => {
                check::object(objects, t, &|| "hashtable".into(), &[], "")?;
                let chains = match other.and_then(|o| o.hash.as_ref()) {
                    Some((_, c)) if c.next.len() as u64 == slots => Arc::clone(c),
                    // Keyed apart from the popularity permutation ("assoc" in ASCII).
                    _ => Arc::new(HashChains::new(
                        slots,
                        mix64(object_scatter_key(scenario_seed, items) ^ 0x0061_7373_6f63),
                    )),
                };
                Some((t as ObjId, chains))
            }
        };
        let pattern = if spec.zipf_s == 0.0 {
            Pattern::Random
        } else {
            Pattern::Zipf {
                s: spec.zipf_s,
                scatter: true,
            }
        };
        let keys = Sampler::new(&pattern, slots, object_scatter_key(scenario_seed, items));
        let total = (spec.requests != 0).then(|| {
            let fill = if spec.fill {
                pages + pages.div_ceil(u64::from(ppr))
            } else {
                0
            };
            let per_request = u64::from(ppr) + think_events(spec.think_ns) + 1;
            fill.saturating_add(spec.requests.saturating_mul(per_request))
        });
        let mut src = MemcachedSource {
            items,
            pages,
            ppr,
            slots,
            item_size,
            per_slab,
            keys,
            set_fraction: spec.set_fraction,
            think_ns: spec.think_ns,
            requests: spec.requests,
            fill_pos: if spec.fill { 0 } else { pages },
            served: 0,
            rng: Rng::new(seed),
            seq: OpSeq::new(),
            total,
            hash,
            lookup: None,
            drawn: None,
        };
        if (item_size != 0 || src.hash.is_some()) && spec.requests != 0 {
            // The touches per request depend on the key: count them on a copy of the stream.
            let mut probe = src.clone();
            let touches: u64 = (0..spec.requests)
                .map(|_| {
                    let r = probe.request();
                    u64::from(r.nr) + probe.lookup_touches(r.slot)
                })
                .sum();
            let fill = if spec.fill {
                pages + pages.div_ceil(u64::from(ppr))
            } else {
                0
            };
            let per_request = think_events(spec.think_ns) + 1;
            src.total = Some(fill + touches + spec.requests * per_request);
        }
        Ok(src)
    }

    /// The next request: its slot, its first page, its page count and whether it writes.
    #[inline]
    fn request(&mut self) -> Lookup {
        let slot = self.keys.slot(self.slots, &mut self.rng);
        let write = self.rng.chance(self.set_fraction);
        let (first, nr) = if self.item_size == 0 {
            ((slot * u64::from(self.ppr)) as u32, self.ppr)
        } else {
            chunk_pages(slot, self.item_size, self.per_slab)
        };
        let slot = slot as u32;
        let (bucket_page, head_of) = match &self.hash {
            None => (None, NONE),
            Some((_, c)) => {
                let b = c.bucket(slot);
                prefetch(&c.head[b]);
                (Some((b as u64 * 8 / PAGE_SIZE) as u32), b as u32)
            }
        };
        Lookup {
            bucket_page,
            head_of,
            advance: false,
            cur: slot,
            slot,
            first,
            nr,
            write,
        }
    }

    /// The touches the lookup of `slot` makes before its item: the bucket and one per item
    /// ahead in the chain (0 without a hash table).
    fn lookup_touches(&self, slot: u32) -> u64 {
        self.hash
            .as_ref()
            .map_or(0, |(_, c)| 1 + c.ahead(slot).count() as u64)
    }

    /// The first page of `slot`'s item (its header).
    #[inline]
    fn header_page(&self, slot: u32) -> u32 {
        if self.item_size == 0 {
            slot * self.ppr
        } else {
            chunk_pages(u64::from(slot), self.item_size, self.per_slab).0
        }
    }

    /// The next touch of the lookup under way, or None once it has reached its item (whose
    /// run it then queues).
    #[inline]
    fn lookup_step(&mut self) -> Option<Op> {
        let l = self.lookup.as_mut()?;
        if let Some(page) = l.bucket_page.take() {
            let obj = self.hash.as_ref().map_or(0, |h| h.0);
            return Some(Op::Touch {
                obj,
                page,
                write: false,
            });
        }
        if let Some((_, c)) = &self.hash {
            if l.head_of != NONE {
                l.cur = c.head[l.head_of as usize];
                l.head_of = NONE;
            } else if l.advance {
                l.cur = c.next[l.cur as usize];
                l.advance = false;
            }
            debug_assert_ne!(l.cur, NONE, "slot {} missing from its chain", l.slot);
            if l.cur != l.slot {
                let here = l.cur;
                prefetch(&c.next[here as usize]);
                l.advance = true;
                return Some(Op::Touch {
                    obj: self.items,
                    page: self.header_page(here),
                    write: false,
                });
            }
        }
        let l = self.lookup.take()?;
        if l.write {
            self.seq.touch_run(self.items, l.first, l.nr, true);
        } else {
            self.seq.touch_run_write_first(self.items, l.first, l.nr);
        }
        self.seq.finish(self.think_ns);
        None
    }
}

/// Ask the host CPU to bring the cache line of `p` into its caches: a hint that reads
/// nothing into the program and changes no result (as `refault_mm::prefetch`).
#[inline(always)]
fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and has no effect on the program's state.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            (p as *const T).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The pages chunk `slot` spans when chunks of `item_size` bytes are packed `per_slab` to a
/// 1 MiB slab page: its first page and its page count.
#[inline]
fn chunk_pages(slot: u64, item_size: u64, per_slab: u64) -> (u32, u32) {
    let start = slot / per_slab * MEMCACHED_SLAB_PAGE + slot % per_slab * item_size;
    let first = start / PAGE_SIZE;
    let last = (start + item_size - 1) / PAGE_SIZE;
    (first as u32, (last - first + 1) as u32)
}

impl EventSource for MemcachedSource {
    #[inline]
    fn next_op(&mut self) -> Option<Op> {
        if let Some(op) = self.lookup_step() {
            return Some(op);
        }
        if let Some(op) = self.seq.pop() {
            return Some(op);
        }
        if self.fill_pos < self.pages {
            let nr = (self.pages - self.fill_pos).min(u64::from(self.ppr));
            self.seq
                .touch_run(self.items, self.fill_pos as u32, nr as u32, true);
            self.seq.finish(0);
            self.fill_pos += nr;
        } else if self.requests == 0 || self.served < self.requests {
            self.served += 1;
            let l = match self.drawn.take() {
                Some(l) => l,
                None => self.request(),
            };
            self.lookup = Some(l);
            if self.hash.is_some() && (self.requests == 0 || self.served < self.requests) {
                self.drawn = Some(self.request());
            }
            if let Some(op) = self.lookup_step() {
                return Some(op);
            }
        } else {
            return None;
        }
        self.seq.pop()
    }

    fn len_hint(&self) -> Option<u64> {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::anon;

    fn spec() -> MemcachedSpec {
        MemcachedSpec {
            items: 0,
            fill: true,
            requests: 1000,
            set_fraction: 0.1,
            zipf_s: 0.0,
            pages_per_request: 2,
            think_ns: 100,
            item_size: 0,
            hashtable: None,
        }
    }

    fn run(spec: &MemcachedSpec, pages: u64, seed: u64) -> (Vec<Op>, Option<u64>) {
        let mut src = MemcachedSource::new(spec, &[anon("items", pages)], seed, 1).unwrap();
        let hint = src.len_hint();
        (std::iter::from_fn(|| src.next_op()).collect(), hint)
    }

    #[test]
    fn fill_writes_every_page_once_in_batches() {
        let (ops, hint) = run(&spec(), 7, 1);
        assert_eq!(hint, Some(ops.len() as u64));
        // 7 pages in batches of 2: 0 1 | 2 3 | 4 5 | 6
        let fill: Vec<Op> = ops[..11].to_vec();
        let t = |page| Op::Touch {
            obj: 0,
            page,
            write: true,
        };
        assert_eq!(
            fill,
            [
                t(0),
                t(1),
                Op::OpEnd,
                t(2),
                t(3),
                Op::OpEnd,
                t(4),
                t(5),
                Op::OpEnd,
                t(6),
                Op::OpEnd
            ]
        );
        // Then 1000 requests of 2 touches, a think and an end, inside slots 0..3.
        let reqs = &ops[11..];
        assert_eq!(reqs.len(), 1000 * 4);
        let mut sets = 0;
        for r in reqs.chunks(4) {
            let (
                Op::Touch {
                    page: a, write: wa, ..
                },
                Op::Touch {
                    page: b, write: wb, ..
                },
            ) = (r[0], r[1])
            else {
                panic!("{r:?}")
            };
            // A get stores to the item header (its first page) and reads the rest; a set
            // writes both.
            assert!(a % 2 == 0 && a < 6 && b == a + 1 && wa);
            sets += u32::from(wb);
            assert_eq!(&r[2..], [Op::Think { ns: 100 }, Op::OpEnd]);
        }
        // set_fraction 0.1 of 1000 requests: 100 ± 3 standard deviations (9.5).
        assert!((70..=130).contains(&sets), "{sets}");
    }

    #[test]
    fn slab_chunks_span_the_pages_their_bytes_cover() {
        // 2320-byte chunks, 451 to a 1 MiB slab page (1048576 / 2320), the last 2256 bytes
        // of each slab page unused.
        assert_eq!(chunk_pages(0, 2320, 451), (0, 1)); // bytes 0..2319
        assert_eq!(chunk_pages(1, 2320, 451), (0, 2)); // bytes 2320..4639
        assert_eq!(chunk_pages(450, 2320, 451), (254, 2)); // 1044000..1046319
        assert_eq!(chunk_pages(451, 2320, 451), (256, 1)); // the next slab page
        assert_eq!(chunk_pages(452, 2320, 451), (256, 2));
    }

    #[test]
    fn item_size_gets_touch_one_or_two_pages_and_the_hint_is_exact() {
        let mut s = spec();
        s.fill = false;
        s.set_fraction = 0.0;
        s.requests = 40_000;
        s.item_size = 2320;
        s.think_ns = 0;
        // Four slab pages.
        let (ops, hint) = run(&s, 1024, 5);
        assert_eq!(hint, Some(ops.len() as u64));
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for op in &ops {
            match *op {
                Op::Touch { page, write, .. } => {
                    // The header store opens each get; the rest of the item is read.
                    let opens = !matches!(runs.last(), Some((first, nr)) if *first + *nr == page);
                    assert_eq!(write, opens, "page {page}");
                    match runs.last_mut() {
                        Some((first, nr)) if *first + *nr == page => *nr += 1,
                        _ => runs.push((page, 1)),
                    }
                }
                Op::OpEnd => runs.push((u32::MAX, 0)),
                _ => panic!("{op:?}"),
            }
        }
        let gets: Vec<(u32, u32)> = runs.into_iter().filter(|r| r.1 > 0).collect();
        assert_eq!(gets.len(), 40_000);
        // No chunk crosses a slab page.
        assert!(gets
            .iter()
            .all(|&(p, n)| (1..=2).contains(&n) && p / 256 == (p + n - 1) / 256));
        // 2320 = 16 x 145 and 4096 = 16 x 256 with 145 and 256 coprime: chunk offsets in a
        // page run through the multiples of 16, and a chunk crosses a page boundary when its
        // offset exceeds 4096 - 2320 = 1776, for 144 of 256 offsets: 1.5625 pages per get
        // (1.5632 over a slab page's 451 chunks).
        let mean = gets.iter().map(|g| f64::from(g.1)).sum::<f64>() / 40_000.0;
        assert!((mean - 1.563).abs() < 0.01, "{mean}");
    }

    #[test]
    fn set_fraction_and_zipf_skew() {
        let mut s = spec();
        s.fill = false;
        s.requests = 50_000;
        s.pages_per_request = 2;
        s.zipf_s = 0.99;
        s.set_fraction = 0.25;
        // 1000 keys of two pages: the first touch of a request is always a store (a get's
        // header refcount, or a set), the second is a store only for a set.
        let (ops, _) = run(&s, 2000, 3);
        let mut counts = vec![0u32; 1000];
        let (mut sets, mut all, mut pos) = (0u32, 0u32, 0u32);
        for op in &ops {
            match *op {
                Op::Touch { page, write, .. } if pos == 0 => {
                    assert!(write);
                    counts[page as usize / 2] += 1;
                    pos = 1;
                }
                Op::Touch { write, .. } => {
                    all += 1;
                    sets += u32::from(write);
                }
                Op::OpEnd => pos = 0,
                _ => {}
            }
        }
        assert_eq!(all, 50_000);
        assert!((f64::from(sets) / f64::from(all) - 0.25).abs() < 0.01);
        counts.sort_unstable_by(|a, b| b.cmp(a));
        // Zipf(0.99) over 1000 keys: the top key takes ~13% of requests.
        let top = f64::from(counts[0]) / 50_000.0;
        assert!((top - 0.1336).abs() < 0.01, "{top}");
    }

    #[test]
    fn uniform_keys_cover_the_items() {
        let mut s = spec();
        s.fill = false;
        s.requests = 20_000;
        s.pages_per_request = 1;
        let (ops, _) = run(&s, 100, 3);
        let mut seen = [false; 100];
        for op in ops {
            if let Op::Touch { page, .. } = op {
                seen[page as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn deterministic_and_forever() {
        let a = run(&spec(), 64, 5).0;
        assert_eq!(a, run(&spec(), 64, 5).0);
        assert_ne!(a, run(&spec(), 64, 6).0);
        let mut s = spec();
        s.requests = 0;
        let mut src = MemcachedSource::new(&s, &[anon("items", 64)], 1, 1).unwrap();
        assert_eq!(src.len_hint(), None);
        assert_eq!(
            std::iter::from_fn(|| src.next_op()).take(10_000).count(),
            10_000
        );
    }

    #[test]
    fn hash_power_grows_as_memcacheds_table() {
        // 2^16 buckets hold up to 1.5 x 65,536 = 98,304 items before assoc_start_expand().
        assert_eq!(memcached_hashpower(98_304), 16);
        assert_eq!(memcached_hashpower(98_305), 17);
        // s1-memcached: 562 slab pages x 451 chunks of 2320 B; the seed's 65 M items.
        assert_eq!(memcached_slots(562 * 256, 1, 2320), 253_462);
        assert_eq!(memcached_hashpower(253_462), 18);
        assert_eq!(memcached_hashpower(65_000_000), 26);
    }

    #[test]
    fn chains_hold_every_slot_once_newest_first() {
        let n = 253_462u64;
        let c = HashChains::new(n, 7);
        assert_eq!(c.head.len(), 1 << 18);
        let mut seen = vec![false; n as usize];
        let mut ahead_sum = 0u64;
        for &h in &c.head {
            let mut chain = Vec::new();
            let mut cur = h;
            while cur != NONE {
                assert!(!seen[cur as usize]);
                seen[cur as usize] = true;
                chain.push(cur);
                cur = c.next[cur as usize];
            }
            // assoc_insert() puts each new item at the head: later slots come first.
            assert!(chain.windows(2).all(|w| w[0] > w[1]), "{chain:?}");
            for (i, &slot) in chain.iter().enumerate() {
                assert_eq!(c.ahead(slot).collect::<Vec<_>>(), chain[..i]);
                ahead_sum += i as u64;
            }
        }
        assert!(seen.iter().all(|&s| s));
        // n items in m buckets: the pairs sharing a bucket, (n-1)/(2m) per item on average,
        // (253,461 / 524,288) = 0.4834.
        let mean = ahead_sum as f64 / n as f64;
        assert!((mean - 0.4834).abs() < 0.01, "{mean}");
    }

    #[test]
    fn hashtable_gets_read_bucket_and_chain_before_the_item() {
        let mut s = spec();
        s.fill = false;
        s.set_fraction = 0.0;
        s.requests = 5_000;
        s.item_size = 2320;
        s.think_ns = 0;
        s.hashtable = Some(1);
        // 64 slab pages: 28,864 slots, 2^16 buckets = 128 pages of the table.
        let objs = [anon("items", 64 * 256), anon("hash", 128)];
        let mut src = MemcachedSource::new(&s, &objs, 5, 1).unwrap();
        let hint = src.len_hint();
        let ops: Vec<Op> = std::iter::from_fn(|| src.next_op()).collect();
        assert_eq!(hint, Some(ops.len() as u64));
        let chains = HashChains::new(memcached_slots(64 * 256, 1, 2320), 0);
        assert_eq!(chains.power, 16);
        let (mut gets, mut chain_reads) = (0u64, 0u64);
        for req in ops.split(|op| *op == Op::OpEnd).filter(|r| !r.is_empty()) {
            gets += 1;
            // The bucket, read; then header reads of other items; then the item: a store
            // to its header and a read of the rest.
            assert!(matches!(
                req[0],
                Op::Touch {
                    obj: 1,
                    write: false,
                    page
                } if page < 128
            ));
            let item = req
                .iter()
                .position(|op| matches!(op, Op::Touch { write: true, .. }));
            let item = item.unwrap();
            assert!(req[1..item].iter().all(|op| matches!(
                op,
                Op::Touch {
                    obj: 0,
                    write: false,
                    ..
                }
            )));
            assert!((1..=2).contains(&(req.len() - item)));
            chain_reads += (item - 1) as u64;
        }
        assert_eq!(gets, 5_000);
        // 28,864 items in 65,536 buckets: 0.22 items ahead per get, ± 5 standard errors.
        let per_get = chain_reads as f64 / 5_000.0;
        assert!((per_get - 0.22).abs() < 0.05, "{per_get}");
    }

    #[test]
    fn instances_share_one_table() {
        let mut s = spec();
        s.item_size = 2320;
        s.pages_per_request = 1;
        s.hashtable = Some(1);
        let objs = [anon("items", 1024), anon("hash", 128)];
        let a = MemcachedSource::new(&s, &objs, 1, 1).unwrap();
        let b = MemcachedSource::sharing(&s, &objs, 2, 1, Some(&a)).unwrap();
        let (Some((_, ca)), Some((_, cb))) = (&a.hash, &b.hash) else {
            panic!()
        };
        assert!(Arc::ptr_eq(ca, cb));
    }
}
