//! How numbers and changes are printed: integers without decimals, other values with up to
//! two, percentages with exactly two and a sign (`+30.17%`, `-54.35%`, `0.00%`, `n/a`).

/// A value for a table cell: `1234`, `80.65`, `99.2`; `-` when the value is missing (NaN).
pub fn format_value(v: f64) -> String {
    if v.is_nan() {
        return "-".to_string();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Change of `value` against `baseline`, in percent of the baseline's magnitude, so the sign
/// is the direction of the change. `Some(0.0)` when both are zero; `None` (printed `n/a`)
/// when the baseline is zero and the value is not, or when either is missing (NaN).
pub fn percent_change(baseline: f64, value: f64) -> Option<f64> {
    if !baseline.is_finite() || !value.is_finite() {
        return None;
    }
    if baseline == 0.0 {
        return if value == 0.0 { Some(0.0) } else { None };
    }
    Some((value - baseline) / baseline.abs() * 100.0)
}

/// `+30.17%`, `-54.35%`, `0.00%` (also for changes that round to zero), `n/a` for `None`.
pub fn format_percent(p: Option<f64>) -> String {
    match p {
        None => "n/a".to_string(),
        Some(p) if p.is_nan() => "n/a".to_string(),
        Some(p) => {
            let rounded = (p * 100.0).round() / 100.0;
            if rounded == 0.0 {
                "0.00%".to_string()
            } else {
                format!("{rounded:+.2}%")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_drop_decimals_they_do_not_need() {
        assert_eq!(format_value(6579.0), "6579");
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(-0.0), "0");
        assert_eq!(format_value(100.0), "100");
        assert_eq!(format_value(80.65), "80.65");
        assert_eq!(format_value(99.2), "99.2");
        assert_eq!(format_value(1.005_1), "1.01");
        assert_eq!(format_value(0.001), "0");
        assert_eq!(format_value(-0.001), "0");
        assert_eq!(format_value(-12.5), "-12.5");
        assert_eq!(format_value(f64::NAN), "-");
        assert_eq!(format_value(f64::INFINITY), "inf");
    }

    #[test]
    fn percent_edge_cases() {
        assert_eq!(format_percent(percent_change(80.65, 104.99)), "+30.18%");
        assert_eq!(
            format_percent(percent_change(222_799.0, 101_544.0)),
            "-54.42%"
        );
        assert_eq!(format_percent(percent_change(5.0, 5.0)), "0.00%");
        // Both zero: no change. Zero baseline, non-zero value: no meaningful percentage.
        assert_eq!(format_percent(percent_change(0.0, 0.0)), "0.00%");
        assert_eq!(percent_change(0.0, 3.0), None);
        assert_eq!(format_percent(percent_change(0.0, 3.0)), "n/a");
        assert_eq!(format_percent(percent_change(0.0, -3.0)), "n/a");
        // Value dropping to zero is -100%.
        assert_eq!(format_percent(percent_change(7.0, 0.0)), "-100.00%");
        // Tiny changes round to an unsigned zero rather than "+0.00%" / "-0.00%".
        assert_eq!(
            format_percent(percent_change(1_000_000.0, 1_000_000.01)),
            "0.00%"
        );
        assert_eq!(
            format_percent(percent_change(1_000_000.0, 999_999.99)),
            "0.00%"
        );
        // A negative baseline: the sign follows the direction of the change.
        assert_eq!(format_percent(percent_change(-10.0, -5.0)), "+50.00%");
        // Missing values.
        assert_eq!(percent_change(f64::NAN, 1.0), None);
        assert_eq!(percent_change(1.0, f64::NAN), None);
        assert_eq!(format_percent(Some(f64::NAN)), "n/a");
        // Exactly two decimals, large and small.
        assert_eq!(format_percent(Some(2968.0)), "+2968.00%");
        assert_eq!(format_percent(Some(-0.005_1)), "-0.01%");
        assert_eq!(format_percent(Some(0.004)), "0.00%");
    }
}
