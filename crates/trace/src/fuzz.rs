//! Bounded fuzzing of every reader under `cargo test`: seeded mutations of a small corpus
//! of valid samples (built here, one or more per format), a fixed number of inputs per
//! reader. The property: opening and reading to the end gives records or one positioned
//! error, never a panic, and ends within a bound of records proportional to the input
//! (no hang, no unbounded stream from a few bytes).

use std::io::Read;

use crate::binary::BinaryWriter;
use crate::open::{open_with, Format};
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
            let mut n = 0u64;
            loop {
                match r.next_record() {
                    Ok(Some(_)) => {
                        n += 1;
                        assert!(
                            n <= bound,
                            "{what}: more than {bound} records from {} bytes",
                            bytes.len()
                        );
                    }
                    Ok(None) => break,
                    Err(e) => {
                        assert!(!e.msg.is_empty(), "{what}: empty error");
                        if matches!(format, Format::Text | Format::Lackey | Format::Csv(_)) {
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
