"""Output files: never replace a device, a FIFO or a symlink by a rename; `-` is stdout;
no temporary file left behind by an interrupted write or a killed process."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import refault
from refault import plot
from refault.report import report


@pytest.fixture(scope="module")
def result(small: Path) -> refault.Result:
    return refault.run(small, {"run.duration": "200ms"})


def _no_temporaries(d: Path) -> None:
    assert not [p.name for p in d.iterdir() if p.name.startswith(".")], "temporary files left"


def test_a_symlink_stays_a_link_and_its_target_is_written(result: refault.Result,
                                                           tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    result.save(link)
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["vmstat"] == result.vmstat
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "new.json")
    result.save(dangling)
    assert dangling.is_symlink() and (tmp_path / "new.json").is_file()
    _no_temporaries(tmp_path)


def test_a_fifo_is_written_through_not_replaced(result: refault.Result, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result.save(fifo)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    reader.join(timeout=30)
    assert got and json.loads(got[0])["vmstat"] == result.vmstat
    _no_temporaries(tmp_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_a_device_node_is_written_through_not_replaced(result: refault.Result,
                                                       tmp_path: Path) -> None:
    # A private /dev/null (major 1, minor 3): what `--out /dev/null` did to the real one.
    null = tmp_path / "null"
    os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    result.save(null)
    fig = result.plot("memory")
    plot.save(fig, null)
    report([result], null, plots=False)
    st = os.lstat(null)
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
    _no_temporaries(tmp_path)


def test_dash_is_stdout(result: refault.Result, capsys: pytest.CaptureFixture[str]) -> None:
    result.save("-")
    assert json.loads(capsys.readouterr().out)["vmstat"] == result.vmstat
    assert not Path("-").exists()


def test_a_directory_is_refused(result: refault.Result, tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        result.save(tmp_path)


def test_an_interrupted_write_leaves_no_temporary(result: refault.Result, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(fd: int) -> None:
        raise KeyboardInterrupt

    (tmp_path / "r.json").write_text("old")
    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        result.save(tmp_path / "r.json")
    assert (tmp_path / "r.json").read_text() == "old"
    _no_temporaries(tmp_path)


def test_temporaries_of_dead_processes_are_removed(result: refault.Result, tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f".r.json.{dead.stdout.strip()}.abcd1234.tmp"
    stale.write_text("partial")
    live = tmp_path / f".r.json.{os.getppid()}.abcd1234.tmp"  # a live process's write
    live.write_text("partial")
    result.save(tmp_path / "r.json")
    assert not stale.exists() and live.exists()


def test_cli_plot_and_report_to_stdout(result: refault.Result, tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    result.save(path)
    for cmd in (["plot", str(path), "-o", "-"], ["report", str(path), "-o", "-", "--no-plots"]):
        p = subprocess.run([sys.executable, "-m", "refault", *cmd], capture_output=True,
                           check=True, cwd=tmp_path)
        assert p.stdout.startswith(b"\x89PNG") or b"<html" in p.stdout
    assert not (tmp_path / "-").exists()


def test_sched_lists_every_thread_with_its_cpu_time(result: refault.Result) -> None:
    df = result.sched
    assert list(df["name"])[-3:] == ["kswapd0", "flusher", "kcompactd0"]
    assert (df["cpu_seconds"] >= 0).all() and (df["runqueue_wait_seconds"] >= 0).all()
    assert df["cpu_seconds"].sum() > 0
