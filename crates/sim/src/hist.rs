//! Latency histogram: log-linear buckets (16 per power of two, ~4% resolution) over
//! nanoseconds, fixed size, no allocation per sample.

const SUB: u32 = 4; // 2^4 = 16 sub-buckets per octave
const NB: usize = 64 << SUB;

#[derive(Clone)]
pub struct Histogram {
    counts: Box<[u64; NB]>,
    pub n: u64,
    pub sum: u128,
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: Box::new([0; NB]),
            n: 0,
            sum: 0,
            max: 0,
        }
    }
}

fn bucket(v: u64) -> usize {
    if v < (1 << SUB) {
        return v as usize;
    }
    let e = 63 - v.leading_zeros(); // >= SUB
    let m = (v >> (e - SUB)) & ((1 << SUB) - 1);
    (((e - SUB + 1) << SUB) as u64 + m) as usize
}

/// Upper bound of a bucket (inclusive).
fn bucket_hi(b: usize) -> u64 {
    if b < (1 << SUB) {
        return b as u64;
    }
    let e = (b >> SUB) as u32 + SUB - 1;
    let m = (b & ((1 << SUB) - 1)) as u64;
    let lo = (1u64 << e) | (m << (e - SUB));
    lo + (1u64 << (e - SUB)) - 1
}

impl Histogram {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    /// The value at quantile `q` (0..=1): upper bound of the bucket holding it, capped at max.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= rank {
                return bucket_hi(b).min(self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for v in [0u64, 1, 15, 16, 17, 100, 1000, 123_456, 10_000_000_000] {
            let b = bucket(v);
            assert!(b >= last);
            last = b;
            assert!(bucket_hi(b) >= v, "{v}");
            assert!(bucket_hi(b) as f64 <= v as f64 * 1.07 + 1.0, "{v}");
        }
    }
    #[test]
    fn quantiles() {
        let mut h = Histogram::default();
        for v in 1..=100u64 {
            h.record(v * 1000);
        }
        assert_eq!(h.mean(), 50_500.0);
        let p50 = h.quantile(0.5);
        assert!((50_000..=53_000).contains(&p50), "{p50}");
        assert_eq!(h.quantile(1.0), 100_000);
    }
}
