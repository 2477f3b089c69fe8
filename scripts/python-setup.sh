#!/usr/bin/env bash
# Build and install the Python package (the Rust core as the extension refault._refault)
# into the current Python, with what the Python tests need. Idempotent; works without a
# virtualenv (maturin develop needs one, so we build a wheel and install it).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q --disable-pip-version-check "pandas>=2" pytest "maturin>=1.5,<2" 2>&1 \
    | grep -v "Running pip as the 'root' user" || true
rm -rf target/wheels
python3 -m maturin build --release --quiet --skip-auditwheel -o target/wheels
python3 -m pip install -q --disable-pip-version-check --force-reinstall --no-deps target/wheels/refault-*.whl 2>&1 \
    | grep -v "Running pip as the 'root' user" || true
python3 -c "import refault; print('refault', refault.__version__, 'installed for Python')"
