"""DAMON recordings made by the damo package (the `test` extra installs it) read as the
checked-in samples do: examples/traces/make-samples.py writes the three forms `damo record`
writes with damo's own writers, and `refault trace convert` gives the same refault trace as
from the samples in examples/traces (issue 17: a reader tested on a recording made with damo).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "traces"


def refault(*args: str) -> subprocess.CompletedProcess[str]:
    """The package's `refault` command (the Rust subcommands run in-process)."""
    return subprocess.run([sys.executable, "-c", "from refault.cli import entry; entry()", *args],
                          capture_output=True, text=True, timeout=300)


def convert(src: Path, out: Path) -> bytes:
    p = refault("trace", "convert", str(src), str(out))
    assert p.returncode == 0, p.stderr
    return out.read_bytes()


@pytest.mark.parametrize("name", ["damon.data", "damon.json", "damon.perf-script.txt"])
def test_damo_recordings_convert_like_the_samples(name: str, tmp_path: Path) -> None:
    pytest.importorskip("damo")
    made = tmp_path / "made"
    made.mkdir()
    p = subprocess.run([sys.executable, str(EXAMPLES / "make-samples.py"), str(made)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    new = convert(made / name, tmp_path / "new.rft")
    old = convert(EXAMPLES / name, tmp_path / "old.rft")
    assert len(new) > 100
    assert new == old, f"{name}: damo's writers and the checked-in sample differ"


def test_a_malformed_damon_recording_is_one_positioned_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    text = (EXAMPLES / "damon.json").read_text()
    bad.write_text(text[: len(text) // 2])
    p = refault("trace", "convert", str(bad), str(tmp_path / "o.rft"))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "bad.json" in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
