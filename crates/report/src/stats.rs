//! mmtests' summary statistics of a series of per-interval results (fs_mark's files/sec):
//! min, quartiles, max, harmonic mean, standard deviation and coefficient of variation, as
//! mmtests' compare-kernels reports them for a higher-is-better metric.
//!
//! Quartiles follow mmtests' convention for throughput: the values are ranked best
//! (highest) first, so "1st-qrtle" is the value a quarter of the way down from the best
//! (`sorted_desc[ceil(n / 4) - 1]`), "2nd-qrtle" the median, "3rd-qrtle" three quarters
//! down. The standard deviation is the sample one (n - 1), the coefficient of variation is
//! `stddev / arithmetic mean * 100`.

use serde::Serialize;

/// mmtests' summary of a higher-is-better series.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MmtestsStats {
    pub n: usize,
    pub min: f64,
    pub q1: f64,
    pub q2: f64,
    pub q3: f64,
    pub max: f64,
    pub hmean: f64,
    pub amean: f64,
    pub stddev: f64,
    pub coeffvar: f64,
}

/// The summary of `xs`, or None when it is empty. A zero value makes the harmonic mean 0.
pub fn mmtests_stats(xs: &[f64]) -> Option<MmtestsStats> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let mut d: Vec<f64> = xs.to_vec();
    d.sort_by(|a, b| b.total_cmp(a));
    let q = |k: usize| d[(n * k).div_ceil(4).max(1) - 1];
    let amean = xs.iter().sum::<f64>() / n as f64;
    let hmean = if xs.iter().any(|&x| x <= 0.0) {
        0.0
    } else {
        n as f64 / xs.iter().map(|x| 1.0 / x).sum::<f64>()
    };
    let stddev = if n > 1 {
        (xs.iter().map(|x| (x - amean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    Some(MmtestsStats {
        n,
        min: d[n - 1],
        q1: q(1),
        q2: q(2),
        q3: q(3),
        max: d[0],
        hmean,
        amean,
        stddev,
        coeffvar: if amean != 0.0 {
            stddev / amean * 100.0
        } else {
            0.0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eight samples 1..=8: ranked 8 7 6 5 4 3 2 1; q1 = 2nd best (7), q2 = 4th (5),
    /// q3 = 6th (3); hmean = 8 / (1 + 1/2 + ... + 1/8) = 8 / 2.717857 = 2.94350;
    /// mean 4.5, sample stddev sqrt(42 / 7) = 2.44949, coeffvar 54.433%.
    #[test]
    fn hand_computed_summary() {
        let s = mmtests_stats(&[3.0, 1.0, 8.0, 2.0, 7.0, 4.0, 6.0, 5.0]).unwrap();
        assert_eq!((s.min, s.q1, s.q2, s.q3, s.max), (1.0, 7.0, 5.0, 3.0, 8.0));
        assert!((s.hmean - 2.943_500).abs() < 1e-5, "{}", s.hmean);
        assert!((s.stddev - 2.449_490).abs() < 1e-5);
        assert!((s.coeffvar - 54.433_105).abs() < 1e-4);
        assert_eq!(mmtests_stats(&[]), None);
        let one = mmtests_stats(&[5.0]).unwrap();
        assert_eq!(
            (one.q1, one.q3, one.stddev, one.hmean),
            (5.0, 5.0, 0.0, 5.0)
        );
    }
}
