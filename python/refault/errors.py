"""The exceptions refault raises, all defined by the extension module.

- :class:`RefaultError`: base class of everything below.
- :class:`ScenarioError`: a scenario or an override could not be read or resolved; carries
  ``path``, ``line``, ``column`` (1-based, or ``None``), ``kind`` and ``message``, and
  ``str(e)`` is the one-line ``path:line:col: message``.
- :class:`SimulationError`: the simulation could not run the scenario to its end.
- :class:`InvariantError` (a :class:`SimulationError`): a model invariant check failed;
  carries ``event``, ``time_s`` and ``message``.

A scenario file that cannot be opened raises the built-in :class:`FileNotFoundError`,
:class:`PermissionError` or :class:`OSError`, as :func:`open` would.
"""

from ._refault import InvariantError, RefaultError, ScenarioError, SimulationError

__all__ = ["RefaultError", "ScenarioError", "SimulationError", "InvariantError"]
