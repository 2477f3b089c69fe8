//! The multi-gen LRU's generations as `/sys/kernel/debug/lru_gen_full` prints them, from a
//! result file's `lru_gen` array.

use serde_json::Value;

fn u(v: &Value, k: &str) -> u64 {
    v.get(k).and_then(Value::as_u64).unwrap_or(0)
}

/// `memcg ID PATH` / `node 0` / one line per generation (`seq age_ms nr_anon nr_file`), then
/// per type the tiers (`refaulted evicted protected`, with the running averages) and the
/// page-table walk statistics. `None` when the result has no `lru_gen` (classic LRU).
pub fn lru_gen_text(result: &Value) -> Option<String> {
    let memcgs = result.get("lru_gen")?.as_array()?;
    let mut out = String::new();
    for (id, m) in memcgs.iter().enumerate() {
        let name = m.get("memcg").and_then(Value::as_str).unwrap_or("?");
        out += &format!("memcg {id:5} {name}\n node {:5}\n", 0);
        out += &format!(
            "   {:>8} {:>10} {:>10} {:>10}\n",
            "gen", "age_ms", "anon", "file"
        );
        for g in m
            .get("generations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out += &format!(
                "   {:8} {:10} {:10} {:10}\n",
                u(g, "seq"),
                u(g, "age_ms"),
                u(g, "nr_anon"),
                u(g, "nr_file")
            );
        }
        out += &format!(
            "   min_seq anon {} file {}, max_seq {}\n",
            u(m, "min_seq_anon"),
            u(m, "min_seq_file"),
            u(m, "max_seq")
        );
        for (ty, key) in [("anon", "tiers_anon"), ("file", "tiers_file")] {
            out += &format!(
                "   {ty} tier  refaulted    evicted  protected  avg_refaulted  avg_total\n"
            );
            for t in m.get(key).and_then(Value::as_array).into_iter().flatten() {
                out += &format!(
                    "   {:9} {:10} {:10} {:10} {:14} {:10}\n",
                    u(t, "tier"),
                    u(t, "refaulted"),
                    u(t, "evicted"),
                    u(t, "protected"),
                    u(t, "avg_refaulted"),
                    u(t, "avg_total")
                );
            }
        }
        out += &format!(
            "   agings {}  vmas walked {}  pmd total/found/added {}/{}/{}  pte total/young {}/{}  look-arounds {} (young {})\n",
            u(m, "agings"),
            u(m, "vmas_walked"),
            u(m, "pmd_total"),
            u(m, "pmd_found"),
            u(m, "pmd_added"),
            u(m, "pte_total"),
            u(m, "pte_young"),
            u(m, "look_arounds"),
            u(m, "look_around_young")
        );
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_generations_and_tiers() {
        let v: Value = serde_json::from_str(
            r#"{"lru_gen": [{"memcg": "/", "max_seq": 5, "min_seq_anon": 2, "min_seq_file": 3,
                "generations": [{"seq": 2, "age_ms": 900, "nr_anon": 10, "nr_file": 0},
                                {"seq": 5, "age_ms": 1, "nr_anon": 7, "nr_file": 3}],
                "tiers_anon": [{"tier": 0, "refaulted": 1, "evicted": 2, "protected": 3,
                                "avg_refaulted": 4, "avg_total": 5}],
                "tiers_file": [], "agings": 3, "vmas_walked": 6, "pmd_total": 9,
                "pmd_found": 8, "pmd_added": 7, "pte_total": 4096, "pte_young": 100,
                "look_arounds": 2, "look_around_young": 30}]}"#,
        )
        .unwrap();
        let t = lru_gen_text(&v).unwrap();
        assert!(t.starts_with("memcg     0 /\n node     0\n"));
        assert!(t.contains("          2        900         10          0\n"));
        assert!(t.contains("min_seq anon 2 file 3, max_seq 5"));
        assert!(
            t.contains("           0          1          2          3              4          5\n")
        );
        assert!(t.contains("pte total/young 4096/100"));
        assert!(lru_gen_text(&serde_json::json!({"vmstat": {}})).is_none());
    }
}
