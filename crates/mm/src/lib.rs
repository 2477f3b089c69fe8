//! placeholder crate root, filled in by the foundation work.
