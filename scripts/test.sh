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
echo "== cargo test"
cargo test --workspace
echo "== bundled scenarios with invariant checks"
cargo build --release -p refault
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for s in scenarios/*.toml; do
    name=$(basename "$s" .toml)
    # Benchmarks and the S1 scenarios run tens of millions of events: check them less often.
    case "$name" in
        bench-*|s1-*) every=1000000 ;;
        *) every=10000 ;;
    esac
    ./target/release/refault run "$s" --check "$every" --out "$out/$name.json"
done
if [ -d python/tests ] && [ -x scripts/python-setup.sh ]; then
    echo "== python tests"
    scripts/python-setup.sh
    python3 -m pytest -q python/tests
fi
