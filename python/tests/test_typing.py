"""The package is typed: the extension's stubs match it (stubtest) and the package passes
mypy --strict. Skipped when mypy is not installed (the `test` extra installs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import refault

pytest.importorskip("mypy", reason="mypy is not installed (pip install mypy pandas-stubs)")


def test_stubs_match_the_extension(tmp_path: Path) -> None:
    p = subprocess.run([sys.executable, "-m", "mypy.stubtest", "refault._refault"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def test_package_passes_mypy_strict(tmp_path: Path) -> None:
    # Check the package's sources (the installed copy is built from them): mypy run on a
    # directory inside site-packages would treat every module there as user code.
    assert (Path(refault.__file__).parent / "py.typed").exists()
    package = Path(__file__).resolve().parents[1] / "refault"
    assert (package / "py.typed").exists()
    p = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports",
                        "--cache-dir", str(tmp_path / "cache"), str(package)],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
