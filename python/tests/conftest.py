from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def cli(root: Path) -> Path:
    """The release CLI binary (built once per session)."""
    subprocess.run(
        ["cargo", "build", "--release", "-q", "-p", "refault"], cwd=root, check=True
    )
    return root / "target" / "release" / "refault"
