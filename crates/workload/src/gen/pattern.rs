//! Where in its range a phase's next operation lands: sequential, uniform, Zipf, hot/cold.
//!
//! A phase's range `[start, end)` of `len` pages is cut into `slots = len / ppo` aligned
//! slots of `ppo` pages (the pages of one operation; `ppo` is `pages_per_op` clamped to
//! `len`). The random patterns pick a slot, so a multi-page operation never crosses the end
//! of the range, and random I/O is aligned to the operation size as fio's `bs` is. Pages
//! after the last whole slot (`len % ppo` of them) are reached by sequential walks only.
//!
//! Sequential walks are the exception: they keep a cursor, take `ppo` pages per operation
//! and shorten the last operation of a pass to end exactly at `end` (as the last read() of
//! a file returns what is left), then wrap to `start`. A pass therefore takes
//! `ceil(len / ppo)` operations, and more operations than that loop over the range again.

use refault_scenario::Pattern;

use crate::rng::Rng;
use crate::zipf::{Scatter, Zipf};

/// How a non-sequential pattern picks a slot. Sequential walks need no sampler (they use
/// the phase's cursor) and are `Sequential` here.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sampler {
    Sequential,
    /// Every slot equally likely.
    Uniform,
    /// Slot = scatter(rank) (or rank), rank ~ Zipf(s) over the slots.
    Zipf {
        zipf: Zipf,
        scatter: Option<Scatter>,
    },
    /// The first `hot` slots receive `p_hot` of the operations, uniformly; the `cold`
    /// others the rest.
    HotCold {
        hot: u64,
        cold: u64,
        p_hot: f64,
    },
}

impl Sampler {
    /// The sampler for `pattern` over `slots` slots (>= 1); `scatter_key` keys the Zipf
    /// permutation.
    pub(crate) fn new(pattern: &Pattern, slots: u64, scatter_key: u64) -> Self {
        debug_assert!(slots > 0);
        match *pattern {
            Pattern::Sequential => Sampler::Sequential,
            Pattern::Random => Sampler::Uniform,
            Pattern::Zipf { s, scatter } => Sampler::Zipf {
                zipf: Zipf::new(slots, s),
                scatter: scatter.then(|| Scatter::new(slots, scatter_key)),
            },
            Pattern::HotCold {
                hot_fraction,
                hot_probability,
            } => {
                // At least one hot slot when the fraction is not 0: a tiny fraction of a
                // small range still means "a hot spot".
                let hot = if hot_fraction > 0.0 {
                    ((hot_fraction * slots as f64).round() as u64).clamp(1, slots)
                } else {
                    0
                };
                if hot == 0 || hot == slots {
                    Sampler::Uniform
                } else {
                    Sampler::HotCold {
                        hot,
                        cold: slots - hot,
                        p_hot: hot_probability,
                    }
                }
            }
        }
    }

    /// A slot in `[0, slots)` (random patterns only).
    #[inline]
    pub(crate) fn slot(&self, slots: u64, rng: &mut Rng) -> u64 {
        match self {
            Sampler::Sequential => unreachable!("sequential walks use the cursor"),
            Sampler::Uniform => rng.below(slots),
            Sampler::Zipf { zipf, scatter } => {
                let rank = zipf.sample(rng);
                match scatter {
                    Some(sc) => sc.apply(rank),
                    None => rank,
                }
            }
            &Sampler::HotCold { hot, cold, p_hot } => {
                if rng.chance(p_hot) {
                    rng.below(hot)
                } else {
                    hot + rng.below(cold)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_cold_sizes() {
        let p = Pattern::HotCold {
            hot_fraction: 0.1,
            hot_probability: 0.9,
        };
        assert_eq!(
            Sampler::new(&p, 100, 0),
            Sampler::HotCold {
                hot: 10,
                cold: 90,
                p_hot: 0.9
            }
        );
        // 0.001 of 100 slots rounds to 0: still one hot slot.
        let tiny = Pattern::HotCold {
            hot_fraction: 0.001,
            hot_probability: 0.5,
        };
        assert!(matches!(
            Sampler::new(&tiny, 100, 0),
            Sampler::HotCold { hot: 1, .. }
        ));
        // All hot or none hot: plain uniform.
        let all = Pattern::HotCold {
            hot_fraction: 1.0,
            hot_probability: 0.5,
        };
        assert_eq!(Sampler::new(&all, 100, 0), Sampler::Uniform);
    }

    #[test]
    fn hot_cold_proportions() {
        let p = Pattern::HotCold {
            hot_fraction: 0.2,
            hot_probability: 0.8,
        };
        let s = Sampler::new(&p, 1000, 0);
        let mut rng = Rng::new(1);
        let n = 200_000;
        let hot = (0..n).filter(|_| s.slot(1000, &mut rng) < 200).count();
        // sd = sqrt(n * 0.16) = 179 = 0.09%: 1% is plenty.
        assert!((hot as f64 / f64::from(n) - 0.8).abs() < 0.01, "{hot}");
    }
}
