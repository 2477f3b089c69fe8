//! The one error type of the crate: what went wrong, where, in one line.
//!
//! Every error names its origin (the scenario file, or `--set` for a malformed override) and,
//! when the problem sits in the file, the 1-based line and column. `Display` prints exactly
//! one line, `path:line:col: message` or `path: message`, so the CLI can print it as it is and
//! editors can jump to the position.

use std::fmt;
use std::sync::Arc;

/// What class of problem a [`ScenarioError`] reports. Front ends map these to exit codes and
/// Python exception classes, so each variant says when it occurs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The scenario file could not be read (missing, unreadable, not UTF-8).
    Io,
    /// The file is not valid TOML.
    Syntax,
    /// A key the schema does not know: a misspelt key, an unknown table or an unknown sysctl.
    UnknownKey,
    /// A value of the wrong type or outside its allowed range (`cpus = "four"`,
    /// `"vm.swappiness" = 300`, `size = "4X"`, a key that does not apply here).
    InvalidValue,
    /// Values that are each valid but describe a machine or workload that cannot exist
    /// (no memory, a zone left empty, a range outside its object, an object larger than the
    /// page-index space).
    Impossible,
    /// A name that refers to nothing: an unknown object, cgroup or device.
    UnknownReference,
    /// A `--set KEY=VALUE` override that is malformed or names no key of the schema.
    BadOverride,
}

impl ErrorKind {
    /// Short lower-case name, stable for scripts and bindings.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::Syntax => "syntax",
            ErrorKind::UnknownKey => "unknown-key",
            ErrorKind::InvalidValue => "invalid-value",
            ErrorKind::Impossible => "impossible",
            ErrorKind::UnknownReference => "unknown-reference",
            ErrorKind::BadOverride => "bad-override",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error while loading a scenario. See the module documentation for the format.
#[derive(Clone, Debug)]
pub struct ScenarioError {
    kind: ErrorKind,
    origin: String,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
    io: Option<Arc<std::io::Error>>,
}

impl ScenarioError {
    pub(crate) fn new(kind: ErrorKind, origin: &str, message: impl Into<String>) -> Self {
        ScenarioError {
            kind,
            origin: origin.to_string(),
            line: None,
            column: None,
            message: message.into(),
            io: None,
        }
    }

    /// An error at a byte offset of `text` (the file's contents).
    pub(crate) fn at(
        kind: ErrorKind,
        origin: &str,
        text: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Self {
        let (line, column) = line_col(text, offset);
        ScenarioError {
            line: Some(line),
            column: Some(column),
            ..ScenarioError::new(kind, origin, message)
        }
    }

    pub(crate) fn io(origin: &str, err: std::io::Error) -> Self {
        ScenarioError {
            message: format!("cannot read scenario: {err}"),
            io: Some(Arc::new(err)),
            ..ScenarioError::new(ErrorKind::Io, origin, "")
        }
    }

    /// The class of problem.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file the error is about (as given to [`crate::load`] or [`crate::parse`]), or
    /// `--set` for a malformed override.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// 1-based line in the file, when the error has a position there.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// 1-based column (in characters) in the file, when the error has a position there.
    pub fn column(&self) -> Option<usize> {
        self.column
    }

    /// The message without the origin and position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// For [`ErrorKind::Io`]: the kind of the underlying IO error (`NotFound`, ...).
    pub fn io_error_kind(&self) -> Option<std::io::ErrorKind> {
        self.io.as_ref().map(|e| e.kind())
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(line), Some(col)) => write!(f, "{}:{line}:{col}: {}", self.origin, self.message),
            (Some(line), None) => write!(f, "{}:{line}: {}", self.origin, self.message),
            _ => write!(f, "{}: {}", self.origin, self.message),
        }
    }
}

impl std::error::Error for ScenarioError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.io
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// 1-based line and column (counted in characters) of byte `offset` in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_and_in_chars() {
        let text = "a = 1\nµ = \"x\"\n";
        assert_eq!(line_col(text, 0), (1, 1));
        assert_eq!(line_col(text, 4), (1, 5));
        assert_eq!(line_col(text, 6), (2, 1));
        // 'µ' is two bytes: the '=' at byte 9 is the third character of line 2.
        assert_eq!(line_col(text, 9), (2, 3));
        assert_eq!(line_col(text, 1000), (3, 1));
    }

    #[test]
    fn display_is_one_line() {
        let e = ScenarioError::at(ErrorKind::InvalidValue, "a.toml", "x\ny = 1", 2, "bad");
        assert_eq!(e.to_string(), "a.toml:2:1: bad");
        let e = ScenarioError::new(ErrorKind::Impossible, "a.toml", "no memory");
        assert_eq!(e.to_string(), "a.toml: no memory");
    }
}
