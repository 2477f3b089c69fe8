#!/usr/bin/env python3
"""Writes the DAMON and perf mem samples of this directory.

DAMON: the recording is built with damo's own classes and written by damo's own writers
(`pip install damo`, tested with damo 3.4.3), in the three forms `damo record` writes:
json_compressed (damo's default, here `damon.data`), json and perf_script. It describes
what DAMON (5 ms sampling, 100 ms aggregation) reports for a program that allocates a
32 MiB heap, writes it all once, then spends 1 s on random accesses to its first 4 MiB,
with a small stack: the hot heap region at 18-20 accesses per aggregation, the cold rest
at 0 with a growing age, DAMON's region splits moving a little from snapshot to snapshot.

perf mem: `perf script -F comm,tid,time,period,event,addr` text of the same program's
sampled loads and stores (the layout perf prints; this host's PMU has no memory events, so
the samples are generated: 40 samples per 100 ms, 90% loads in the hot 4 MiB).

Deterministic (fixed seeds): rerunning it rewrites identical files. An argument names
another output directory (the test that checks damo's current writers against the reader).
"""
import os
import random
import sys

import damo  # noqa: F401  (puts damo's modules on the path)

sys.path.insert(0, os.path.dirname(damo.__file__))
import _damo_records  # noqa: E402
import _damon  # noqa: E402

HERE = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
HEAP = 0x7F3A_0000_0000
STACK = 0x7FFD_C000_0000
MIB = 1 << 20


def damon_records():
    rng = random.Random(17)
    intervals = _damon.DamonIntervals("5ms", "100ms", "1s")
    rec = _damo_records.DamonRecord(None, None, intervals, None, 4242, [])
    t = 1_000_000_000
    for k in range(10):
        split = 4 * MIB + rng.randrange(-8, 9) * 4096
        cold_split = 18 * MIB + rng.randrange(-64, 65) * 4096
        regions = [
            _damon.DamonRegion(HEAP, HEAP + split, rng.choice([18, 19, 20]),
                               _damon.unit_samples, k, _damon.unit_aggr_intervals),
            _damon.DamonRegion(HEAP + split, HEAP + cold_split, 0,
                               _damon.unit_samples, k + 3, _damon.unit_aggr_intervals),
            _damon.DamonRegion(HEAP + cold_split, HEAP + 32 * MIB, 0,
                               _damon.unit_samples, k + 5, _damon.unit_aggr_intervals),
            _damon.DamonRegion(STACK, STACK + 132 * 1024, 20,
                               _damon.unit_samples, k, _damon.unit_aggr_intervals),
        ]
        rec.snapshots.append(_damo_records.DamonSnapshot(t, t + 100_000_000, regions, None))
        t += 100_000_000
    return [rec]


def perf_mem_script():
    rng = random.Random(23)
    lines = []
    t = 13254.0
    for w in range(8):
        for i in range(40):
            t += 0.0025
            if rng.random() < 0.9:
                addr = HEAP + rng.randrange(4 * MIB)
            elif rng.random() < 0.5:
                addr = STACK + rng.randrange(132 * 1024)
            else:
                addr = HEAP + rng.randrange(32 * MIB)
            store = rng.random() < 0.3
            event = "cpu/mem-stores/P:" if store else "cpu/mem-loads,ldlat=30/P:"
            period = rng.choice([2003, 2011]) if store else rng.choice([10007, 10009])
            lines.append("%16s %5d %.6f: %10d %-26s %16x" % ("prog", 21106, t, period, event, addr))
    return "\n".join(lines) + "\n"


def main():
    for kind, name in [("json_compressed", "damon.data"), ("json", "damon.json"),
                       ("perf_script", "damon.perf-script.txt")]:
        err = _damo_records.write_damon_records(damon_records(), os.path.join(HERE, name), kind)
        if err:
            sys.exit("damo: %s" % err)
    with open(os.path.join(HERE, "perf-mem.txt"), "w") as f:
        f.write(perf_mem_script())


if __name__ == "__main__":
    main()
