//! The threads' ready times and the choice of the next thread to run: a tournament tree (a
//! complete binary tree whose every node holds the earliest of its two children), so taking
//! the earliest thread and the earliest among the others costs O(log n) instead of a scan of
//! every thread per step. An oversubscribed machine (72 fio jobs on 36 CPUs, 36 memcached
//! threads) runs a step or two per pick, and a scan of its ~75 threads was a third of the
//! simulation's time.

/// Ready time of every thread; u64::MAX = not runnable.
pub(crate) struct Ready {
    /// Node i (1-based, children 2i and 2i + 1; thread j is leaf `leaves + j`): the earliest
    /// (ready time, thread) below it, so ties go to the lowest thread id. Padding leaves up
    /// to a power of two are (u64::MAX, u32::MAX). Each node holds its time itself, so an
    /// update walks up with one independent load per level.
    node: Vec<(u64, u32)>,
    leaves: usize,
    n: usize,
}

impl Ready {
    pub fn new(times: &[u64]) -> Ready {
        let n = times.len();
        let leaves = n.next_power_of_two().max(1);
        let mut node = vec![(u64::MAX, u32::MAX); 2 * leaves];
        for (j, &t) in times.iter().enumerate() {
            node[leaves + j] = (t, j as u32);
        }
        for i in (1..leaves).rev() {
            node[i] = node[2 * i].min(node[2 * i + 1]);
        }
        Ready { node, leaves, n }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    #[inline]
    pub fn get(&self, th: usize) -> u64 {
        debug_assert!(th < self.n);
        self.node[self.leaves + th].0
    }

    #[inline]
    pub fn set(&mut self, th: usize, time: u64) {
        assert!(th < self.n, "thread {th} of {}", self.n);
        let mut i = self.leaves + th;
        let mut cur = (time, th as u32);
        self.node[i] = cur;
        while i > 1 {
            cur = cur.min(self.node[i ^ 1]);
            i /= 2;
            if self.node[i] == cur {
                // Unchanged here, so above too.
                break;
            }
            self.node[i] = cur;
        }
    }

    /// The runnable thread with the earliest ready time (ties: lowest id) and the earliest
    /// ready time among the others (how long it may run without yielding).
    #[inline]
    pub fn pick(&self) -> Option<(u64, u32, u64)> {
        let (best, w) = self.node[1];
        if best == u64::MAX {
            return None;
        }
        let mut second = u64::MAX;
        let mut i = self.leaves + w as usize;
        while i > 1 {
            second = second.min(self.node[i ^ 1].0);
            i /= 2;
        }
        Some((best, w, second))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan the tree replaces.
    fn scan(ready: &[u64]) -> Option<(u64, u32, u64)> {
        let mut best = (u64::MAX, u32::MAX);
        let mut second = u64::MAX;
        for (i, &t) in ready.iter().enumerate() {
            if t < best.0 {
                second = best.0;
                best = (t, i as u32);
            } else if t < second {
                second = t;
            }
        }
        (best.0 != u64::MAX).then_some((best.0, best.1, second))
    }

    #[test]
    fn pick_matches_a_scan_of_every_thread_ties_included() {
        for n in [1usize, 2, 3, 5, 8, 39, 75] {
            let mut v: Vec<u64> = (0..n as u64).map(|i| 100 + i % 3).collect();
            let mut r = Ready::new(&v);
            assert_eq!(r.pick(), scan(&v), "n {n} initial");
            // A fixed LCG: times from a small range so ties are common, u64::MAX now and then.
            let mut x: u64 = 12345;
            for step in 0..4000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let th = (x >> 33) as usize % n;
                let t = if (x >> 20).is_multiple_of(7) {
                    u64::MAX
                } else {
                    (x >> 40) % 16
                };
                v[th] = t;
                r.set(th, t);
                assert_eq!(r.pick(), scan(&v), "n {n} step {step}");
                assert_eq!(r.get(th), t);
            }
        }
    }

    #[test]
    fn nothing_runnable_picks_none() {
        let r = Ready::new(&[u64::MAX, u64::MAX, u64::MAX]);
        assert_eq!(r.pick(), None);
        let mut r = Ready::new(&[u64::MAX; 3]);
        r.set(2, 7);
        assert_eq!(r.pick(), Some((7, 2, u64::MAX)));
    }
}
