//! Replay of region access patterns (DAMON snapshots, perf mem sample windows) as page
//! touches: the engine the [`damon`](crate::damon) and [`perfmem`](crate::perfmem) readers
//! share.
//!
//! # Model
//! A snapshot says, for each region of pages, how many of the `max` sampling intervals of an
//! aggregation interval saw it accessed (`nr`, DAMON's `nr_accesses`). The snapshot's time is
//! cut into `max` slices (as `damo replay` does); in each slice, each page of a region is
//! touched with probability `nr / max` (every page when `nr >= max`), so a page is touched
//! `nr` times per snapshot on average and the pages of one region are not in lockstep. Each
//! slice ends with `think` of the slice's recorded duration, and the snapshot with `end` (one
//! operation per aggregation interval).
//!
//! The draw is a hash of (seed, snapshot number, slice, object, page): no generator state,
//! so the same recording always gives the same touches (a recording converted to refault's
//! binary form replays exactly as the recording itself).
//!
//! An optional prologue touches every page of the snapshot once, as a store, in the order
//! the caller gives (the DAMON reader: oldest `age` first, so the pages DAMON saw accessed
//! most recently start nearest the head of the LRU lists).

use crate::Op;

/// One region of a snapshot, resolved to an object of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PlayRegion {
    pub obj: u32,
    /// First page within the object.
    pub page: u32,
    pub pages: u32,
    /// Sampling intervals (of `max`) in which the region was seen accessed.
    pub nr: u32,
    /// Probability that a touch is a store, in 1/65536 (0: loads only).
    pub store: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Prologue,
    Slices,
    Think,
    End,
    Done,
}

/// SplitMix64's output function.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Plays one snapshot (see the module doc).
pub(crate) struct Player {
    regions: Vec<PlayRegion>,
    /// Region indices in prologue order (empty: no prologue).
    prologue: Vec<u32>,
    max: u32,
    key: u64,
    slice_ns: u64,
    think_left: u64,
    stage: Stage,
    slice: u32,
    /// Position: index into `prologue` (prologue) or `regions` (slices), page in the region.
    ri: usize,
    pi: u32,
}

impl Player {
    /// `key`: the seed mixed with the snapshot's number; `duration_ns`: the snapshot's
    /// recorded time; `max` >= 1.
    pub(crate) fn new(
        regions: Vec<PlayRegion>,
        prologue: Vec<u32>,
        max: u32,
        key: u64,
        duration_ns: u64,
    ) -> Player {
        let max = max.max(1);
        Player {
            stage: if prologue.is_empty() {
                Stage::Slices
            } else {
                Stage::Prologue
            },
            regions,
            prologue,
            max,
            key: mix64(key),
            slice_ns: duration_ns / u64::from(max),
            think_left: 0,
            slice: 0,
            ri: 0,
            pi: 0,
        }
    }

    #[inline]
    fn draw(&self, obj: u32, page: u32, salt: u64) -> u64 {
        mix64(
            self.key
                ^ (u64::from(self.slice) << 1 | salt).wrapping_mul(0x9e37_79b9_7f4a_7c15)
                ^ (u64::from(obj) << 32 | u64::from(page)).wrapping_mul(0xc2b2_ae3d_27d4_eb4f),
        )
    }

    /// The next op of the snapshot, None when it is over.
    pub(crate) fn next_op(&mut self) -> Option<Op> {
        loop {
            match self.stage {
                Stage::Prologue => {
                    let Some(&r) = self.prologue.get(self.ri) else {
                        self.stage = Stage::Slices;
                        self.ri = 0;
                        self.pi = 0;
                        continue;
                    };
                    let r = self.regions[r as usize];
                    if self.pi >= r.pages {
                        self.ri += 1;
                        self.pi = 0;
                        continue;
                    }
                    let page = r.page + self.pi;
                    self.pi += 1;
                    return Some(Op::Touch {
                        obj: r.obj,
                        page,
                        write: true,
                    });
                }
                Stage::Slices => {
                    let Some(&r) = self.regions.get(self.ri) else {
                        self.stage = Stage::Think;
                        self.think_left = self.slice_ns;
                        continue;
                    };
                    if r.nr == 0 || self.pi >= r.pages {
                        self.ri += 1;
                        self.pi = 0;
                        continue;
                    }
                    let page = r.page + self.pi;
                    self.pi += 1;
                    let all = r.nr >= self.max;
                    if all || self.draw(r.obj, page, 0) % u64::from(self.max) < u64::from(r.nr) {
                        let write = r.store > 0
                            && (self.draw(r.obj, page, 1) & 0xffff) < u64::from(r.store);
                        return Some(Op::Touch {
                            obj: r.obj,
                            page,
                            write,
                        });
                    }
                }
                Stage::Think => {
                    if self.think_left == 0 {
                        self.slice += 1;
                        self.ri = 0;
                        self.pi = 0;
                        self.stage = if self.slice >= self.max {
                            Stage::End
                        } else {
                            Stage::Slices
                        };
                        continue;
                    }
                    let ns = self.think_left.min(u64::from(u32::MAX));
                    self.think_left -= ns;
                    return Some(Op::Think { ns: ns as u32 });
                }
                Stage::End => {
                    self.stage = Stage::Done;
                    return Some(Op::OpEnd);
                }
                Stage::Done => return None,
            }
        }
    }
}

/// Groups sorted, merged page ranges `[first, last]` into objects: a gap of more than
/// `gap` pages starts a new one. Returns (first page, pages) per object.
pub(crate) fn group(mut ranges: Vec<(u64, u64)>, gap: u64) -> Vec<(u64, u64)> {
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in ranges {
        match out.last_mut() {
            Some((_, end)) if s <= end.saturating_add(gap) => *end = (*end).max(e),
            _ => out.push((s, e)),
        }
    }
    out.into_iter().map(|(s, e)| (s, e - s + 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(p: &mut Player) -> Vec<Op> {
        std::iter::from_fn(|| p.next_op()).collect()
    }

    #[test]
    fn slices_probabilities_and_prologue() {
        let regions = vec![
            PlayRegion {
                obj: 0,
                page: 0,
                pages: 2,
                nr: 4,
                store: 0,
            },
            PlayRegion {
                obj: 0,
                page: 10,
                pages: 1000,
                nr: 1,
                store: 0,
            },
            PlayRegion {
                obj: 1,
                page: 0,
                pages: 3,
                nr: 0,
                store: 0,
            },
        ];
        let mut p = Player::new(regions.clone(), vec![2, 0], 4, 7, 4000);
        let ops = play(&mut p);
        // Prologue: region 2 then region 0, stores.
        let w = |obj, page| Op::Touch {
            obj,
            page,
            write: true,
        };
        assert_eq!(ops[..5], [w(1, 0), w(1, 1), w(1, 2), w(0, 0), w(0, 1)]);
        // 4 slices of 1000 ns, then end.
        let thinks: Vec<&Op> = ops
            .iter()
            .filter(|o| matches!(o, Op::Think { .. }))
            .collect();
        assert_eq!(thinks, [&Op::Think { ns: 1000 }; 4]);
        assert_eq!(ops.last(), Some(&Op::OpEnd));
        // nr >= max: both pages in every slice; nr = 1 of 4: about a quarter of 1000 pages
        // per slice, 1000 in expectation over the snapshot.
        let count = |pred: &dyn Fn(u32, u32) -> bool| {
            ops[5..]
                .iter()
                .filter(|o| matches!(o, Op::Touch { obj, page, .. } if pred(*obj, *page)))
                .count()
        };
        assert_eq!(count(&|o, p| o == 0 && p < 2), 8);
        let cold = count(&|o, p| o == 0 && p >= 10);
        assert!((900..1100).contains(&cold), "{cold}");
        assert_eq!(count(&|o, _| o == 1), 0);
        // Deterministic in the key, different with another.
        assert_eq!(
            play(&mut Player::new(regions.clone(), vec![2, 0], 4, 7, 4000)),
            ops
        );
        assert_ne!(play(&mut Player::new(regions, vec![2, 0], 4, 8, 4000)), ops);
    }

    #[test]
    fn grouping_by_gap() {
        assert_eq!(
            group(vec![(100, 110), (0, 5), (7, 9), (5000, 5000)], 10),
            [(0, 10), (100, 11), (5000, 1)]
        );
    }
}
