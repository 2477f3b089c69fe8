//! The order in which reports list /proc/vmstat counters: the counters a reclaim developer
//! reads first, in groups, then everything else alphabetically.
//!
//! | group | counters, in this order |
//! |---|---|
//! | reclaim | `pgscan_*`, `pgsteal_*`, `pgrefill`, `pgactivate`, `pgdeactivate`, `pgrotated`, `allocstall_*` |
//! | workingset | `workingset_*` |
//! | swap and faults | `pswpin`, `pswpout`, `pgmajfault`, `pgfault` |
//! | other | every other counter |
//!
//! Within a pattern such as `pgscan_*`, counters sort by name. [`crate::summary()`] and
//! [`crate::compare()`] both use this order, so a counter sits in the same place in both.

use std::cmp::Ordering;

/// A group of counters, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CounterGroup {
    Reclaim,
    Workingset,
    SwapFaults,
    Other,
}

impl CounterGroup {
    pub const ALL: [CounterGroup; 4] = [
        CounterGroup::Reclaim,
        CounterGroup::Workingset,
        CounterGroup::SwapFaults,
        CounterGroup::Other,
    ];

    /// Section title in summaries.
    pub fn title(self) -> &'static str {
        match self {
            CounterGroup::Reclaim => "reclaim",
            CounterGroup::Workingset => "workingset",
            CounterGroup::SwapFaults => "swap and faults",
            CounterGroup::Other => "other counters",
        }
    }

    fn patterns(self) -> &'static [Pattern] {
        use Pattern::{Exact, Prefix};
        match self {
            CounterGroup::Reclaim => &[
                Prefix("pgscan_"),
                Prefix("pgsteal_"),
                Exact("pgrefill"),
                Exact("pgactivate"),
                Exact("pgdeactivate"),
                Exact("pgrotated"),
                Prefix("allocstall_"),
            ],
            CounterGroup::Workingset => &[Prefix("workingset_")],
            CounterGroup::SwapFaults => &[
                Exact("pswpin"),
                Exact("pswpout"),
                Exact("pgmajfault"),
                Exact("pgfault"),
            ],
            CounterGroup::Other => &[],
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Pattern {
    Exact(&'static str),
    Prefix(&'static str),
}

impl Pattern {
    fn matches(self, name: &str) -> bool {
        match self {
            Pattern::Exact(p) => name == p,
            Pattern::Prefix(p) => name.starts_with(p),
        }
    }
}

/// The group of `name` and the position of its pattern within the group.
fn classify(name: &str) -> (CounterGroup, usize) {
    for group in CounterGroup::ALL {
        if let Some(i) = group.patterns().iter().position(|p| p.matches(name)) {
            return (group, i);
        }
    }
    (CounterGroup::Other, 0)
}

/// The group `name` is reported in.
pub fn group_of(name: &str) -> CounterGroup {
    classify(name).0
}

/// Report order of two counter names: group, then pattern within the group, then name.
pub fn cmp_counters(a: &str, b: &str) -> Ordering {
    classify(a).cmp(&classify(b)).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_sort_by_group_then_pattern_then_name() {
        let mut names = vec![
            "nr_free_pages",
            "pgfault",
            "allocstall_normal",
            "workingset_refault_file",
            "pgsteal_kswapd",
            "pswpin",
            "pgscan_kswapd",
            "compact_stall",
            "pgrefill",
            "pgscan_direct",
            "workingset_activate_anon",
            "pgmajfault",
            "pswpout",
        ];
        names.sort_by(|a, b| cmp_counters(a, b));
        assert_eq!(
            names,
            [
                "pgscan_direct",
                "pgscan_kswapd",
                "pgsteal_kswapd",
                "pgrefill",
                "allocstall_normal",
                "workingset_activate_anon",
                "workingset_refault_file",
                "pswpin",
                "pswpout",
                "pgmajfault",
                "pgfault",
                "compact_stall",
                "nr_free_pages",
            ]
        );
        assert_eq!(group_of("pgrotated"), CounterGroup::Reclaim);
        assert_eq!(group_of("pgscan"), CounterGroup::Other);
    }
}
