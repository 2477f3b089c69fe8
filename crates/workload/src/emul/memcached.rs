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
//! # Simplified
//! - A set overwrites the item in place; memcached allocates a fresh chunk and frees the
//!   old one (slab rebalancing, LRU crawler and eviction of items are not modelled).
//! - No hash-table or connection-buffer memory, no network stack; `think_ns` stands for
//!   the request's CPU and network time.
//! - Requests per instance are independent (no shared request queue).
//!
//! # Tests
//! `emul::memcached::tests::*`.

use refault_scenario::{MemcachedSpec, ObjectSpec, Pattern, MEMCACHED_SLAB_PAGE, PAGE_SIZE};

use crate::error::{check, SourceErrorKind};
use crate::event::{EventSource, ObjId, Op};
use crate::gen::pattern::Sampler;
use crate::rng::Rng;
use crate::seq::{think_events, OpSeq};
use crate::source::object_scatter_key;

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
        let slots = match per_slab {
            None => pages / u64::from(ppr),
            Some(per_slab) => {
                let bytes = pages * PAGE_SIZE;
                let tail = (bytes % MEMCACHED_SLAB_PAGE).min(per_slab * item_size);
                bytes / MEMCACHED_SLAB_PAGE * per_slab + tail / item_size
            }
        };
        let per_slab = per_slab.unwrap_or(0);
        check::positive(slots, &|| "item_size".into())?;
        let items = spec.items as ObjId;
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
        };
        if item_size != 0 && spec.requests != 0 {
            // The touches per request depend on the key: count them on a copy of the stream.
            let mut probe = src.clone();
            let touches: u64 = (0..spec.requests)
                .map(|_| u64::from(probe.request().1))
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

    /// The next request: its first page, its page count and whether it writes.
    #[inline]
    fn request(&mut self) -> (u32, u32, bool) {
        let slot = self.keys.slot(self.slots, &mut self.rng);
        let write = self.rng.chance(self.set_fraction);
        if self.item_size == 0 {
            return ((slot * u64::from(self.ppr)) as u32, self.ppr, write);
        }
        let (first, nr) = chunk_pages(slot, self.item_size, self.per_slab);
        (first, nr, write)
    }
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
            let (page, nr, write) = self.request();
            if write {
                self.seq.touch_run(self.items, page, nr, true);
            } else {
                self.seq.touch_run_write_first(self.items, page, nr);
            }
            self.seq.finish(self.think_ns);
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
}
