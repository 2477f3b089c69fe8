"""Progress bars: tqdm when it is installed (``tqdm.auto``, so notebooks get a widget), else
one self-rewriting line on stderr. Shown only where someone is watching: a terminal or a
notebook, unless asked for explicitly."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Protocol


class Bar(Protocol):
    """What callers use of a progress bar."""

    def update(self, n: float) -> None: ...

    def close(self) -> None: ...


def _in_notebook() -> bool:
    # A notebook kernel has imported IPython already; never import it here.
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    shell = ipython.get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def wanted(progress: bool | None) -> bool:
    """``progress`` if given, else whether stderr is a terminal or we run in a notebook."""
    if progress is not None:
        return progress
    return sys.stderr.isatty() or _in_notebook()


class _Null:
    def update(self, n: float) -> None:
        pass

    def close(self) -> None:
        pass


class _Line:
    """``label  3/8 points`` rewritten in place on a terminal, one line per step elsewhere;
    silent until ``delay`` seconds have passed."""

    def __init__(self, total: float, label: str, unit: str, initial: float, delay: float) -> None:
        self.total, self.label, self.unit, self.n = total, label, unit, initial
        self.tty = sys.stderr.isatty()
        self.lock = threading.Lock()
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False

    def update(self, n: float) -> None:
        with self.lock:
            self.n += n
            if time.monotonic() - self.start < self.delay:
                return
            self.shown = True
            if self.unit == "%":
                text = f"{self.label} {self.n:3.0f}%"
            else:
                text = f"{self.label} {self.n:.0f}/{self.total:.0f} {self.unit}"
            if self.tty:
                sys.stderr.write("\r" + text)
            else:
                sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def close(self) -> None:
        if self.tty and self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def bar(total: float, label: str, unit: str, progress: bool | None, initial: float = 0,
        delay: float = 0.0) -> Bar:
    """A progress bar over ``total`` steps of ``unit``, starting at ``initial`` and shown
    once ``delay`` seconds have passed, or one that shows nothing."""
    if not wanted(progress):
        return _Null()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _Line(total, label, unit, initial, delay)
    kwargs: dict[str, Any] = {
        "total": total, "desc": label, "unit": unit, "leave": True, "initial": initial,
        "delay": delay,
    }
    if unit == "%":
        kwargs["bar_format"] = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"
    return tqdm(**kwargs)  # type: ignore[no-any-return]
