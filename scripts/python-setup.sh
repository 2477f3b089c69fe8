#!/usr/bin/env bash
# Build the Rust core as the extension `refault._refault` and install the `refault` package
# into the current Python (python3): the `refault` command (every subcommand) and the Python
# API. With --test, also what the Python tests need (the `test` extra and Chromium); the test
# suite (scripts/test.sh) does that in a virtual environment, not in the system Python.
# Idempotent: a second run only rebuilds the extension and reinstalls it.
#
#   ./scripts/python-setup.sh            # the package for users
#   ./scripts/python-setup.sh --test     # and the test tools (as root on Debian: Chromium)
#
# What it does:
# 1. (--test only) Chromium from Debian's packages (`apt-get install chromium`), for the test that opens
#    the HTML report in a headless browser; skipped when chromium is already there, and
#    only a warning when apt-get cannot be used (not root, not Debian): that test then skips.
# 2. Builds a wheel with maturin (`maturin build --release`; `maturin develop` would need a
#    virtualenv, and CI has none) into a temporary directory.
# 3. pip installs the wheel (its dependencies: pandas, matplotlib, tomli-w), with --test its
#    `test` extra too (pytest, tqdm, ray, mypy, pandas-stubs, damo: pyproject.toml is the one
#    list), then force-reinstalls the wheel itself so the fresh extension replaces any older
#    install, editable ones too.
#
# Inside a virtualenv the same steps install into it. Environment: PYTHON (default
# python3), CARGO_TARGET_DIR (honoured by the build), REFAULT_SKIP_APT=1 to skip step 1.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
TEST=0
for arg in "$@"; do
    case "$arg" in
        --test) TEST=1 ;;
        *) echo "python-setup: unknown argument $arg (--test installs the test tools too)" >&2; exit 2 ;;
    esac
done
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1 DEBIAN_FRONTEND=noninteractive
pip() { "$PY" -m pip "$@"; }

"$PY" - <<'EOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"refault's Python package needs Python >= 3.11, this is {sys.version.split()[0]}")
EOF

# 1. Chromium for the report test.
if [ "$TEST" = 0 ]; then
    :
elif command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    :
elif [ "${REFAULT_SKIP_APT:-0}" = 1 ]; then
    echo "python-setup: REFAULT_SKIP_APT=1: not installing chromium (the browser test will skip)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "python-setup: apt-get install chromium"
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium >/dev/null
else
    echo "python-setup: warning: chromium missing and apt-get unusable here (need root on Debian);" \
         "the headless-browser test will skip" >&2
fi

# 2. The wheel.
# The maturin program: next to the interpreter, else on PATH (a virtualenv that sees the
# system's packages has the maturin module but not its program), else installed.
bindir=$(dirname "$PY")
if [ -x "$bindir/maturin" ]; then
    maturin=("$bindir/maturin")
elif command -v maturin >/dev/null 2>&1; then
    maturin=(maturin)
else
    pip install -q "maturin>=1.5,<2"
    if [ -x "$bindir/maturin" ]; then maturin=("$bindir/maturin"); else maturin=("$PY" -m maturin); fi
fi
wheels=$(mktemp -d)
trap 'rm -rf "$wheels"' EXIT
echo "python-setup: maturin build --release"
"${maturin[@]}" build --release --quiet --interpreter "$PY" -o "$wheels"
wheel=$(ls "$wheels"/refault-*.whl)

# 3. Install it with the test dependencies, then make sure this very build is the one in use.
if [ "$TEST" = 1 ]; then
    echo "python-setup: pip install $(basename "$wheel")[test]"
    pip install -q "$wheel[test]"
else
    echo "python-setup: pip install $(basename "$wheel")"
    pip install -q "$wheel"
fi
pip install -q --force-reinstall --no-deps "$wheel"

cd /
"$PY" -c "import refault, refault.plot, refault.report, sysconfig; print('python-setup: refault', refault.__version__, 'installed in', refault.__file__.rsplit('/', 2)[0] + '; the command:', sysconfig.get_path('scripts') + '/refault')"
