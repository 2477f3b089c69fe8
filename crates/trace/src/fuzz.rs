//! Bounded fuzzing of every reader under `cargo test`: seeded mutations of a small corpus
//! of valid samples (built here, one or more per format), a fixed number of inputs per
//! reader. The property: opening and reading to the end gives records or one positioned
//! error, never a panic, and ends within a bound of records proportional to the input
//! (no hang, no unbounded stream from a few bytes).

use std::io::Read;

use crate::binary::BinaryWriter;
use crate::open::{open_with, Format, Reader};
use crate::testutil::{arbitrary_trace, Mix, Shared};
use crate::text::TextWriter;
use crate::{Pos, RecordRead, RecordWrite};

/// Inputs per corpus sample.
const INPUTS: u64 = 400;

fn binary_sample(seed: u64, level: Option<i32>) -> Vec<u8> {
    let (h, recs) = arbitrary_trace(seed);
    let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut w = Box::new(BinaryWriter::new(Box::new(Shared(out.clone())), &h, level).unwrap());
    for r in &recs {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let v = out.lock().unwrap().clone();
    v
}

fn text_sample(seed: u64) -> Vec<u8> {
    let (h, recs) = arbitrary_trace(seed);
    let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut w = Box::new(TextWriter::new(Box::new(Shared(out.clone())), &h).unwrap());
    for r in &recs {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let v = out.lock().unwrap().clone();
    v
}

fn lackey_sample() -> Vec<u8> {
    let mut s = String::from("==7== Lackey, an example Valgrind tool\n==7== Command: ./a\n");
    for i in 0..60u64 {
        s += &format!("I  {:08x},3\n", 0x0400_0000 + i * 3);
        s += &format!(" L {:08x},8\n", 0x0804_a000 + i * 64);
        s += &format!(" S {:x},8\n", 0x001f_feff_f000_u64 - i * 8);
        s += &format!(" M {:08x},4\n", 0x0804_bffe + i);
    }
    s += "==7== \n";
    s.into_bytes()
}

fn csv_sample() -> Vec<u8> {
    let mut s = String::from("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n");
    for i in 0..50u64 {
        let op = if i % 3 == 0 { "Write" } else { "Read" };
        s += &format!(
            "{},hm,{},{op},{},{},10\n",
            128_166_372_003_061_629u64 + i,
            i % 2,
            i * 12_288,
            4096 + i * 100
        );
    }
    s.into_bytes()
}

fn oracle_sample() -> Vec<u8> {
    let recs: Vec<(u32, u64, u32, i64)> = (0..60u64)
        .map(|i| (i as u32, (i * 7) % 13, 1000 + (i as u32) * 300, -1))
        .collect();
    crate::oracle::encode(&recs)
}

/// A small damo JSON recording (two targets, three snapshots, ages, a percent-only
/// region), compressed with a stored-block zlib stream, and the same in the perf script and
/// binary forms.
fn damon_samples() -> Vec<Vec<u8>> {
    let json = r#"[{"intervals": {"sample_us": "5000", "aggr_us": "100000", "ops_update_us": "1000000"},
 "target_id": 7, "snapshots": [
  {"start_time": "1000000000", "end_time": "1100000000", "regions": [
   {"start": "4,194,304", "end": "4,206,592", "nr_accesses": {"samples": 20, "percent": null}, "age": {"usec": null, "aggr_intervals": 1}},
   {"start": "4206592", "end": "4227072", "nr_accesses": {"samples": null, "percent": 25}, "age": {"usec": "300000", "aggr_intervals": null}}]},
  {"start_time": "1100000000", "end_time": "1200000000", "sample_interval_us": "10000", "regions": [
   {"start": "4194304", "end": "4227072", "nr_accesses": {"samples": 5, "percent": null}, "age": {"usec": null, "aggr_intervals": 0}}]}]},
 {"intervals": null, "target_id": null, "snapshots": [
  {"start_time": 5, "end_time": 100000005, "regions": [
   {"start": 81920, "end": 90112, "nr_accesses": {"samples": 3}, "age": {"aggr_intervals": 2}}]}]}]"#;
    let rec = crate::damon::parse(json.as_bytes(), "x").unwrap();
    let mut z = vec![0x78, 0x01, 0x01];
    let n = json.len() as u16;
    z.extend_from_slice(&n.to_le_bytes());
    z.extend_from_slice(&(!n).to_le_bytes());
    z.extend_from_slice(json.as_bytes());
    let (mut a, mut b) = (1u32, 0u32);
    for &x in json.as_bytes() {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    z.extend_from_slice(&(b << 16 | a).to_be_bytes());
    let script = "kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=18446623435582458880 nr_regions=2 140731667070976-140731667111936: 4 3\n\
                  kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=18446623435582458880 nr_regions=2 140731667111936-140731667152896: 0 9\n\
                  kdamond.0  4452 [000] 82877.415633: damon:damon_aggregated: target_id=18446623435582458880 nr_regions=1 140731667070976-140731667152896: 20 0\n\
                  kdamond.x xxxx xxxx 82877.515633: damon:damon_aggregated: target_id=18446623435582458880 nr_regions=1 0-0: -1 -1\n";
    vec![
        json.as_bytes().to_vec(),
        z,
        script.as_bytes().to_vec(),
        crate::damon::encode_binary(&rec),
    ]
}

fn perf_mem_samples() -> Vec<Vec<u8>> {
    let mut s = String::new();
    for i in 0..40u64 {
        let ev = if i % 3 == 0 {
            "cpu/mem-stores/P:"
        } else {
            "cpu/mem-loads,ldlat=30/P:"
        };
        s += &format!(
            "{:>16} {:5} {}.{:06}: {:10} {ev} {:16x}\n",
            "prog",
            21106,
            13254 + i / 20,
            (i % 20) * 5000,
            1000 + i * 7,
            0x7f3a_0000_0000u64 + (i * 7919 % 64) * 4096 + i
        );
    }
    let mut d = String::from("# PID, TID, IP, ADDR, LOCAL WEIGHT, DSRC, SYMBOL\n");
    for i in 0..30u64 {
        d += &format!(
            "21106 21106 0x401136 0x{:x} 35 0x{:x} prog:main\n",
            0x7ffd_1234_0000u64 + i * 4096 * (i % 5),
            0x6810_0142u64 + (i % 2) * 2
        );
    }
    vec![s.into_bytes(), d.into_bytes()]
}

/// One mutation of `v`: flip bits, overwrite, insert, delete, truncate or duplicate a chunk.
fn mutate(v: &[u8], m: &mut Mix) -> Vec<u8> {
    let mut out = v.to_vec();
    for _ in 0..1 + m.below(4) {
        let n = out.len() as u64;
        match m.below(7) {
            0 if n > 0 => {
                let i = m.below(n) as usize;
                out[i] ^= 1 << m.below(8);
            }
            1 if n > 0 => {
                let i = m.below(n) as usize;
                out[i] = [0, 0xff, 0x7f, 0x80, b'\n', b' ', b',', b'#'][m.below(8) as usize];
            }
            2 => {
                let i = m.below(n + 1) as usize;
                out.insert(i, m.next() as u8);
            }
            3 if n > 0 => {
                let i = m.below(n) as usize;
                let k = (m.below(16) as usize).min(out.len() - i);
                out.drain(i..i + k);
            }
            4 => out.truncate(m.below(n + 1) as usize),
            5 if n > 0 => {
                let i = m.below(n) as usize;
                let k = (m.below(64) as usize).min(out.len() - i);
                let chunk = out[i..i + k].to_vec();
                let j = m.below(out.len() as u64 + 1) as usize;
                out.splice(j..j, chunk);
            }
            _ => {
                // Digits into a number: large values.
                let i = m.below(n + 1) as usize;
                out.splice(i..i, b"99999999999".iter().copied());
            }
        }
    }
    out
}

/// Reads `bytes` as `format` to the end; panics (fails the test) on a property violation.
/// Readers that expand regions into pages (DAMON, perf mem) are read up to a cap: a few
/// bytes can legitimately describe a region of 2^32 pages.
fn check(bytes: &[u8], format: &Format, what: &str) {
    let b = bytes.to_vec();
    let reopen = move || -> std::io::Result<Box<dyn Read + Send>> {
        Ok(Box::new(std::io::Cursor::new(b.clone())))
    };
    let r = open_with("fuzz", reopen().unwrap(), format, &reopen);
    let bound = 64 * bytes.len() as u64 + 1000;
    match r {
        Err(e) => assert!(!e.msg.is_empty(), "{what}: empty error"),
        Ok(mut r) => {
            let cap = matches!(r, Reader::Damon(_) | Reader::PerfMem(_)).then_some(200_000u64);
            let mut n = 0u64;
            loop {
                match r.next_record() {
                    Ok(Some(_)) => {
                        n += 1;
                        if let Some(c) = cap {
                            if n >= c {
                                break;
                            }
                            continue;
                        }
                        assert!(
                            n <= bound,
                            "{what}: more than {bound} records from {} bytes",
                            bytes.len()
                        );
                    }
                    Ok(None) => break,
                    Err(e) => {
                        assert!(!e.msg.is_empty(), "{what}: empty error");
                        if matches!(
                            format,
                            Format::Text | Format::Lackey | Format::Csv(_) | Format::PerfMem
                        ) {
                            assert!(matches!(e.pos, Pos::Line(_) | Pos::None), "{what}: {e}");
                        }
                        break;
                    }
                }
            }
        }
    }
}

fn fuzz(samples: &[Vec<u8>], formats: &[Format], seed: u64) {
    let mut m = Mix(seed);
    for (s, sample) in samples.iter().enumerate() {
        for f in formats {
            check(sample, f, &format!("sample {s} unmutated"));
        }
        for i in 0..INPUTS {
            let input = mutate(sample, &mut m);
            for f in formats {
                check(&input, f, &format!("sample {s} input {i} ({f:?})"));
            }
        }
    }
}

#[test]
fn fuzz_binary_reader() {
    let samples = [
        binary_sample(3, None),
        binary_sample(4, Some(3)),
        binary_sample(5, None),
    ];
    fuzz(&samples, &[Format::Binary, Format::Auto], 101);
}

#[test]
fn fuzz_text_reader() {
    let samples = [text_sample(6), text_sample(7)];
    fuzz(&samples, &[Format::Text, Format::Auto], 102);
}

#[test]
fn fuzz_lackey_reader() {
    fuzz(&[lackey_sample()], &[Format::Lackey, Format::Auto], 103);
}

#[test]
fn fuzz_csv_reader() {
    let spec = crate::csv::CsvSpec::parse("offset=4,size=5,op=3,volume=2,skip=1").unwrap();
    fuzz(&[csv_sample()], &[Format::Csv(spec)], 104);
}

#[test]
fn fuzz_oracle_reader() {
    fuzz(&[oracle_sample()], &[Format::OracleGeneral], 105);
}

#[test]
fn fuzz_damon_reader() {
    // The corpus is valid: every form reads to the end.
    for (i, b) in damon_samples().into_iter().enumerate() {
        let b2 = b.clone();
        let reopen = move || -> std::io::Result<Box<dyn Read + Send>> {
            Ok(Box::new(std::io::Cursor::new(b2.clone())))
        };
        let mut r = open_with("s", reopen().unwrap(), &Format::Auto, &reopen)
            .unwrap_or_else(|e| panic!("sample {i}: {e}"));
        assert!(
            matches!(r, Reader::Damon(_)),
            "sample {i} detected as DAMON"
        );
        while r
            .next_record()
            .unwrap_or_else(|e| panic!("sample {i}: {e}"))
            .is_some()
        {}
    }
    fuzz(&damon_samples(), &[Format::Damon, Format::Auto], 106);
}

#[test]
fn fuzz_perf_mem_reader() {
    fuzz(&perf_mem_samples(), &[Format::PerfMem, Format::Auto], 107);
}
