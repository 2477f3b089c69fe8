#!/usr/bin/env bash
# Compare refault's speed per access with libCacheSim's plain LRU on the same footprint.
#
# libCacheSim (https://github.com/1a1a11a/libCacheSim, Python bindings `libcachesim` on PyPI)
# is NOT a dependency of the project: this script installs it into its own virtual
# environment under a cache directory (default ~/.cache/refault/libcachesim-venv) and skips
# cleanly (exit 0, one line saying why) when it cannot be installed (offline, no venv module).
#
# The footprint is bench-mixed's (scenarios/bench-mixed.toml): 524,288 distinct 4 KiB pages
# (1 GiB anon + 1 GiB file) accessed uniformly at random, cached in 1 GiB (262,144 pages).
# libCacheSim runs its LRU over an oracleGeneral binary trace of that many uniform accesses
# (written once under the cache directory, from a fixed seed), inside its C core
# (`process_trace`); refault runs bench-mixed itself, which does a whole kernel's reclaim
# (two anon tasks with zram swap, two file readers, kswapd) on the same footprint.
#
# Both sides are timed by CPU time (user + system), not wall time: the host's load swings
# wall time 2x. The runs alternate (refault, libCacheSim, refault, libCacheSim, ...) so both
# see the same host, and each round prints accesses per CPU second and the ratio.
#
#   ./scripts/bench-libcachesim.sh                  # 2 rounds, release binary from cargo
#   ROUNDS=3 REFAULT=target/release/refault ./scripts/bench-libcachesim.sh
#
# Environment: REFAULT (the binary; default target/release/refault, built if missing),
# ROUNDS (default 2), LCS_ACCESSES (libCacheSim trace length, default 10,000,000),
# REFAULT_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/refault), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
ROUNDS=${ROUNDS:-2}
N=${LCS_ACCESSES:-10000000}
CACHE=${REFAULT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/refault}
VENV="$CACHE/libcachesim-venv"
LCS_VERSION=0.3.5
REFAULT=${REFAULT:-target/release/refault}

skip() {
    echo "bench-libcachesim: skipped: $*"
    exit 0
}

mkdir -p "$CACHE"
if ! "$VENV/bin/python" -c "import libcachesim" 2>/dev/null; then
    "$PY" -m venv "$VENV" >/dev/null 2>&1 || skip "cannot create a virtual environment with $PY -m venv"
    "$VENV/bin/pip" install -q "libcachesim==$LCS_VERSION" >/dev/null 2>&1 ||
        skip "cannot install libcachesim==$LCS_VERSION from PyPI (offline?)"
fi
if [ ! -x "$REFAULT" ]; then
    cargo build --release -q -p refault
fi

TRACE="$CACHE/uniform-524288-$N.oracleGeneral"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

"$VENV/bin/python" - "$TRACE" "$N" "$ROUNDS" "$REFAULT" "$WORK" <<'EOF'
import json, os, resource, subprocess, sys, time

import libcachesim as lcs
import numpy as np

trace, n, rounds, refault, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
PAGES = 524288  # bench-mixed: 1 GiB anon + 1 GiB file
CACHE_PAGES = 262144  # bench-mixed: a 1 GiB machine

if not os.path.exists(trace):
    # oracleGeneral: u32 clock time, u64 object id, u32 size, i64 next access (-1: unknown).
    rec = np.dtype([("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")])
    a = np.zeros(n, dtype=rec)
    a["t"] = np.arange(n, dtype=np.uint32)
    a["id"] = np.random.default_rng(1).integers(0, PAGES, n, dtype=np.uint64)
    a["size"] = 4096
    a["next"] = -1
    a.tofile(trace + ".tmp")
    os.replace(trace + ".tmp", trace)


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_refault():
    out = os.path.join(work, "bench-mixed.json")
    before = cpu_children()
    subprocess.run([refault, "run", "scenarios/bench-mixed.toml", "--out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu = cpu_children() - before
    accesses = json.load(open(out))["accesses"]
    return accesses, cpu


def run_lcs():
    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = lcs.LRU(cache_size=CACHE_PAGES * 4096)
    t = time.process_time()
    miss, _ = cache.process_trace(reader)
    return n, time.process_time() - t, miss


print(f"libCacheSim {lcs.__version__ if hasattr(lcs, '__version__') else ''} LRU vs refault "
      f"bench-mixed: {PAGES} pages uniform, cache {CACHE_PAGES} pages; per CPU second")
print(f"{'round':>5} {'refault acc/s':>14} {'LRU acc/s':>12} {'LRU miss':>9} {'refault/LRU':>12}")
for i in range(rounds):
    ra, rc = run_refault()
    la, lc, miss = run_lcs()
    r, l = ra / rc, la / lc
    print(f"{i + 1:>5} {r:>14.0f} {l:>12.0f} {miss:>9.3f} {r / l:>11.2f}x")
EOF
