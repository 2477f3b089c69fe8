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

/// Welch's t-test of two samples (unequal variances): the two-sided p-value of the
/// difference of their means, from the Student t distribution with the Welch-Satterthwaite
/// degrees of freedom. None when a sample has fewer than two values. Two samples without
/// variance give 1 when their means are equal and 0 when not (a deterministic difference).
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (ma, va) = mean_var(a);
    let (mb, vb) = mean_var(b);
    let (sa, sb) = (va / a.len() as f64, vb / b.len() as f64);
    let se2 = sa + sb;
    if se2 == 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (a.len() - 1) as f64 + sb * sb / (b.len() - 1) as f64);
    Some(student_t_two_sided(t, df))
}

/// Mean and sample variance (n - 1).
fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    (
        m,
        x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0),
    )
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    inc_beta(df / 2.0, 0.5, x).clamp(0.0, 1.0)
}

/// ln Γ(x) for x > 0 (Lanczos approximation, g = 7, 9 terms; relative error < 1e-13).
fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + 7.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b), by its continued fraction
/// (modified Lentz), using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where it converges
/// faster.
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let nonzero = |v: f64| if v.abs() < TINY { TINY } else { v };
    let mut c = 1.0;
    let mut d = 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0));
    let mut h = d;
    for m in 1..300 {
        let m = f64::from(m);
        // The even and the odd coefficient of step m.
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        let mut delta = 1.0;
        for coef in [even, odd] {
            d = 1.0 / nonzero(1.0 + coef * d);
            c = nonzero(1.0 + coef / c);
            delta = d * c;
            h *= delta;
        }
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
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

    /// Reference values of Student's t (two-sided): |t| = 1 with 1 degree of freedom is
    /// the Cauchy quartile (p = 0.5 exactly); t = 2.228139 with 10 degrees of freedom is
    /// the 97.5th percentile (p = 0.05); t = 1.959964 with df = 1e6 is the normal's
    /// (p = 0.05); t = 0 gives 1.
    #[test]
    fn student_t_matches_tables() {
        assert!((student_t_two_sided(1.0, 1.0) - 0.5).abs() < 1e-9);
        assert!((student_t_two_sided(2.228_139, 10.0) - 0.05).abs() < 1e-6);
        assert!((student_t_two_sided(-2.228_139, 10.0) - 0.05).abs() < 1e-6);
        assert!((student_t_two_sided(1.959_964, 1e6) - 0.05).abs() < 1e-5);
        assert!((student_t_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
    }

    /// a = 1..5 (mean 3, var 2.5), b = 3..7 (mean 5, var 2.5): t = -2 / sqrt(1) = -2,
    /// df = 1 / (2 * 0.25 / 4) = 8; two-sided p for t = 2, df = 8 is 0.080516.
    #[test]
    fn welch_hand_computed() {
        let p = welch_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert!((p - 0.080_516).abs() < 1e-5, "{p}");
        assert_eq!(welch_p(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_p(&[2.0, 2.0], &[2.0, 2.0]), Some(1.0));
        assert_eq!(welch_p(&[2.0, 2.0], &[3.0, 3.0]), Some(0.0));
    }
}
