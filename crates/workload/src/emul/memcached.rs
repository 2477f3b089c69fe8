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
//!                       get: Touch{items, page} x pages_per_request    (read)
//!                       set: Touch{items, page, write} x pages_per_request
//!                       Think{think_ns}; OpEnd
//! ```
//!
//! Keys map to aligned slots of `pages_per_request` pages (an item and its neighbours in a
//! slab page). Zipf ranks go through the object's [`Scatter`](crate::zipf::Scatter)
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

use refault_scenario::{MemcachedSpec, ObjectSpec, Pattern};

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
    /// Key slots: `pages / ppr`.
    slots: u64,
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
        let slots = pages / u64::from(ppr);
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
        Ok(MemcachedSource {
            items,
            pages,
            ppr,
            slots,
            keys,
            set_fraction: spec.set_fraction,
            think_ns: spec.think_ns,
            requests: spec.requests,
            fill_pos: if spec.fill { 0 } else { pages },
            served: 0,
            rng: Rng::new(seed),
            seq: OpSeq::new(),
            total,
        })
    }
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
            let slot = self.keys.slot(self.slots, &mut self.rng);
            let write = self.rng.chance(self.set_fraction);
            let page = (slot * u64::from(self.ppr)) as u32;
            self.seq.touch_run(self.items, page, self.ppr, write);
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
            assert!(a % 2 == 0 && a < 6 && b == a + 1 && wa == wb);
            assert_eq!(&r[2..], [Op::Think { ns: 100 }, Op::OpEnd]);
        }
    }

    #[test]
    fn set_fraction_and_zipf_skew() {
        let mut s = spec();
        s.fill = false;
        s.requests = 50_000;
        s.pages_per_request = 1;
        s.zipf_s = 0.99;
        s.set_fraction = 0.25;
        let (ops, _) = run(&s, 1000, 3);
        let mut counts = vec![0u32; 1000];
        let (mut sets, mut all) = (0u32, 0u32);
        for op in &ops {
            if let Op::Touch { page, write, .. } = *op {
                counts[page as usize] += 1;
                all += 1;
                sets += u32::from(write);
            }
        }
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
