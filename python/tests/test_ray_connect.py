"""engine="ray" with a cluster that cannot be reached: a clear error in seconds, never a
hang, and SIGTERM still ends a sweep stuck in ray.init."""

from __future__ import annotations

import importlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import refault

sweep_mod = importlib.import_module("refault.sweep")

GRID = {"vm.swappiness": [0, 100]}


def _closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("form", ["ray://127.0.0.1:{port}", "127.0.0.1:{port}"])
def test_refused_address_fails_at_once_naming_it(small: Path, form: str) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (scripts/python-setup.sh --test installs it)")
    address = form.format(port=_closed_port())
    t0 = time.monotonic()
    with pytest.raises(sweep_mod.RayConnectError, match="cannot connect") as e:
        refault.sweep(small, GRID, engine="ray", address=address, progress=False)
    assert time.monotonic() - t0 < 10
    assert address in str(e.value)
    # A ConnectionError: the command line prints it as one error line.
    assert isinstance(e.value, ConnectionError)


class _FakeRay:
    """Stands for the ray module: ``init`` blocks (a cluster that accepts the connection
    and never answers), counting calls."""

    def __init__(self) -> None:
        self.calls = 0

    def init(self, **kwargs: object) -> None:
        self.calls += 1
        time.sleep(3600)


def test_silent_cluster_times_out() -> None:
    # A listening socket that is never accepted from: connecting works, nothing answers.
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        fake = _FakeRay()
        t0 = time.monotonic()
        with pytest.raises(sweep_mod.RayConnectError, match="no answer from ray.init within 1 s"):
            sweep_mod.connect_ray(fake, f"ray://127.0.0.1:{port}", timeout=1.0)
        assert 0.9 < time.monotonic() - t0 < 5
        assert fake.calls == 1


def test_ray_errors_are_kept_and_authentication_is_explained() -> None:
    class Refusing:
        def init(self, **kwargs: object) -> None:
            raise ConnectionError("Authentication failed: the token does not match\nmore noise")

    with pytest.raises(sweep_mod.RayConnectError) as e:
        sweep_mod.connect_ray(Refusing(), "auto", timeout=5)
    msg = str(e.value)
    assert "Authentication failed: the token does not match" in msg
    assert "more noise" not in msg
    assert "RAY_AUTH_TOKEN" in msg


def test_sigterm_ends_a_sweep_stuck_in_ray_init(small: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray", reason="Ray is not installed (scripts/python-setup.sh --test installs it)")
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(8)
        port = srv.getsockname()[1]
        env = dict(os.environ, REFAULT_RAY_TIMEOUT="120")
        p = subprocess.Popen(
            [sys.executable, "-m", "refault", "sweep", str(small), "--grid", "vm.swappiness=0,100",
             "--engine", "ray", "--address", f"127.0.0.1:{port}", "--out", str(tmp_path / "o")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )
        time.sleep(8)  # past importing Ray and the port check: inside ray.init
        assert p.poll() is None
        p.send_signal(signal.SIGTERM)
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            pytest.fail("SIGTERM did not end a sweep waiting in ray.init")
        assert p.returncode == 143, err
        assert "terminated by SIGTERM" in err
