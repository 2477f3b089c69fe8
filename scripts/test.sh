#!/usr/bin/env bash
# The whole test suite: formatting, lints, Rust unit/integration tests, every bundled scenario
# under the invariant checker, and (when the Python package is present) the Python tests.
# Works on a fresh machine: it installs what the Python tests need first.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets -- -D warnings
echo "== VM twin prerequisites (QEMU, busybox, Debian's 6.1 cloud kernel; once, cached)"
scripts/vm-setup.sh debian-6.1 >/dev/null \
    || echo "vm-setup failed: the VM twin test will say it is skipped"
echo "== valgrind (the test that records a real program with \`refault record\`)"
if command -v valgrind >/dev/null 2>&1; then
    :
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ -z "${REFAULT_SKIP_APT:-}" ]; then
    { apt-get update -qq && apt-get install -y -qq --no-install-recommends valgrind >/dev/null; } \
        || echo "apt-get install valgrind failed: the lackey recording test will say it is skipped"
else
    echo "valgrind missing and apt-get unusable here: the lackey recording test will say it is skipped"
fi
echo "== release build (for the bundled scenarios and the reproduction tests)"
cargo build --release -p refault
work=$(mktemp -d)
py_pid=
# On any exit: stop the background Python tests if they still run, remove the scratch files.
trap '[ -n "$py_pid" ] && kill "$py_pid" 2>/dev/null; rm -rf "$work"' EXIT
if [ -d python/tests ] && [ -x scripts/python-setup.sh ]; then
    echo "== python package (its tests run beside the Rust tests; their output follows them)"
    # In a virtual environment (target/py-venv), so that the test tools (the `test` extra)
    # stay out of the system Python; it sees the system's packages (maturin, pytest).
    # Without ensurepip (Debian's python3 without python3-venv) the venv borrows the system
    # pip, which installs into the venv all the same.
    venv=target/py-venv
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv --system-site-packages "$venv" 2>/dev/null \
            || { rm -rf "$venv"; python3 -m venv --system-site-packages --without-pip "$venv"; }
    fi
    PYTHON="$PWD/$venv/bin/python" scripts/python-setup.sh --test
    # The Python tests mostly wait on one refault run or one mypy at a time, the Rust tests
    # below keep both CPUs busy only part of the time: side by side the suite ends sooner.
    # They use the release binary and the wheel built above, nothing cargo builds next.
    "$venv/bin/python" -m pytest -q python/tests >"$work/pytest.log" 2>&1 &
    py_pid=$!
fi
echo "== cargo test"
# The `reproduce --quick` tests check the model's results over long runs: they use the release
# binary built just above from the same tree (crates/cli/tests/it/util.rs, results_bin); every
# other test runs the test build with its debug assertions.
REFAULT_RELEASE_BIN="$PWD/target/release/refault" cargo test --workspace
echo "== bundled scenarios with invariant checks"
mkdir "$work/scenarios"
out=$work/scenarios
# One run per CPU at a time (each run is single-threaded and deterministic, so running them
# side by side changes nothing but the wall time); a failed run's output is printed and fails
# the suite once every run has ended.
check_scenario() {
    local s=$1 name every extra=()
    name=$(basename "$s" .toml)
    # Benchmarks and the S1, S2 and S3 scenarios run tens of millions of events: check them
    # less often.
    # S3 (an 8 GiB machine creating 32 GiB of files, 20 minutes simulated) runs its first
    # 400 s: memory fills at about 240 s, so reclaim, the shrinkers and boosting are checked.
    case "$name" in
        bench-*|s1-*|s2-*) every=1000000 ;;
        s3-*) every=1000000; extra=(--set run.duration=400s) ;;
        s4-*) every=100000 ;;
        # 220 s of one memcachetest thread at ~90,000 requests a second: 120 M events (every
        # 10,000: 28 s of CPU; every 100,000: 5 s).
        s0-parallelio) every=100000 ;;
        *) every=10000 ;;
    esac
    if ./target/release/refault run "$s" "${extra[@]}" --check "$every" --out "$out/$name.json" \
        >"$out/$name.log" 2>&1; then
        echo "ok   $name"
    else
        echo "FAIL $name"
        touch "$out/$name.failed"
    fi
}
running() {
    local n=0 p
    for p in "$@"; do kill -0 "$p" 2>/dev/null && n=$((n + 1)); done
    echo "$n"
}
jobs_max=$(nproc 2>/dev/null || echo 2)
pids=()
# The longest runs first, so that the last one to start is a short one.
for s in $(ls scenarios/s1-*.toml scenarios/bench-*.toml 2>/dev/null) \
    $(ls scenarios/*.toml | grep -v -e '/s1-' -e '/bench-'); do
    while [ "$(running "${pids[@]}")" -ge "$jobs_max" ]; do sleep 0.2; done
    check_scenario "$s" &
    pids+=("$!")
done
for p in "${pids[@]}"; do wait "$p" || true; done
failed=$(ls "$out"/*.failed 2>/dev/null || true)
if [ -n "$failed" ]; then
    for f in $failed; do
        name=$(basename "$f" .failed)
        echo "== $name failed:"
        cat "$out/$name.log" 2>/dev/null || true
    done
    exit 1
fi
if [ -n "$py_pid" ]; then
    echo "== python tests"
    py_status=0
    wait "$py_pid" || py_status=$?
    py_pid=
    cat "$work/pytest.log"
    if [ "$py_status" -ne 0 ]; then
        echo "python tests failed (exit $py_status)"
        exit "$py_status"
    fi
fi
