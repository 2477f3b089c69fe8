//! Sizes, durations and bandwidths as users write them: `"4G"`, `"1.5GiB"`, `"100us"`,
//! `"500M/s"`.
//!
//! - **Sizes** are bytes: a TOML integer, or a string of a decimal number with an optional
//!   1024-based unit `K`, `M`, `G`, `T` (also written `KiB`, `MiB`, `GiB`, `TiB`, lower case
//!   accepted). `"KB"`/`"MB"` are refused as ambiguous. Fractions are exact (`"1.5G"` is
//!   1610612736 bytes); a fractional byte count is rounded down.
//! - **Durations** are strings with a unit `ns`, `us` (or `µs`), `ms`, `s`, `m`, `h`, and a
//!   decimal number (`"1.5ms"`). Only `0` may be written without a unit.
//! - **Bandwidths** are bytes per second: a size, optionally followed by `/s` (`"500M/s"`).
//!
//! Parsing is integer arithmetic only (no floats), so the same text always gives the same
//! number.

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;
use std::fmt;

const SIZE_UNITS: &[(&str, u64)] = &[
    ("", 1),
    ("B", 1),
    ("K", 1 << 10),
    ("KiB", 1 << 10),
    ("M", 1 << 20),
    ("MiB", 1 << 20),
    ("G", 1 << 30),
    ("GiB", 1 << 30),
    ("T", 1 << 40),
    ("TiB", 1 << 40),
];

const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Splits `"1.5G"` into the number and the unit, after trimming blanks.
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim_start())
}

/// `number * mult`, exactly, for a decimal `number` such as `"1.25"`; rounded down.
fn scale_decimal(number: &str, mult: u64) -> Option<u64> {
    let number: String = number.chars().filter(|&c| c != '_').collect();
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number.as_str(), ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.chars().chain(frac.chars()).all(|c| c.is_ascii_digit()) || frac.len() > 18 {
        return None;
    }
    let int: u128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac_num: u128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let frac_den: u128 = 10u128.pow(frac.len() as u32);
    let total = int
        .checked_mul(mult as u128)?
        .checked_add(frac_num * mult as u128 / frac_den)?;
    u64::try_from(total).ok()
}

/// Parses a size in bytes (see the module documentation).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (number, unit) = split_number(s);
    if number.is_empty() {
        return Err(format!(
            "invalid size `{s}`: expected a number of bytes with an optional unit, e.g. \"4G\""
        ));
    }
    let mult = match SIZE_UNITS.iter().find(|(u, _)| *u == unit) {
        Some(&(_, m)) => m,
        None => match unit {
            "k" | "kiB" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            "t" => 1 << 40,
            "KB" | "kB" | "MB" | "GB" | "TB" => {
                return Err(format!(
                    "invalid size `{s}`: `{unit}` is ambiguous; write `{}` or `{}iB` (1024-based)",
                    &unit[..1].to_uppercase(),
                    &unit[..1].to_uppercase()
                ))
            }
            _ => {
                return Err(format!(
                    "invalid size `{s}`: unknown unit `{unit}` (use bytes or K, M, G, T; \
                     KiB, MiB, GiB, TiB)"
                ))
            }
        },
    };
    scale_decimal(number, mult)
        .ok_or_else(|| format!("invalid size `{s}`: not a number or too large"))
}

/// Parses a duration in nanoseconds (see the module documentation).
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let (number, unit) = split_number(s);
    if number.is_empty() {
        return Err(format!(
            "invalid duration `{s}`: expected a number with a unit, e.g. \"100us\""
        ));
    }
    let mult = match DURATION_UNITS.iter().find(|(u, _)| *u == unit) {
        Some(&(_, m)) => m,
        None if unit.is_empty() => {
            if scale_decimal(number, 1) == Some(0) {
                return Ok(0);
            }
            return Err(format!(
                "invalid duration `{s}`: a unit is needed (ns, us, ms, s, m, h), e.g. \"{s}us\""
            ));
        }
        None => {
            return Err(format!(
                "invalid duration `{s}`: unknown unit `{unit}` (use ns, us, ms, s, m, h)"
            ))
        }
    };
    scale_decimal(number, mult)
        .ok_or_else(|| format!("invalid duration `{s}`: not a number or too large"))
}

/// Parses a bandwidth in bytes per second: a size with an optional `/s`.
pub fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    parse_size(t).map_err(|e| e.replacen("invalid size", "invalid bandwidth", 1))
}

/// Human-readable bytes for messages and docs: exact 1024-based unit when one fits
/// (`1 GiB`, `96 MiB`), bytes otherwise.
pub fn format_bytes(bytes: u64) -> String {
    if bytes == 0 {
        return "0".to_string();
    }
    for (unit, mult) in [
        ("TiB", 1u64 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ] {
        if bytes >= mult && bytes.is_multiple_of(mult) {
            return format!("{} {unit}", bytes / mult);
        }
    }
    format!("{bytes} bytes")
}

/// Human-readable duration for messages and docs: the largest exact unit.
pub fn format_duration(ns: u64) -> String {
    for &(unit, mult) in DURATION_UNITS.iter().rev() {
        if unit != "µs" && ns >= mult && ns.is_multiple_of(mult) {
            return format!("{}{unit}", ns / mult);
        }
    }
    format!("{ns}ns")
}

/// A size in bytes as written in the file (`"4G"` or `4294967296`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Size(pub u64);

/// A duration in nanoseconds as written in the file (`"100us"` or `0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Duration(pub u64);

/// `run.sample_interval` as written in the file: `"auto"` (0 here) or a duration above 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SampleInterval(pub u64);

/// `"auto"` is 0 (the resolver chooses); any other value is a duration, which must be above
/// 0.
pub fn parse_sample_interval(s: &str) -> Result<u64, String> {
    if s.trim() == "auto" {
        return Ok(0);
    }
    match parse_duration(s)? {
        0 => Err(format!(
            "invalid sample interval `{s}`: must be more than 0 (or \"auto\")"
        )),
        ns => Ok(ns),
    }
}

fn int_sample_interval(v: u64) -> Result<u64, String> {
    Err(format!(
        "a sample interval is \"auto\" or a duration with a unit, e.g. \"{v}ms\""
    ))
}

/// A bandwidth in bytes per second as written in the file (`"500M"`, `"500M/s"`, or an
/// integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bandwidth(pub u64);

macro_rules! unit_visitor {
    ($ty:ident, $parse:ident, $expecting:expr, $int:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expecting)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($ty).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v < 0 {
                            return Err(E::custom(format!("{v} is negative")));
                        }
                        $int(v as u64).map($ty).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        $int(v).map($ty).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!(
                            "write fractional values as a string with a unit, e.g. \"{v}G\" \
                             or \"{v}ms\""
                        )))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

fn int_bytes(v: u64) -> Result<u64, String> {
    Ok(v)
}

fn int_duration(v: u64) -> Result<u64, String> {
    if v == 0 {
        Ok(0)
    } else {
        Err(format!(
            "a duration needs a unit: write \"{v}ns\", \"{v}us\", \"{v}ms\" or \"{v}s\""
        ))
    }
}

unit_visitor!(
    Size,
    parse_size,
    "a size such as \"4G\" or a number of bytes",
    int_bytes
);
unit_visitor!(
    Duration,
    parse_duration,
    "a duration such as \"100us\"",
    int_duration
);
unit_visitor!(
    SampleInterval,
    parse_sample_interval,
    "\"auto\" or a duration such as \"100ms\"",
    int_sample_interval
);
unit_visitor!(
    Bandwidth,
    parse_bandwidth,
    "a bandwidth such as \"500M\" (bytes per second)",
    int_bytes
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("96M"), Ok(96 << 20));
        assert_eq!(parse_size("1.5G"), Ok(1_610_612_736));
        assert_eq!(parse_size("1.5GiB"), Ok(1_610_612_736));
        assert_eq!(parse_size("0.5 T"), Ok(1 << 39));
        assert_eq!(parse_size("1_024"), Ok(1024));
        assert_eq!(parse_size(".5K"), Ok(512));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("10B"), Ok(10));
        // a third of a KiB is 341.33 bytes: rounded down
        assert_eq!(parse_size("0.333333K"), Ok(341));
        assert_eq!(
            parse_size("4X").unwrap_err(),
            "invalid size `4X`: unknown unit `X` (use bytes or K, M, G, T; KiB, MiB, GiB, TiB)"
        );
        assert_eq!(
            parse_size("4MB").unwrap_err(),
            "invalid size `4MB`: `MB` is ambiguous; write `M` or `MiB` (1024-based)"
        );
        assert!(parse_size("G").is_err());
        assert!(parse_size("1.2.3G").is_err());
        assert!(parse_size("99999999T").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("100us"), Ok(100_000));
        assert_eq!(parse_duration("100µs"), Ok(100_000));
        assert_eq!(parse_duration("5ns"), Ok(5));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("60s"), Ok(60_000_000_000));
        assert_eq!(parse_duration("2m"), Ok(120_000_000_000));
        assert_eq!(parse_duration("1h"), Ok(3_600_000_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        assert_eq!(
            parse_duration("100").unwrap_err(),
            "invalid duration `100`: a unit is needed (ns, us, ms, s, m, h), e.g. \"100us\""
        );
        assert_eq!(
            parse_duration("3d").unwrap_err(),
            "invalid duration `3d`: unknown unit `d` (use ns, us, ms, s, m, h)"
        );
    }

    #[test]
    fn sample_intervals() {
        assert_eq!(parse_sample_interval("auto"), Ok(0));
        assert_eq!(parse_sample_interval("250ms"), Ok(250_000_000));
        assert!(parse_sample_interval("0")
            .unwrap_err()
            .contains("more than 0"));
        assert!(parse_sample_interval("often").is_err());
    }

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("500M"), Ok(500 << 20));
        assert_eq!(parse_bandwidth("500M/s"), Ok(500 << 20));
        assert_eq!(parse_bandwidth("1000000"), Ok(1_000_000));
        assert!(parse_bandwidth("fast").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(1 << 30), "1 GiB");
        assert_eq!(format_bytes(96 << 20), "96 MiB");
        assert_eq!(format_bytes(1000), "1000 bytes");
        assert_eq!(format_duration(1_500_000), "1500us");
        assert_eq!(format_duration(60_000_000_000), "1m");
        assert_eq!(format_duration(0), "0ns");
    }
}
