"""The exceptions refault raises, all defined by the extension module.

- :class:`RefaultError`: base class of everything below.
- :class:`ScenarioError`: a scenario or an override could not be read or resolved; carries
  ``path``, ``line``, ``column`` (1-based, or ``None``), ``kind``, ``message`` and ``key``,
  and ``str(e)`` is the one-line ``path:line:col: message``. For a dict scenario ``path`` is
  ``<dict>``, ``key`` is where in the dict (``["task"][0]["phase"][0]["access"]``) and the
  message starts with it; for an override ``path`` is ``--set`` and ``key`` the override's
  key. ``key`` is ``None`` for files and TOML text, which have lines.
- :class:`SimulationError`: the simulation could not run the scenario to its end.
- :class:`InvariantError` (a :class:`SimulationError`): a model invariant check failed;
  carries ``event``, ``time_s`` and ``message``.

A scenario file that cannot be opened raises the built-in :class:`FileNotFoundError`,
:class:`IsADirectoryError`, :class:`PermissionError` or :class:`OSError`, as :func:`open`
would; a file that is not UTF-8 is a :class:`ScenarioError` (kind ``io``) at the first bad
byte.
"""

from __future__ import annotations

from ._refault import InvariantError, RefaultError, ScenarioError, SimulationError

__all__ = ["RefaultError", "ScenarioError", "SimulationError", "InvariantError"]

# Errors raised by the core have no `key`; the class attribute is their default.
ScenarioError.key = None


def scenario_error(
    kind: str,
    path: str,
    message: str,
    *,
    line: int | None = None,
    column: int | None = None,
    key: str | None = None,
) -> ScenarioError:
    """A ScenarioError raised by the Python layer, with the attributes the core's have."""
    if line is not None and column is not None:
        text = f"{path}:{line}:{column}: {message}"
    elif line is not None:
        text = f"{path}:{line}: {message}"
    else:
        text = f"{path}: {message}"
    err = ScenarioError(text)
    err.path, err.line, err.column, err.kind, err.message, err.key = (
        path, line, column, kind, message, key,
    )
    return err
