//! The guest's multi-gen LRU as `/sys/kernel/debug/lru_gen_full` prints it
//! (`lru_gen_seq_show()` with `full`, mm/vmscan.c), read back from a [`crate::vm::GuestRun`].
//!
//! The text is one block per memory cgroup and node:
//!
//! ```text
//! memcg     1 /
//!  node     0
//!           0      37340          0           0x     <- seq, age in ms, anon, file pages
//!                      0          0r          0e          0p   ...   <- tier 0: anon, file
//!                      ...                                         <- tiers 1-3
//!                                 0           0    ...              <- page-table walk stats
//!           1      37340          0          26
//!           ...
//! ```
//!
//! A type's size is marked `x` in the generations older than its `min_seq`. Per tier and
//! type three numbers follow, each with a letter: `r`/`e`/`p` (refaulted, evicted,
//! protected since the type's `min_seq` last moved: `NR_HIST_GENS` is 1, so only the oldest
//! generation prints them), `R`/`T` (the running averages `avg_refaulted`/`avg_total`, on
//! the `max_seq` line), or none. The lines are told apart by where their first number ends
//! (`lru_gen_seq_show()` pads a generation's to 11 columns, a tier's to 22, the walk
//! statistics' to 33), which holds for every kernel's layout.

use serde::Serialize;

/// Anon and file, indexed as the kernel's `LRU_GEN_ANON` / `LRU_GEN_FILE`.
pub const ANON: usize = 0;
pub const FILE: usize = 1;

/// One tier's three numbers for one type, with the letters the kernel printed after them
/// (`"rep"`: refaulted, evicted, protected; `"RTx"`: the averages; `""` where it printed
/// none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TierStats {
    pub values: [u64; 3],
    pub marks: String,
}

/// One generation of one lruvec.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Generation {
    pub seq: u64,
    /// `jiffies - timestamps[gen]` in ms: how long ago the aging created it.
    pub age_ms: u64,
    /// Pages per type (`nr_pages[gen][type][]` summed over the zones).
    pub pages: [u64; 2],
    /// Per type: printed with `x`, the generation is older than the type's `min_seq`.
    pub below_min_seq: [bool; 2],
    /// Per tier, anon and file.
    pub tiers: Vec<[TierStats; 2]>,
    /// The page-table walk statistics of this generation's line (`mm_state->stats`; six in
    /// 6.1: leaf total/old/young, non-leaf total/found/added), with their letters.
    pub walk: Vec<(u64, char)>,
}

/// One memory cgroup's lruvec on one node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Lruvec {
    pub memcg_id: u64,
    /// The cgroup's path ("/" for the root).
    pub memcg_path: String,
    pub node: u64,
    /// Oldest first, as printed.
    pub gens: Vec<Generation>,
}

impl Lruvec {
    /// `max_seq`: the youngest generation printed.
    pub fn max_seq(&self) -> Option<u64> {
        self.gens.last().map(|g| g.seq)
    }

    /// `min_seq[ty]`: the oldest generation not marked below it.
    pub fn min_seq(&self, ty: usize) -> Option<u64> {
        self.gens
            .iter()
            .find(|g| !g.below_min_seq[ty])
            .map(|g| g.seq)
    }

    /// The generation `seq`.
    pub fn gen(&self, seq: u64) -> Option<&Generation> {
        self.gens.iter().find(|g| g.seq == seq)
    }

    /// Pages of type `ty` over all generations.
    pub fn pages(&self, ty: usize) -> u64 {
        self.gens.iter().map(|g| g.pages[ty]).sum()
    }
}

/// The whole file: every lruvec in the order printed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LruGenFull {
    pub lruvecs: Vec<Lruvec>,
}

/// A number with an optional letter after it (`24811e`, `0x`, `6899L`).
fn number_and_mark(token: &str) -> Option<(u64, Option<char>)> {
    let last = token.chars().last()?;
    if last.is_ascii_digit() {
        return token.parse().ok().map(|n| (n, None));
    }
    let n = token[..token.len() - last.len_utf8()].parse().ok()?;
    Some((n, Some(last)))
}

impl LruGenFull {
    /// Parse the text `lru_gen_full` printed; `origin` names it in errors, which also give
    /// the line. An empty text is no lruvec (the MGLRU was off or the file missing).
    pub fn parse(text: &str, origin: &str) -> Result<Self, String> {
        let mut out = LruGenFull::default();
        let mut memcg: Option<(u64, String)> = None;
        for (i, line) in text.lines().enumerate() {
            let bad = |what: &str| format!("{origin}: line {}: {what}: {line:?}", i + 1);
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                continue;
            }
            let mut words = trimmed.split_whitespace();
            let first = words.next().expect("not empty");
            if first == "memcg" {
                let id = words
                    .next()
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| bad("memcg without an id"))?;
                memcg = Some((id, words.collect::<Vec<_>>().join(" ")));
                continue;
            }
            if first == "node" {
                let node = words
                    .next()
                    .and_then(|w| w.parse().ok())
                    .ok_or_else(|| bad("node without an id"))?;
                let (memcg_id, memcg_path) =
                    memcg.clone().ok_or_else(|| bad("node before memcg"))?;
                out.lruvecs.push(Lruvec {
                    memcg_id,
                    memcg_path,
                    node,
                    gens: Vec::new(),
                });
                continue;
            }
            let lruvec = out
                .lruvecs
                .last_mut()
                .ok_or_else(|| bad("statistics before memcg and node"))?;
            let tokens: Vec<(u64, Option<char>)> = trimmed
                .split_whitespace()
                .map(number_and_mark)
                .collect::<Option<_>>()
                .ok_or_else(|| bad("not a number"))?;
            // Where the first number ends tells the line's kind.
            let end = line.len() - trimmed.len() + first.len();
            if end <= 11 {
                let [(seq, None), (age_ms, None), (anon, a), (file, f)] = tokens[..] else {
                    return Err(bad("a generation is seq, age, anon and file pages"));
                };
                lruvec.gens.push(Generation {
                    seq,
                    age_ms,
                    pages: [anon, file],
                    below_min_seq: [a == Some('x'), f == Some('x')],
                    tiers: Vec::new(),
                    walk: Vec::new(),
                });
                continue;
            }
            let gen = lruvec
                .gens
                .last_mut()
                .ok_or_else(|| bad("statistics before a generation"))?;
            if end <= 22 {
                if tokens.len() != 7
                    || tokens[0].1.is_some()
                    || tokens[0].0 as usize != gen.tiers.len()
                {
                    return Err(bad("a tier is its index and three numbers per type"));
                }
                let stats = |t: &[(u64, Option<char>)]| TierStats {
                    values: [t[0].0, t[1].0, t[2].0],
                    marks: t.iter().filter_map(|(_, m)| *m).collect(),
                };
                gen.tiers.push([stats(&tokens[1..4]), stats(&tokens[4..7])]);
            } else {
                gen.walk = tokens.iter().map(|&(n, m)| (n, m.unwrap_or(' '))).collect();
            }
        }
        Ok(out)
    }

    /// The root memory cgroup's lruvec on node 0 (the whole machine's LRU when no task runs
    /// in a cgroup of its own).
    pub fn root(&self) -> Option<&Lruvec> {
        self.lruvecs
            .iter()
            .find(|l| l.memcg_path == "/" && l.node == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The root lruvec of a 6.1 guest as v04 started (docs/fidelity/vm-debian-6.1-s19-v04.json):
    /// the MGLRU switched on 37 s before, never aged since (`max_seq` 3, the initial
    /// `MIN_NR_GENS + 1`), anon's `min_seq` 0, file's 1.
    const V04_BEFORE: &str =
        include_str!("../../../docs/fidelity/lru_gen_full-debian-6.1-v04-before.txt");

    #[test]
    fn a_6_1_guests_lru_gen_full_is_read_per_generation_and_tier() {
        let f = LruGenFull::parse(V04_BEFORE, "v04").unwrap();
        assert_eq!(f.lruvecs.len(), 2);
        let root = f.root().unwrap();
        assert_eq!((root.memcg_id, root.node), (1, 0));
        assert_eq!(root.max_seq(), Some(3));
        assert_eq!((root.min_seq(ANON), root.min_seq(FILE)), (Some(0), Some(1)));
        let pages: Vec<[u64; 2]> = root.gens.iter().map(|g| g.pages).collect();
        assert_eq!(pages, vec![[0, 0], [0, 26], [939, 8], [814, 1293]]);
        // zoneinfo's nr_active_anon + nr_inactive_anon and the file LRU of the same moment.
        assert_eq!((root.pages(ANON), root.pages(FILE)), (1753, 1327));
        assert!(root
            .gens
            .iter()
            .all(|g| g.age_ms == 37340 && g.tiers.len() == 4));
        // File's oldest generation: refaulted, evicted (tier 0), protected (tier 3).
        let g1 = root.gen(1).unwrap();
        assert_eq!(
            g1.tiers[0][FILE],
            TierStats {
                values: [17, 24811, 0],
                marks: "rep".into()
            }
        );
        assert_eq!(g1.tiers[3][FILE].values, [0, 0, 8]);
        // Anon's oldest generation prints its (zero) counts; file's columns there are blank.
        assert_eq!(root.gen(0).unwrap().tiers[0][ANON].marks, "rep");
        assert_eq!(root.gen(0).unwrap().tiers[0][FILE].marks, "");
        // The youngest generation carries the averages and the walk statistics' names.
        let g3 = root.gen(3).unwrap();
        assert_eq!(g3.tiers[0][ANON].marks, "RT");
        let names: String = g3.walk.iter().map(|&(_, c)| c).collect();
        assert_eq!(names, "LOYNFA");
        // The cost probe's cgroup (removed, still listed while offline).
        let probe = &f.lruvecs[1];
        assert_eq!(probe.memcg_path, "/refault-cost-probe");
        assert_eq!((probe.min_seq(ANON), probe.max_seq()), (Some(3), Some(5)));
        assert_eq!(probe.gen(3).unwrap().tiers[0][ANON].values, [3072, 3072, 0]);
        assert_eq!(probe.gen(5).unwrap().walk[0], (6899, 'L'));
    }

    /// The first guest run a `fidelity --vm --out` file saved.
    fn saved_run(file: &str) -> crate::vm::GuestRun {
        let path = format!("{}/../../docs/fidelity/{file}", env!("CARGO_MANIFEST_DIR"));
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        serde_json::from_value(doc["scenarios"][0]["vm"]["guest_runs"][0].clone()).unwrap()
    }

    /// A run saved with the readings (v06 on 6.1: the guest aged twice during the run) reads
    /// back before and after; a run saved before them (session 17) still loads, with none.
    #[test]
    fn saved_runs_bring_lru_gen_full_back() {
        let r = saved_run("vm-debian-6.1-s19-v06.json");
        let before = LruGenFull::parse(&r.lru_gen_full_before, "before").unwrap();
        let after = LruGenFull::parse(&r.lru_gen_full_after, "after").unwrap();
        let (b, a) = (before.root().unwrap(), after.root().unwrap());
        assert_eq!(
            (b.max_seq(), b.min_seq(ANON), b.min_seq(FILE)),
            (Some(3), Some(0), Some(0))
        );
        assert_eq!(b.gen(2).unwrap().pages, [938, 0]);
        assert_eq!(b.gen(3).unwrap().pages, [814, 1036]);
        assert_eq!(
            (a.max_seq(), a.min_seq(ANON), a.min_seq(FILE)),
            (Some(5), Some(3), Some(3))
        );
        // Evicted and refaulted since the oldest generation's min_seq last moved.
        assert_eq!(a.gen(3).unwrap().tiers[0][ANON].values, [3031, 13078, 0]);
        assert_eq!(a.gen(3).unwrap().tiers[0][FILE].values, [357, 1272, 0]);
        let old = saved_run("vm-debian-6.1-s17-costs.json");
        assert_eq!(old.lru_gen_full_before, "");
        assert_eq!(
            LruGenFull::parse(&old.lru_gen_full_after, "old")
                .unwrap()
                .root(),
            None
        );
    }

    #[test]
    fn bad_lines_are_errors_naming_the_line() {
        assert_eq!(LruGenFull::parse("", "x").unwrap(), LruGenFull::default());
        let e = LruGenFull::parse("memcg 1 /\n node 0\n          0 12 zz 3\n", "g").unwrap_err();
        assert!(e.starts_with("g: line 3: not a number"), "{e}");
        let e = LruGenFull::parse("          0 12 1 3\n", "g").unwrap_err();
        assert!(
            e.contains("line 1: statistics before memcg and node"),
            "{e}"
        );
    }
}
