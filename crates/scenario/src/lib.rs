//! refault-scenario: scenario files (TOML) resolved into a [`Scenario`].
//!
//! A scenario names the machine, the sysctls, the policies, the devices and the tasks. It is
//! read in two phases, as ripgrep reads its configuration:
//!
//! 1. **Raw.** The TOML text is parsed, checked against the schema (unknown keys are errors
//!    with their line), `--set KEY=VALUE` overrides are merged into the tree, and the result
//!    is deserialised into plain structs where every key is optional (`raw.rs`).
//! 2. **Resolved.** Every default is filled in, names become indices, sizes become pages and
//!    times nanoseconds, and everything is checked (`resolve.rs`). The resolved
//!    [`Scenario`] is what the simulator runs and what results echo.
//!
//! | file | what |
//! |---|---|
//! | `model.rs` | the resolved types (the contract with the other crates) |
//! | `defs.rs` | the schema: every table and key, default and doc; `reference.toml` |
//! | `sysctl.rs` | the `vm.*` sysctls: name, default, range, doc; `docs/sysctls.md` |
//! | `presets.rs` | block-device presets (hdd, sata-ssd, nvme, zram, ramdisk) |
//! | `size.rs` | sizes, durations, bandwidths as written (`"1.5G"`, `"100us"`) |
//! | `spans.rs` | positions of keys and values, for error messages |
//! | `overrides.rs` | `--set KEY=VALUE` |
//! | `raw.rs`, `resolve.rs` | the two phases |
//! | `error.rs` | [`ScenarioError`]: kind, file, line, column, one-line message |
//!
//! `scenarios/reference.toml` lists every key with its default; `docs/sysctls.md` lists the
//! sysctls. Both are generated from the tables here and a test keeps them in step
//! (`REFAULT_BLESS=1 cargo test -p refault-scenario` rewrites them).

mod defs;
mod error;
pub mod layout;
pub mod model;
mod overrides;
pub mod presets;
mod raw;
mod resolve;
pub mod size;
mod spans;
pub mod sysctl;
pub mod zoneinfo;

pub use error::{ErrorKind, ScenarioError};
pub use model::*;
pub use overrides::parse_override;
pub use resolve::{default_file_folio_order_of, parse_kernel_version};

use spans::Located;
use std::path::Path;

/// Reads and resolves the scenario file at `path`. `overrides` are `--set` pairs (see
/// [`parse_override`]); `seed`, when given, replaces the file's seed.
pub fn load(
    path: &Path,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::io(&origin, e))?;
    parse(&text, &origin, overrides, seed)
}

/// Resolves scenario `text`. `origin` is the file name used in messages (and, without a
/// `name` key, the scenario name is its stem).
pub fn parse(
    text: &str,
    origin: &str,
    overrides: &[(String, String)],
    seed: Option<u64>,
) -> Result<Scenario, ScenarioError> {
    let doc = Located::parse(text).map_err(|e| toml_error(origin, text, None, &e))?;
    defs::ROOT
        .check_keys(&doc, &mut Vec::new())
        .map_err(|(kind, span, msg)| match span {
            Some(span) => ScenarioError::at(kind, origin, text, span.start, msg),
            None => ScenarioError::new(kind, origin, msg),
        })?;

    let from_file = || -> Result<raw::RawScenario, ScenarioError> {
        toml::from_str(text).map_err(|e| toml_error(origin, text, Some(&doc), &e))
    };
    let mut applied = Vec::new();
    let raw = if overrides.is_empty() {
        from_file()?
    } else {
        let file_table: toml::Table =
            toml::from_str(text).map_err(|e| toml_error(origin, text, None, &e))?;
        let mut table = file_table.clone();
        for (key, value) in overrides {
            let path = overrides::apply(&mut table, key, value).map_err(|msg| {
                ScenarioError::new(
                    ErrorKind::BadOverride,
                    origin,
                    format!("--set {key}={value}: {msg}"),
                )
            })?;
            applied.push((path, format!("{key}={value}")));
        }
        match toml::Value::Table(table).try_into::<raw::RawScenario>() {
            Ok(raw) => raw,
            Err(merged_err) => {
                // Blame the file if it is wrong by itself, else the first override that
                // makes it wrong.
                from_file()?;
                let mut table = file_table;
                for (key, value) in overrides {
                    overrides::apply(&mut table, key, value).expect("applied once already");
                    if let Err(e) = toml::Value::Table(table.clone()).try_into::<raw::RawScenario>()
                    {
                        return Err(ScenarioError::new(
                            kind_of(&e),
                            origin,
                            format!("--set {key}={value}: {}", one_line(e.message())),
                        ));
                    }
                }
                return Err(ScenarioError::new(
                    kind_of(&merged_err),
                    origin,
                    one_line(merged_err.message()),
                ));
            }
        }
    };
    let cx = resolve::Ctx {
        origin,
        text,
        doc: &doc,
        overrides: &applied,
    };
    resolve::resolve(raw, &cx, seed)
}

/// `scenarios/reference.toml`: a commented reference scenario with every key, its default
/// and its doc, generated from the schema tables. It parses as a scenario itself.
pub fn reference_toml() -> String {
    defs::reference_toml()
}

/// `docs/sysctls.md`: a markdown table of the modelled sysctls (name, default, range, unit,
/// meaning), generated from [`sysctl::SYSCTLS`].
pub fn sysctl_docs_markdown() -> String {
    sysctl::docs_markdown()
}

fn one_line(s: &str) -> String {
    s.trim()
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("; ")
}

fn kind_of(e: &toml::de::Error) -> ErrorKind {
    if e.message().starts_with("unknown field") {
        ErrorKind::UnknownKey
    } else {
        ErrorKind::InvalidValue
    }
}

/// A `toml` error as a [`ScenarioError`]: without `doc` it is a syntax error; with it, a
/// data error whose message is prefixed with the key path it is about.
fn toml_error(
    origin: &str,
    text: &str,
    doc: Option<&Located>,
    e: &toml::de::Error,
) -> ScenarioError {
    let (kind, mut msg) = match doc {
        None => (ErrorKind::Syntax, one_line(e.message())),
        Some(_) => (kind_of(e), one_line(e.message())),
    };
    let Some(span) = e.span() else {
        return ScenarioError::new(kind, origin, msg);
    };
    if let Some(key) = doc.and_then(|d| d.path_at(span.start)) {
        msg = format!("{key}: {msg}");
    }
    ScenarioError::at(kind, origin, text, span.start, msg)
}

#[cfg(test)]
mod tests;
