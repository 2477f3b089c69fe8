//! A small zlib (RFC 1950) / DEFLATE (RFC 1951) decoder, for damo's `json_compressed`
//! recordings (Python's `zlib.compress()`). The crate has no zlib dependency; zstd cannot
//! read DEFLATE. Whole-buffer only: a damo recording is parsed whole anyway.
//!
//! Every malformed input is an `Err` with the byte offset where decoding failed (the offset
//! of the byte being read when the problem showed), never a panic; the output is bounded by
//! a caller-given limit so a small bomb cannot exhaust memory.

/// Decompression failure: the byte offset in the compressed input and what is wrong.
#[derive(Debug, PartialEq, Eq)]
pub struct InflateError {
    pub at: u64,
    pub msg: String,
}

struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    bit: u64,
    nbits: u32,
}

impl<'a> Bits<'a> {
    fn err(&self, msg: &str) -> InflateError {
        InflateError {
            at: self.pos as u64,
            msg: msg.to_string(),
        }
    }

    fn need(&mut self, n: u32) -> Result<(), InflateError> {
        while self.nbits < n {
            let Some(&b) = self.data.get(self.pos) else {
                return Err(self.err("the compressed data ends early (truncated file?)"));
            };
            self.pos += 1;
            self.bit |= u64::from(b) << self.nbits;
            self.nbits += 8;
        }
        Ok(())
    }

    fn get(&mut self, n: u32) -> Result<u32, InflateError> {
        if n == 0 {
            return Ok(0);
        }
        self.need(n)?;
        let v = (self.bit & ((1u64 << n) - 1)) as u32;
        self.bit >>= n;
        self.nbits -= n;
        Ok(v)
    }

    fn align(&mut self) {
        let r = self.nbits % 8;
        self.bit >>= r;
        self.nbits -= r;
    }
}

/// Canonical Huffman code: counts per length and symbols sorted by code.
struct Huffman {
    count: [u16; 16],
    symbol: Vec<u16>,
}

impl Huffman {
    fn new(lengths: &[u8]) -> Result<Huffman, &'static str> {
        let mut count = [0u16; 16];
        for &l in lengths {
            count[l as usize] += 1;
        }
        count[0] = 0;
        let mut left: i32 = 1;
        for &c in &count[1..] {
            left = (left << 1) - i32::from(c);
            if left < 0 {
                return Err("an over-subscribed Huffman code");
            }
        }
        let mut offs = [0u16; 16];
        for l in 1..15 {
            offs[l + 1] = offs[l] + count[l];
        }
        let mut symbol = vec![0u16; lengths.len()];
        for (s, &l) in lengths.iter().enumerate() {
            if l != 0 {
                symbol[offs[l as usize] as usize] = s as u16;
                offs[l as usize] += 1;
            }
        }
        Ok(Huffman { count, symbol })
    }

    fn decode(&self, b: &mut Bits) -> Result<u16, InflateError> {
        let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
        for len in 1..16 {
            code |= b.get(1)? as i32;
            let count = i32::from(self.count[len]);
            if code - count < first {
                return self
                    .symbol
                    .get((index + code - first) as usize)
                    .copied()
                    .ok_or_else(|| b.err("an invalid Huffman code"));
            }
            index += count;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err(b.err("an invalid Huffman code"))
    }
}

const LBASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEXT: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DBASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DEXT: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

fn codes(
    b: &mut Bits,
    out: &mut Vec<u8>,
    lit: &Huffman,
    dist: &Huffman,
    limit: usize,
) -> Result<(), InflateError> {
    loop {
        let sym = lit.decode(b)?;
        if sym < 256 {
            if out.len() >= limit {
                return Err(b.err("the decompressed data exceeds the size limit"));
            }
            out.push(sym as u8);
        } else if sym == 256 {
            return Ok(());
        } else {
            let s = (sym - 257) as usize;
            if s >= 29 {
                return Err(b.err("an invalid length symbol"));
            }
            let len = LBASE[s] as usize + b.get(u32::from(LEXT[s]))? as usize;
            let ds = dist.decode(b)? as usize;
            if ds >= 30 {
                return Err(b.err("an invalid distance symbol"));
            }
            let d = DBASE[ds] as usize + b.get(u32::from(DEXT[ds]))? as usize;
            if d > out.len() {
                return Err(b.err("a distance reaches before the start of the data"));
            }
            if out.len() + len > limit {
                return Err(b.err("the decompressed data exceeds the size limit"));
            }
            let from = out.len() - d;
            for i in 0..len {
                let c = out[from + i];
                out.push(c);
            }
        }
    }
}

/// Decompresses a zlib stream (2-byte header, DEFLATE blocks, Adler-32), refusing output
/// beyond `limit` bytes and any bytes after the checksum.
pub fn zlib_decompress(data: &[u8], limit: usize) -> Result<Vec<u8>, InflateError> {
    let e = |at: u64, m: &str| InflateError {
        at,
        msg: m.to_string(),
    };
    if data.len() < 2 {
        return Err(e(0, "too short for a zlib header"));
    }
    let (cmf, flg) = (data[0], data[1]);
    if cmf & 0x0f != 8 || cmf >> 4 > 7 || (u16::from(cmf) << 8 | u16::from(flg)) % 31 != 0 {
        return Err(e(0, "not a zlib header (deflate, window <= 32 KiB)"));
    }
    if flg & 0x20 != 0 {
        return Err(e(1, "a preset dictionary is not supported"));
    }
    let mut b = Bits {
        data,
        pos: 2,
        bit: 0,
        nbits: 0,
    };
    let mut out = Vec::new();
    loop {
        let last = b.get(1)?;
        match b.get(2)? {
            0 => {
                b.align();
                let (len, nlen) = (b.get(16)?, b.get(16)?);
                if len != !nlen & 0xffff {
                    return Err(b.err("a stored block's length check fails"));
                }
                let len = len as usize;
                if b.pos + len > data.len() {
                    return Err(b.err("the compressed data ends early (truncated file?)"));
                }
                if out.len() + len > limit {
                    return Err(b.err("the decompressed data exceeds the size limit"));
                }
                out.extend_from_slice(&data[b.pos..b.pos + len]);
                b.pos += len;
            }
            1 => {
                let mut l = [0u8; 288];
                l[..144].fill(8);
                l[144..256].fill(9);
                l[256..280].fill(7);
                l[280..].fill(8);
                let lit = Huffman::new(&l).expect("fixed code");
                let dist = Huffman::new(&[5u8; 30]).expect("fixed code");
                codes(&mut b, &mut out, &lit, &dist, limit)?;
            }
            2 => {
                let nlen = b.get(5)? as usize + 257;
                let ndist = b.get(5)? as usize + 1;
                let ncode = b.get(4)? as usize + 4;
                if nlen > 286 || ndist > 30 {
                    return Err(b.err("too many length or distance codes"));
                }
                const ORDER: [usize; 19] = [
                    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                ];
                let mut cl = [0u8; 19];
                for &o in &ORDER[..ncode] {
                    cl[o] = b.get(3)? as u8;
                }
                let clh = Huffman::new(&cl).map_err(|m| b.err(m))?;
                let mut lengths = vec![0u8; nlen + ndist];
                let mut i = 0;
                while i < nlen + ndist {
                    let sym = clh.decode(&mut b)?;
                    let (val, rep) = match sym {
                        0..=15 => (sym as u8, 1),
                        16 => {
                            if i == 0 {
                                return Err(b.err("a repeat with no previous length"));
                            }
                            (lengths[i - 1], 3 + b.get(2)? as usize)
                        }
                        17 => (0, 3 + b.get(3)? as usize),
                        _ => (0, 11 + b.get(7)? as usize),
                    };
                    if i + rep > nlen + ndist {
                        return Err(b.err("code lengths overrun"));
                    }
                    lengths[i..i + rep].fill(val);
                    i += rep;
                }
                if lengths[256] == 0 {
                    return Err(b.err("no end-of-block code"));
                }
                let lit = Huffman::new(&lengths[..nlen]).map_err(|m| b.err(m))?;
                let dist = Huffman::new(&lengths[nlen..]).map_err(|m| b.err(m))?;
                codes(&mut b, &mut out, &lit, &dist, limit)?;
            }
            _ => return Err(b.err("an invalid block type")),
        }
        if last == 1 {
            break;
        }
    }
    b.align();
    let mut sum = 0u32;
    for _ in 0..4 {
        sum = sum << 8 | b.get(8)?;
    }
    if b.pos != data.len() {
        return Err(b.err("data after the end of the zlib stream"));
    }
    let (mut s1, mut s2) = (1u32, 0u32);
    for chunk in out.chunks(5552) {
        for &x in chunk {
            s1 += u32::from(x);
            s2 += s1;
        }
        s1 %= 65521;
        s2 %= 65521;
    }
    if sum != s2 << 16 | s1 {
        return Err(b.err("the Adler-32 checksum does not match (corrupt file?)"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Vectors from Python's `zlib.compress()`: fixed and dynamic Huffman blocks.
    #[test]
    fn python_zlib_vectors() {
        let z = unhex("789ccb48cdc9c957c84027b90070be08bb");
        assert_eq!(
            zlib_decompress(&z, 100).unwrap(),
            b"hello hello hello hello\n"
        );
        let z = unhex(DYNAMIC);
        let mut want: Vec<u8> = (0..=255u8).cycle().take(768).collect();
        want.extend(b"abc".iter().cycle().take(600));
        assert_eq!(zlib_decompress(&z, 1 << 20).unwrap(), want);
        for cut in [1, 10, 100, z.len() - 1] {
            assert!(zlib_decompress(&z[..cut], 1 << 20).is_err());
        }
    }

    const DYNAMIC: &str = concat!(
        "789c6360646266616563e7e0e4e2e6e1e5e3171014121611151397909492969195935750545256515553d7d0",
        "d4d2d6d1d5d33730343236313533b7b0b4b2b6b1b5b37770747276717573f7f0f4f2f6f1f5f30f080c0a0e09",
        "0d0b8f888c8a8e898d8b4f484c4a4e494d4bcfc8cccacec9cdcb2f282c2a2e292d2bafa8acaaaea9adab6f68",
        "6c6a6e696d6befe8eceaeee9edeb9f3071d2e42953a74d9f3173d6ec3973e7cd5fb070d1e2254b972d5fb172",
        "d5ea356bd7addfb071d3e62d5bb76ddfb173d7ee3d7bf7ed3f70f0d0e123478f1d3f71f2d4e93367cf9dbf70",
        "f1d2e52b57af5dbf71f3d6ed3b77efdd7ff0f0d1e3274f9f3d7ff1f2d5eb376fdfbdfff0f1d3e72f5fbf7dff",
        "f1f3d7ef3f7ffffd6718f5ff88f63fd079a36814511d0100fe94644f",
    );

    #[test]
    fn stored_block_and_checks() {
        // A stored block of "abc": header, BFINAL=1 BTYPE=00, LEN/NLEN, data, Adler-32.
        let mut z = vec![0x78, 0x01, 0x01, 3, 0, 0xfc, 0xff, b'a', b'b', b'c'];
        z.extend_from_slice(&0x024d_0127u32.to_be_bytes());
        assert_eq!(zlib_decompress(&z, 100).unwrap(), b"abc");
        // Limit, checksum, truncation, trailing data.
        assert!(zlib_decompress(&z, 2).unwrap_err().msg.contains("limit"));
        let mut bad = z.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert!(zlib_decompress(&bad, 100)
            .unwrap_err()
            .msg
            .contains("Adler"));
        let e = zlib_decompress(&z[..8], 100).unwrap_err();
        assert!(e.msg.contains("ends early"), "{e:?}");
        let mut more = z.clone();
        more.push(0);
        assert!(zlib_decompress(&more, 100)
            .unwrap_err()
            .msg
            .contains("after"));
    }
}
