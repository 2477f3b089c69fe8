//! `machine.from_zoneinfo`: the machine as a real kernel left it, read from its
//! `/proc/zoneinfo`.
//!
//! Each populated zone of node 0 (DMA, DMA32, Normal) becomes a zone of the model with the
//! kernel's present pages (the frames), managed pages (present - managed are reserved),
//! free pages (managed - free are held by the kernel from the start: on a freshly booted
//! machine its slab, stacks, page tables and rootfs; on a running one also whatever page
//! cache and anonymous memory it had, which the model does not reclaim), watermarks
//! (`min`, `low`, `high`) and `protection` (`lowmem_reserve[]`). The watermark boost and the
//! per-CPU lists are not taken over.
//!
//! Interface for other tools (the VM twin): [`parse`] returns the zones of a zoneinfo text
//! and [`machine_zones`] turns them into the scenario's [`ZoneSpec`]s; both report bad input
//! as a [`ScenarioError`] naming the file and line.

use crate::error::{ErrorKind, ScenarioError};
use crate::model::{ZoneKind, ZoneSpec};

/// One zone of a /proc/zoneinfo.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ZoneInfo {
    /// Zone name as printed ("DMA", "DMA32", "Normal", "Movable", "Device", "HighMem").
    pub name: String,
    /// 1-based line of the zone's `Node N, zone NAME` header.
    pub line: usize,
    pub free: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub spanned: u64,
    pub present: u64,
    pub managed: u64,
    /// `protection: (...)`: `lowmem_reserve[]` by zone index.
    pub protection: Vec<u64>,
}

/// Parse the zones of node 0 from a /proc/zoneinfo text. `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Vec<ZoneInfo>, ScenarioError> {
    let err = |off: usize, msg: String| {
        ScenarioError::at(ErrorKind::InvalidValue, origin, text, off, msg)
    };
    let mut zones: Vec<(ZoneInfo, [bool; 8], usize)> = Vec::new();
    let mut off = 0usize;
    for (i, raw) in text.split_inclusive('\n').enumerate() {
        let line_off = off;
        off += raw.len();
        let line = raw.trim_end_matches(['\n', '\r']);
        let t = line.trim_start();
        let col = line_off + (line.len() - t.len());
        if let Some(rest) = t.strip_prefix("Node ") {
            let Some((node, zone)) = rest.split_once(", zone") else {
                return Err(err(col, format!("`{t}`: expected `Node N, zone NAME`")));
            };
            if node.trim() != "0" {
                return Err(err(
                    col,
                    format!("node {}: the model has one node (node 0 only)", node.trim()),
                ));
            }
            zones.push((
                ZoneInfo {
                    name: zone.trim().to_string(),
                    line: i + 1,
                    free: 0,
                    min: 0,
                    low: 0,
                    high: 0,
                    spanned: 0,
                    present: 0,
                    managed: 0,
                    protection: vec![],
                },
                [false; 8],
                line_off,
            ));
            continue;
        }
        let Some((z, seen, _)) = zones.last_mut() else {
            if t.is_empty() {
                continue;
            }
            return Err(err(
                col,
                "expected a `Node 0, zone NAME` line first: is this a /proc/zoneinfo?".into(),
            ));
        };
        let mut words = t.split_whitespace();
        let (key, value) = match (words.next(), words.next(), words.next()) {
            (Some("pages"), Some("free"), Some(v)) => ("free", v),
            (Some("protection:"), _, _) => {
                let inner = t["protection:".len()..].trim();
                let inner = inner
                    .strip_prefix('(')
                    .and_then(|s| s.strip_suffix(')'))
                    .ok_or_else(|| {
                        err(col, format!("`{t}`: expected `protection: (N, N, ...)`"))
                    })?;
                let mut v = Vec::new();
                for n in inner.split(',') {
                    v.push(n.trim().parse::<u64>().map_err(|_| {
                        err(col, format!("`{t}`: `{}` is not a page count", n.trim()))
                    })?);
                }
                z.protection = v;
                seen[7] = true;
                continue;
            }
            (Some(k), Some(v), None) => (k, v),
            _ => continue,
        };
        let slot = match key {
            "free" => 0,
            "min" => 1,
            "low" => 2,
            "high" => 3,
            "spanned" => 4,
            "present" => 5,
            "managed" => 6,
            _ => continue,
        };
        let v: u64 = value
            .parse()
            .map_err(|_| err(col, format!("{key}: `{value}` is not a page count")))?;
        *[
            &mut z.free,
            &mut z.min,
            &mut z.low,
            &mut z.high,
            &mut z.spanned,
            &mut z.present,
            &mut z.managed,
        ][slot] = v;
        seen[slot] = true;
    }
    if zones.is_empty() {
        return Err(ScenarioError::new(
            ErrorKind::InvalidValue,
            origin,
            "no `Node 0, zone NAME` line: not a /proc/zoneinfo",
        ));
    }
    const NEEDED: [&str; 8] = [
        "pages free",
        "min",
        "low",
        "high",
        "spanned",
        "present",
        "managed",
        "protection",
    ];
    let mut out = Vec::new();
    for (z, seen, at) in zones {
        // An empty zone (Movable, Device) prints only its watermarks and sizes.
        let populated = z.present > 0;
        if let Some(k) = (0..8).find(|&k| !seen[k] && (populated || (1..=6).contains(&k))) {
            return Err(err(at, format!("zone {}: no `{}` line", z.name, NEEDED[k])));
        }
        if z.managed > z.present || z.present > z.spanned {
            return Err(err(
                at,
                format!(
                    "zone {}: managed {} <= present {} <= spanned {} does not hold",
                    z.name, z.managed, z.present, z.spanned
                ),
            ));
        }
        if z.free > z.managed {
            return Err(err(
                at,
                format!(
                    "zone {}: {} free pages but only {} managed",
                    z.name, z.free, z.managed
                ),
            ));
        }
        if populated && !(z.min <= z.low && z.low <= z.high) {
            return Err(err(
                at,
                format!(
                    "zone {}: watermarks min {} <= low {} <= high {} do not hold",
                    z.name, z.min, z.low, z.high
                ),
            ));
        }
        if populated && z.protection.len() < 3 {
            return Err(err(
                at,
                format!(
                    "zone {}: protection has {} entries; DMA, DMA32 and Normal need 3",
                    z.name,
                    z.protection.len()
                ),
            ));
        }
        out.push(z);
    }
    Ok(out)
}

/// The scenario's zones from parsed zoneinfo zones: DMA, DMA32 and Normal as they are (the
/// kernel's sizes, watermarks and protection, `reserved = present - managed`,
/// `kernel = managed - free`); empty zones are left out, and a populated zone the model
/// does not have (Movable, HighMem, Device) is an error.
pub fn machine_zones(
    zones: &[ZoneInfo],
    text: &str,
    origin: &str,
) -> Result<Vec<ZoneSpec>, ScenarioError> {
    let mut out: Vec<ZoneSpec> = Vec::new();
    for z in zones {
        if z.present == 0 {
            continue;
        }
        let kind = match z.name.as_str() {
            "DMA" => ZoneKind::Dma,
            "DMA32" => ZoneKind::Dma32,
            "Normal" => ZoneKind::Normal,
            other => {
                return Err(line_err(
                    text,
                    origin,
                    z.line,
                    format!(
                        "zone {other} has {} present pages: the model has DMA, DMA32 and \
                         Normal zones only",
                        z.present
                    ),
                ))
            }
        };
        if out.iter().any(|o| o.kind >= kind) {
            return Err(line_err(
                text,
                origin,
                z.line,
                format!("zone {} repeated or out of order", z.name),
            ));
        }
        if z.free == 0 {
            return Err(line_err(
                text,
                origin,
                z.line,
                format!("zone {}: no free pages to start from", z.name),
            ));
        }
        out.push(ZoneSpec {
            kind,
            pages: z.present,
            reserved: z.present - z.managed,
            kernel: z.managed - z.free,
            wmark: Some([z.min, z.low, z.high]),
            protection: Some([z.protection[0], z.protection[1], z.protection[2]]),
        });
    }
    if out.is_empty() {
        return Err(ScenarioError::new(
            ErrorKind::InvalidValue,
            origin,
            "no populated DMA, DMA32 or Normal zone",
        ));
    }
    Ok(out)
}

fn line_err(text: &str, origin: &str, line: usize, msg: String) -> ScenarioError {
    let off: usize = text
        .split_inclusive('\n')
        .take(line - 1)
        .map(str::len)
        .sum();
    ScenarioError::at(ErrorKind::InvalidValue, origin, text, off, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small synthetic zoneinfo: a 256 MiB machine's DMA and DMA32 zones.
    const SMALL: &str = "Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 926
  pages free     3808
        boost    0
        min      31
        low      38
        high     45
        spanned  4095
        present  3998
        managed  3840
        protection: (0, 233, 233, 233)
      nr_free_pages 3808
  pagesets
    cpu: 0
              count: 0
              high:  0
Node 0, zone    DMA32
  pages free     50000
        boost    0
        min      700
        low      875
        high     1050
        spanned  61440
        present  61440
        managed  59800
        protection: (0, 0, 0, 0)
Node 0, zone   Normal
  pages free     0
        boost    0
        min      0
        low      0
        high     0
        spanned  0
        present  0
        managed  0
";

    #[test]
    fn synthetic_zoneinfo_parsed() {
        let z = parse(SMALL, "small.zoneinfo").unwrap();
        assert_eq!(z.len(), 3);
        assert_eq!(
            (z[0].free, z[0].min, z[0].low, z[0].high),
            (3808, 31, 38, 45)
        );
        assert_eq!((z[0].present, z[0].managed), (3998, 3840));
        assert_eq!(z[0].protection, vec![0, 233, 233, 233]);
        assert_eq!(z[1].line, 18);
        let m = machine_zones(&z, SMALL, "small.zoneinfo").unwrap();
        assert_eq!(m.len(), 2, "the empty Normal zone is left out");
        assert_eq!(
            m[0],
            ZoneSpec {
                kind: ZoneKind::Dma,
                pages: 3998,
                reserved: 158,
                kernel: 32,
                wmark: Some([31, 38, 45]),
                protection: Some([0, 233, 233]),
            }
        );
        assert_eq!((m[1].reserved, m[1].kernel), (1640, 9800));
    }

    #[test]
    fn bad_zoneinfo_names_file_and_line() {
        let e = |t: &str| parse(t, "z.txt").unwrap_err().to_string();
        assert_eq!(
            e("hello\n"),
            "z.txt:1:1: expected a `Node 0, zone NAME` line first: is this a /proc/zoneinfo?"
        );
        let bad = SMALL.replace("min      700", "min      7x0");
        assert_eq!(e(&bad), "z.txt:21:9: min: `7x0` is not a page count");
        let bad = SMALL.replace("        managed  59800\n", "");
        assert_eq!(e(&bad), "z.txt:18:1: zone DMA32: no `managed` line");
        let bad = SMALL.replace("protection: (0, 0, 0, 0)", "protection: (0, 0)");
        assert_eq!(
            e(&bad),
            "z.txt:18:1: zone DMA32: protection has 2 entries; DMA, DMA32 and Normal need 3"
        );
        let bad = SMALL.replace("pages free     50000", "pages free     60000");
        assert_eq!(
            e(&bad),
            "z.txt:18:1: zone DMA32: 60000 free pages but only 59800 managed"
        );
        let bad = SMALL.replace("Node 0, zone   Normal", "Node 1, zone   Normal");
        assert_eq!(
            e(&bad),
            "z.txt:28:1: node 1: the model has one node (node 0 only)"
        );
        assert_eq!(
            e(""),
            "z.txt: no `Node 0, zone NAME` line: not a /proc/zoneinfo"
        );
        let movable = SMALL.replace("zone   Normal", "zone  Movable").replace(
            "spanned  0\n        present  0\n        managed  0",
            "spanned  10\n        present  10\n        managed  10\n        protection: (0, 0, 0, 0)",
        );
        let z = parse(&movable, "z.txt").unwrap();
        assert_eq!(
            machine_zones(&z, &movable, "z.txt")
                .unwrap_err()
                .to_string(),
            "z.txt:28:1: zone Movable has 10 present pages: the model has DMA, DMA32 and \
             Normal zones only"
        );
    }
}
