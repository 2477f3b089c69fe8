//! Where each key and value of the scenario file sits, for error messages.
//!
//! The file is read a second time into a [`Located`] tree: the same shape as the TOML
//! document, each key and value with its byte span when the TOML reader knows it. The raw
//! structs stay plain (they are also fed from the merged tree after `--set` overrides, which
//! has no positions), and checks after deserialisation ask this tree for the position of the
//! path they are complaining about.
//!
//! The spans come from `toml`'s `Spanned` protocol (a struct with a reserved name and three
//! reserved fields, recognised by the deserialiser). Tables created implicitly (`[a.b]`
//! without `[a]`) have no span; the visitor accepts both forms, so such a table simply has
//! none and errors fall back to its key or its parent.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;
use std::ops::Range;

// The names serde_spanned uses to ask the TOML deserialiser for a span. A test below checks
// that spans are found, so a change of these names in a toml upgrade fails loudly.
const SPANNED_NAME: &str = "$__serde_spanned_private_Spanned";
const SPANNED_START: &str = "$__serde_spanned_private_start";
const SPANNED_END: &str = "$__serde_spanned_private_end";
const SPANNED_VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[SPANNED_START, SPANNED_END, SPANNED_VALUE];

/// A value of the document with its span, when known.
#[derive(Debug, Clone)]
pub(crate) struct Located {
    pub span: Option<Range<usize>>,
    pub node: Node,
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Str(String),
    /// Any other scalar (integer, float, bool, datetime).
    Scalar,
    Array(Vec<Located>),
    Table(Vec<Entry>),
}

/// One `key = value` of a table, in document order.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub key: String,
    pub key_span: Option<Range<usize>>,
    pub value: Located,
}

/// A step of a path into the document: a key of a table or an element of an array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

impl From<&str> for Seg {
    fn from(s: &str) -> Seg {
        Seg::Key(s.to_string())
    }
}

impl From<usize> for Seg {
    fn from(i: usize) -> Seg {
        Seg::Index(i)
    }
}

/// `path!["task", 3, "phase", 0, "object"]`
macro_rules! spath {
    ($($seg:expr),* $(,)?) => { [$($crate::spans::Seg::from($seg)),*] };
}
pub(crate) use spath as path;

impl Located {
    /// Reads the whole document. Fails only where `toml` itself would fail.
    pub fn parse(text: &str) -> Result<Located, toml::de::Error> {
        let node = Node::deserialize(toml::Deserializer::new(text))?;
        Ok(Located { span: None, node })
    }

    pub fn entries(&self) -> &[Entry] {
        match &self.node {
            Node::Table(entries) => entries,
            _ => &[],
        }
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries().iter().find(|e| e.key == key)
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.node {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Span of the value at `path`; for a missing value, of its closest existing ancestor
    /// (so "missing key" errors point at the table).
    pub fn locate(&self, path: &[Seg]) -> Option<Range<usize>> {
        let mut here = self;
        let mut best = self.span.clone();
        for seg in path {
            let next = match (seg, &here.node) {
                (Seg::Key(k), Node::Table(_)) => here.entry(k).map(|e| {
                    best = e.value.span.clone().or(e.key_span.clone()).or(best.clone());
                    &e.value
                }),
                (Seg::Index(i), Node::Array(items)) => items.get(*i).inspect(|v| {
                    best = v.span.clone().or(best.clone());
                }),
                _ => None,
            };
            match next {
                Some(v) => here = v,
                None => break,
            }
        }
        best
    }

    /// Span of the key at the end of `path` (for unknown-key errors).
    pub fn locate_key(&self, path: &[Seg]) -> Option<Range<usize>> {
        let (last, parent) = path.split_last()?;
        let mut here = self;
        for seg in parent {
            here = match (seg, &here.node) {
                (Seg::Key(k), Node::Table(_)) => &here.entry(k)?.value,
                (Seg::Index(i), Node::Array(items)) => items.get(*i)?,
                _ => return None,
            };
        }
        match last {
            Seg::Key(k) => here.entry(k).and_then(|e| e.key_span.clone()),
            Seg::Index(_) => None,
        }
    }

    /// The dotted path (`task.client.phase.scan.pattern`) of the innermost key or value
    /// whose span holds byte `offset`. Array elements are shown by their `name` (or
    /// `device`) when they have one, else by index.
    pub fn path_at(&self, offset: usize) -> Option<String> {
        let mut out = Vec::new();
        if find_path(self, offset, &mut out) {
            Some(out.join("."))
        } else {
            None
        }
    }
}

fn contains(span: &Option<Range<usize>>, offset: usize) -> bool {
    span.as_ref()
        .is_some_and(|s| s.start <= offset && offset < s.end.max(s.start + 1))
}

fn find_path(here: &Located, offset: usize, out: &mut Vec<String>) -> bool {
    match &here.node {
        Node::Table(entries) => {
            for e in entries {
                out.push(e.key.clone());
                if find_path(&e.value, offset, out)
                    || contains(&e.key_span, offset)
                    || contains(&e.value.span, offset)
                {
                    return true;
                }
                out.pop();
            }
            false
        }
        Node::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let label = ["name", "device"]
                    .iter()
                    .find_map(|k| item.entry(k).and_then(|e| e.value.as_str()))
                    .map_or_else(|| i.to_string(), str::to_string);
                out.push(label);
                if find_path(item, offset, out) {
                    return true;
                }
                out.pop();
            }
            false
        }
        _ => false,
    }
}

/// A map key with its span (keys of tables always have one in a parsed document).
struct Key {
    text: String,
    span: Option<Range<usize>>,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(Key {
                    text: s.to_string(),
                    span: None,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
                let (start, end, text): (usize, usize, String) = read_spanned(&mut map)?;
                Ok(Key {
                    text,
                    span: Some(start..end),
                })
            }
        }
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, V)
    }
}

/// Reads the three fields of a spanned value, the start key already being next.
fn read_spanned<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    map: &mut A,
) -> Result<(usize, usize, T), A::Error> {
    let mut start = None;
    let mut end = None;
    let mut value = None;
    while let Some(k) = map.next_key::<String>()? {
        match k.as_str() {
            SPANNED_START => start = Some(map.next_value()?),
            SPANNED_END => end = Some(map.next_value()?),
            SPANNED_VALUE => value = Some(map.next_value()?),
            other => return Err(de::Error::unknown_field(other, SPANNED_FIELDS)),
        }
    }
    match (start, end, value) {
        (Some(s), Some(e), Some(v)) => Ok((s, e, v)),
        _ => Err(de::Error::custom("incomplete spanned value")),
    }
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Located, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Located;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a TOML value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located, A::Error> {
                // Either the spanned protocol (first key is the start field) or, for a table
                // without a span, the table itself.
                let Some(first) = map.next_key::<Key>()? else {
                    return Ok(Located {
                        span: None,
                        node: Node::Table(Vec::new()),
                    });
                };
                if first.text == SPANNED_START {
                    let start: usize = map.next_value()?;
                    let mut end = start;
                    let mut node = Node::Scalar;
                    while let Some(k) = map.next_key::<String>()? {
                        match k.as_str() {
                            SPANNED_END => end = map.next_value()?,
                            SPANNED_VALUE => node = map.next_value()?,
                            other => return Err(de::Error::unknown_field(other, SPANNED_FIELDS)),
                        }
                    }
                    return Ok(Located {
                        span: Some(start..end),
                        node,
                    });
                }
                let mut entries = vec![Entry {
                    key: first.text,
                    key_span: first.span,
                    value: map.next_value()?,
                }];
                read_entries(&mut map, &mut entries)?;
                Ok(Located {
                    span: None,
                    node: Node::Table(entries),
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Located, A::Error> {
                Ok(Located {
                    span: None,
                    node: NodeVisitor.visit_seq(seq)?,
                })
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Located, E> {
                Ok(Located {
                    span: None,
                    node: Node::Str(s.to_string()),
                })
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Located, E> {
                Ok(scalar())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Located, E> {
                Ok(scalar())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Located, E> {
                Ok(scalar())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Located, E> {
                Ok(scalar())
            }
        }
        fn scalar() -> Located {
            Located {
                span: None,
                node: Node::Scalar,
            }
        }
        d.deserialize_struct(SPANNED_NAME, SPANNED_FIELDS, V)
    }
}

fn read_entries<'de, A: MapAccess<'de>>(
    map: &mut A,
    entries: &mut Vec<Entry>,
) -> Result<(), A::Error> {
    while let Some(key) = map.next_key::<Key>()? {
        entries.push(Entry {
            key: key.text,
            key_span: key.span,
            value: map.next_value()?,
        });
    }
    Ok(())
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a TOML value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        read_entries(&mut map, &mut entries)?;
        Ok(Node::Table(entries))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Located>()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Node, E> {
        Ok(Node::Str(s.to_string()))
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "name = \"x\"\n\
                       [machine]\n\
                       memory = \"4G\"\n\
                       [[task]]\n\
                       name = \"a\"\n\
                       [[task.phase]]\n\
                       object = \"db\"\n\
                       range = [\"0\", \"1G\"]\n";

    fn at(text: &str, span: Option<Range<usize>>) -> &str {
        &text[span.unwrap()]
    }

    #[test]
    fn spans_of_keys_and_values_are_found() {
        let doc = Located::parse(DOC).unwrap();
        assert_eq!(at(DOC, doc.locate(&path!["machine", "memory"])), "\"4G\"");
        assert_eq!(
            at(DOC, doc.locate_key(&path!["machine", "memory"])),
            "memory"
        );
        assert_eq!(
            at(DOC, doc.locate(&path!["task", 0, "phase", 0, "object"])),
            "\"db\""
        );
        assert_eq!(
            at(DOC, doc.locate(&path!["task", 0, "phase", 0, "range", 1])),
            "\"1G\""
        );
        // A missing key falls back to its table.
        let table = doc.locate(&path!["machine", "cpus"]).unwrap();
        assert!(DOC[table].contains("machine"));
    }

    #[test]
    fn path_at_names_array_elements() {
        let doc = Located::parse(DOC).unwrap();
        let offset = DOC.find("\"db\"").unwrap();
        assert_eq!(doc.path_at(offset).unwrap(), "task.a.phase.0.object");
        let offset = DOC.find("\"4G\"").unwrap();
        assert_eq!(doc.path_at(offset).unwrap(), "machine.memory");
    }
}
