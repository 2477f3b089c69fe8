//! `--set KEY=VALUE`: changing a scenario from the command line.
//!
//! Overrides are applied to the parsed TOML tree before it is deserialised, so they go
//! through exactly the checks a value in the file goes through.
//!
//! - `vm.*` keys go into `[sysctl]`: `vm.swappiness=100`.
//! - Other keys are dotted paths through the schema of `crate::defs`: `machine.memory=2G`,
//!   `model.cost.scan_per_page=50ns`, `policy.balance=legacy`. Keys that contain dots
//!   themselves (`memory.max`) are matched whole: `cgroup.workload.memory.max=1G`.
//! - An element of an array of tables is selected by its name (`task.client.instances=4`,
//!   `task.client.phase.scan.ops=100`; swap areas by device: `swap.area.zram0.size=1G`), by
//!   its default name (`phase0`) or by its index.
//! - The value is TOML when it parses as a TOML value (integer, float, boolean, array), else
//!   a string: `4G`, `classic` and `100us` need no quotes. Keys whose value is text even
//!   when it looks like a number ([`TEXT_KEYS`]: `model.kernel=6.10`) keep the text as
//!   written, so `6.10` does not become the float 6.1.
//!
//! A key that names nothing in the schema, or an element that does not exist, is an error
//! of kind `BadOverride` naming the `--set`.

use crate::defs::{self, SectionDef};
use crate::error::{ErrorKind, ScenarioError};
use crate::spans::Seg;

/// Splits `KEY=VALUE` (from `--set`) at the first `=`.
pub fn parse_override(s: &str) -> Result<(String, String), ScenarioError> {
    let bad = |msg: String| ScenarioError::new(ErrorKind::BadOverride, "--set", msg);
    let Some((key, value)) = s.split_once('=') else {
        return Err(bad(format!("expected KEY=VALUE, got `{s}`")));
    };
    let key = key.trim();
    if key.is_empty() {
        return Err(bad(format!("`{s}` has no key before `=`")));
    }
    if key.chars().any(char::is_whitespace) || key.split('.').any(str::is_empty) {
        return Err(bad(format!(
            "`{key}` is not a dotted key such as machine.memory"
        )));
    }
    Ok((key.to_string(), value.trim().to_string()))
}

/// The TOML value of an override's text: a TOML integer, float, boolean or array when it
/// parses as one, else the text as a string.
pub(crate) fn typed_value(text: &str) -> toml::Value {
    let looks_numeric = text.chars().any(|c| c.is_ascii_digit());
    if !text.contains('\n') {
        if let Ok(table) = toml::from_str::<toml::Table>(&format!("v = {text}")) {
            match table.get("v") {
                Some(v @ (toml::Value::Integer(_) | toml::Value::Boolean(_))) => return v.clone(),
                Some(v @ toml::Value::Float(_)) if looks_numeric => return v.clone(),
                Some(v @ (toml::Value::Array(_) | toml::Value::String(_))) => return v.clone(),
                _ => {}
            }
        }
    }
    toml::Value::String(text.to_string())
}

/// Keys whose value is always text: a version such as `6.10` read as a TOML float would
/// lose its trailing zero (and `6.1` would be refused as "expected a string").
const TEXT_KEYS: &[&str] = &["model.kernel"];

/// Applies one override to the document. Returns the path it set (for error positions).
pub(crate) fn apply(root: &mut toml::Table, key: &str, value: &str) -> Result<Vec<Seg>, String> {
    let value = if TEXT_KEYS.contains(&key) && !value.starts_with('"') {
        toml::Value::String(value.to_string())
    } else {
        typed_value(value)
    };
    let mut path = Vec::new();
    if key.starts_with("vm.") {
        let sysctl = defs::section_at("sysctl").expect("the sysctl section exists");
        let table = sub_table(root, "sysctl")?;
        path.push(Seg::Key("sysctl".into()));
        set_sysctl(table, sysctl, key, value, &mut path)?;
        return Ok(path);
    }
    let segs: Vec<&str> = key.split('.').collect();
    apply_in(root, &defs::ROOT, &segs, value, &mut path)?;
    Ok(path)
}

fn sub_table<'t>(table: &'t mut toml::Table, name: &str) -> Result<&'t mut toml::Table, String> {
    table
        .entry(name.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .ok_or_else(|| format!("`{name}` in the file is not a table"))
}

fn set_sysctl(
    table: &mut toml::Table,
    section: &'static SectionDef,
    name: &str,
    value: toml::Value,
    path: &mut Vec<Seg>,
) -> Result<(), String> {
    debug_assert!(section.sysctl);
    if crate::sysctl::lookup(name).is_none() {
        return Err(defs::unknown_sysctl_message(name));
    }
    table.insert(name.to_string(), value);
    path.push(Seg::Key(name.to_string()));
    Ok(())
}

fn apply_in(
    table: &mut toml::Table,
    section: &'static SectionDef,
    segs: &[&str],
    value: toml::Value,
    path: &mut Vec<Seg>,
) -> Result<(), String> {
    if section.sysctl {
        return set_sysctl(table, section, &segs.join("."), value, path);
    }
    // Longest match first, so that `memory.max` wins over a table `memory`.
    for n in (1..=segs.len()).rev() {
        let name = segs[..n].join(".");
        if section.key(&name).is_some() && n == segs.len() {
            table.insert(name.clone(), value);
            path.push(Seg::Key(name));
            return Ok(());
        }
        let Some(child) = section.child(&name) else {
            continue;
        };
        let rest = &segs[n..];
        if rest.is_empty() || (child.array && rest.len() == 1) {
            return Err(format!(
                "`{}` names the table {}, not a key in it",
                segs.join("."),
                child.header()
            ));
        }
        path.push(Seg::Key(name.clone()));
        if !child.array {
            let sub = sub_table(table, &name)?;
            return apply_in(sub, child, rest, value, path);
        }
        let selector = rest[0];
        let items = table
            .get_mut(&name)
            .and_then(toml::Value::as_array_mut)
            .ok_or_else(|| format!("the file has no {} entries", child.header()))?;
        let label = |i: usize, item: &toml::Value| {
            item.get(child.select_by)
                .and_then(toml::Value::as_str)
                .map_or_else(|| format!("{}{i}", child.name()), str::to_string)
        };
        let labels: Vec<String> = items.iter().enumerate().map(|(i, v)| label(i, v)).collect();
        let index = labels
            .iter()
            .position(|l| l == selector)
            .or_else(|| selector.parse::<usize>().ok().filter(|&i| i < items.len()))
            .ok_or_else(|| {
                format!(
                    "no {} with {} `{selector}` (there are: {})",
                    child.header(),
                    child.select_by,
                    labels.join(", ")
                )
            })?;
        path.push(Seg::Index(index));
        let item = items[index]
            .as_table_mut()
            .ok_or_else(|| format!("{} entry `{selector}` is not a table", child.header()))?;
        return apply_in(item, child, &rest[1..], value, path);
    }
    Err(section.unknown_key_message(segs[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_override_splits_at_the_first_equals() {
        assert_eq!(
            parse_override("vm.swappiness=100").unwrap(),
            ("vm.swappiness".to_string(), "100".to_string())
        );
        assert_eq!(
            parse_override("description=a=b").unwrap(),
            ("description".to_string(), "a=b".to_string())
        );
        assert_eq!(
            parse_override("swappiness").unwrap_err().to_string(),
            "--set: expected KEY=VALUE, got `swappiness`"
        );
        assert_eq!(
            parse_override("=1").unwrap_err().kind(),
            ErrorKind::BadOverride
        );
        assert!(parse_override("a..b=1").is_err());
    }

    #[test]
    fn a_kernel_version_stays_text() {
        for (text, want) in [("6.1", "6.1"), ("6.10", "6.10"), ("\"6.12\"", "6.12")] {
            let mut root = toml::Table::new();
            apply(&mut root, "model.kernel", text).unwrap();
            assert_eq!(root["model"]["kernel"].as_str(), Some(want), "{text}");
        }
    }

    #[test]
    fn values_are_typed() {
        assert_eq!(typed_value("100"), toml::Value::Integer(100));
        assert_eq!(typed_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(typed_value("true"), toml::Value::Boolean(true));
        assert_eq!(typed_value("4G"), toml::Value::String("4G".into()));
        assert_eq!(
            typed_value("classic"),
            toml::Value::String("classic".into())
        );
        assert_eq!(typed_value("inf"), toml::Value::String("inf".into()));
        assert_eq!(typed_value("\"1\""), toml::Value::String("1".into()));
        assert!(typed_value("[\"0\", \"1G\"]").is_array());
    }

    #[test]
    fn paths_follow_the_schema() {
        let mut t: toml::Table = toml::from_str(
            "[[cgroup]]\nname = \"a\"\n[[cgroup]]\nname = \"b\"\n\
             [[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch\"\n",
        )
        .unwrap();
        let p = apply(&mut t, "cgroup.b.memory.max", "1G").unwrap();
        assert_eq!(p, crate::spans::path!["cgroup", 1, "memory.max"]);
        assert_eq!(t["cgroup"][1]["memory.max"].as_str(), Some("1G"));
        apply(&mut t, "model.cost.scan_per_page", "50ns").unwrap();
        assert_eq!(t["model"]["cost"]["scan_per_page"].as_str(), Some("50ns"));
        let p = apply(&mut t, "task.t.phase.phase0.ops", "7").unwrap();
        assert_eq!(p, crate::spans::path!["task", 0, "phase", 0, "ops"]);
        apply(&mut t, "vm.page-cluster", "0").unwrap();
        assert_eq!(t["sysctl"]["vm.page-cluster"].as_integer(), Some(0));

        assert_eq!(
            apply(&mut t, "cgroup.c.memory.max", "1G").unwrap_err(),
            "no [[cgroup]] with name `c` (there are: a, b)"
        );
        assert_eq!(
            apply(&mut t, "machine.memroy", "1G").unwrap_err(),
            "unknown key `memroy` in [machine] (did you mean `memory`?); known keys: memory, \
             cpus, dma32, kernel_reserved, kernel_memory, from_zoneinfo"
        );
        assert!(apply(&mut t, "machine", "1").is_err());
        assert!(apply(&mut t, "vm.nope", "1").is_err());
    }
}
