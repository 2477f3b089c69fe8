//! Reading the parts of a result file that reports use, leniently: a missing key or a value
//! of the wrong type reads as missing (NaN, printed `-`), never as an error, so a report of a
//! partial or older result still prints what it can.

use serde_json::Value;

use crate::format::format_value;
use crate::vmstat::cmp_counters;

/// `result[key]` as a number; NaN when missing or not a number.
pub(crate) fn num(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// A JSON number as text: integers exactly, floats through [`format_value`]; other values
/// as JSON.
pub(crate) fn format_json(v: &Value) -> String {
    if let Some(u) = v.as_u64() {
        u.to_string()
    } else if let Some(i) = v.as_i64() {
        i.to_string()
    } else if let Some(f) = v.as_f64() {
        format_value(f)
    } else if let Some(s) = v.as_str() {
        s.to_string()
    } else {
        v.to_string()
    }
}

/// The `tasks` array (empty when missing).
pub(crate) fn tasks(result: &Value) -> &[Value] {
    result["tasks"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// One label per task: its `name`, or `name#k` for the k-th repeat (k >= 2) of a name that
/// occurs more than once, so every label is unique and stable across results.
pub(crate) fn task_labels(tasks: &[Value]) -> Vec<String> {
    let mut labels: Vec<String> = Vec::with_capacity(tasks.len());
    for (i, t) in tasks.iter().enumerate() {
        let name = t["name"].as_str().unwrap_or("?");
        let seen = tasks[..i]
            .iter()
            .filter(|u| u["name"].as_str().unwrap_or("?") == name)
            .count();
        labels.push(if seen == 0 {
            name.to_string()
        } else {
            format!("{name}#{}", seen + 1)
        });
    }
    labels
}

/// The `vmstat` counters in report order (see [`crate::vmstat`]).
pub(crate) fn vmstat(result: &Value) -> Vec<(&str, &Value)> {
    let mut counters: Vec<(&str, &Value)> = result["vmstat"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default();
    counters.sort_by(|a, b| cmp_counters(a.0, b.0));
    counters
}

/// A counter is shown when it is not zero; non-numbers are always shown.
pub(crate) fn is_nonzero(v: &Value) -> bool {
    v.as_f64() != Some(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_task_names_get_numbered_labels() {
        let tasks = json!([{"name": "client"}, {"name": "server"}, {"name": "client"}]);
        assert_eq!(
            task_labels(tasks.as_array().unwrap()),
            ["client", "server", "client#2"]
        );
    }

    #[test]
    fn numbers_print_exactly() {
        assert_eq!(
            format_json(&json!(18446744073709551615u64)),
            "18446744073709551615"
        );
        assert_eq!(format_json(&json!(-3)), "-3");
        assert_eq!(format_json(&json!(2.5)), "2.5");
        assert_eq!(format_json(&json!("x")), "x");
        assert!(num(None).is_nan());
        assert!(num(Some(&json!("7"))).is_nan());
    }
}
