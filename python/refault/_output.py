"""Writing output files without ever clobbering what is not a file.

:func:`write_output` is the one way the package writes a result, a sweep's points and table,
a report or a figure:

- ``-`` is standard output.
- A missing path or a regular file is replaced atomically: a temporary file in the same
  directory (``.NAME.PID.XXXXXXXX.tmp``), flushed, fsynced, renamed over it, so readers see
  the old file or the whole new one.
- A symlink is followed: the rules apply to its target, and the link stays a link.
- Anything else (a device such as ``/dev/null``, a FIFO, a socket) is written through, as
  ``open(path, "w")`` would, and never replaced by a rename.
- A directory is an :class:`IsADirectoryError`.

The temporary file is removed when the write fails or is interrupted (``KeyboardInterrupt``,
or the ``SystemExit``/exception a SIGTERM handler raises: ``python -m refault`` installs one),
and a write removes the temporaries of the same name left by processes that no longer exist
(killed with SIGKILL, say).
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Union

Data = Union[str, bytes]


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once, at import: os.umask can only be read by setting it, which is not thread-safe.
_UMASK = _read_umask()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove ``.NAME.PID.*.tmp`` next to ``path`` whose PID is not a live process; returns
    what was removed."""
    removed: list[Path] = []
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for e in entries:
        if not (e.name.startswith(prefix) and e.name.endswith(".tmp")):
            continue
        pid_text = e.name[len(prefix):].split(".", 1)[0]
        if not pid_text.isdigit() or int(pid_text) == os.getpid() or _pid_alive(int(pid_text)):
            continue
        try:
            os.unlink(e.path)
            removed.append(Path(e.path))
        except FileNotFoundError:
            pass
    return removed


def _as_bytes(data: Data) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _write_through(path: Path, data: bytes) -> None:
    # No O_CREAT: the node exists and is not a regular file; it is never replaced.
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CLOEXEC)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _replace(path: Path, data: bytes) -> None:
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                               dir=path.parent)
    try:
        # mkstemp creates 0600; give the file the mode open() would.
        os.fchmod(fd, 0o666 & ~_UMASK)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_output(path: str | os.PathLike[str], data: Data) -> None:
    """Write ``data`` (text as UTF-8, or bytes) to ``path`` by the rules of this module."""
    if os.fspath(path) == "-":
        out = sys.stdout
        if isinstance(data, bytes):
            out.flush()
            out.buffer.write(data)
            out.buffer.flush()
        else:
            out.write(data)
            out.flush()
        return
    target = Path(path)
    if target.is_symlink():
        # Follow the link (through chains) to what it names; for a dangling link, the
        # missing target is created, so the link stays a link.
        target = Path(os.path.realpath(target))
    try:
        st = os.stat(target)
    except FileNotFoundError:
        _replace(target, _as_bytes(data))
        return
    if stat.S_ISREG(st.st_mode):
        _replace(target, _as_bytes(data))
    elif stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "is a directory, not a file to write", os.fspath(path))
    else:
        _write_through(target, _as_bytes(data))
