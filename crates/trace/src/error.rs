//! [`TraceError`]: one line with the file, the position and what is wrong.

use std::fmt;

/// Where in a trace a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pos {
    /// The file as a whole (cannot open, unknown format).
    None,
    /// 1-based line of a text trace.
    Line(u64),
    /// Byte offset: in the decompressed body of a binary refault trace, in the file for
    /// foreign binary formats.
    Byte(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file (as given).
    pub origin: String,
    pub pos: Pos,
    pub msg: String,
}

impl TraceError {
    pub fn new(origin: &str, pos: Pos, msg: impl Into<String>) -> Self {
        TraceError {
            origin: origin.to_string(),
            pos,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Pos::None => write!(f, "{}: {}", self.origin, self.msg),
            Pos::Line(l) => write!(f, "{}:{l}: {}", self.origin, self.msg),
            Pos::Byte(b) => write!(f, "{}: byte {b}: {}", self.origin, self.msg),
        }
    }
}

impl std::error::Error for TraceError {}
