"""Shared fixtures: the repository, the test scenarios, the CLI binary, Chromium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="session")
def root() -> Path:
    """The repository root."""
    return ROOT


@pytest.fixture(scope="session")
def small() -> Path:
    """A ~0.05 s scenario with swap, refaults and a memory cgroup (data/small.toml)."""
    return DATA / "small.toml"


def _cli_candidates() -> list[Path]:
    out = []
    if os.environ.get("REFAULT_BIN"):
        out.append(Path(os.environ["REFAULT_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        out.append(Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "refault")
    out.append(ROOT / "target" / "release" / "refault")
    return out


@pytest.fixture(scope="session")
def cli() -> Path:
    """The release CLI (``cargo build --release -p refault``; ``$REFAULT_BIN`` overrides).

    It must be built from the same sources as the installed extension: scripts/test.sh
    builds both from the same tree."""
    for p in _cli_candidates():
        if p.is_file() and os.access(p, os.X_OK):
            return p
    pytest.skip(
        "no refault CLI binary: run `cargo build --release -p refault` first "
        f"(looked at {', '.join(str(p) for p in _cli_candidates())})"
    )


@pytest.fixture(scope="session")
def chromium() -> str:
    """A headless-capable Chromium (Debian's package ``chromium``)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("Chromium is not installed (apt-get install chromium; scripts/python-setup.sh does)")
