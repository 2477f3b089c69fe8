"""Type stubs of the extension module ``refault._refault`` (crates/py): conversions only."""

from typing import Any, Callable

__all__ = [
    "run",
    "resolve",
    "cli_main",
    "compare",
    "seed_runs",
    "RefaultError",
    "ScenarioError",
    "SimulationError",
    "InvariantError",
    "build_info",
]

class RefaultError(Exception):
    """Base class of every error refault raises."""

class ScenarioError(RefaultError):
    """A scenario (or an override) could not be read or resolved."""

    path: str
    line: int | None
    column: int | None
    kind: str
    message: str
    key: str | None

class SimulationError(RefaultError):
    """The simulation could not run the scenario to its end."""

class InvariantError(SimulationError):
    """A model invariant check failed."""

    event: int
    time_s: float
    message: str

build_info: dict[str, Any]

def run(
    scenario: str,
    is_path: bool,
    overrides: list[tuple[str, str]],
    seed: int | None = None,
    check_every: int = 0,
    origin: str | None = None,
    progress: Callable[[float], object] | None = None,
) -> str:
    """Resolve and simulate; the result JSON. Releases the GIL."""

def resolve(
    scenario: str,
    is_path: bool,
    overrides: list[tuple[str, str]],
    seed: int | None = None,
    origin: str | None = None,
) -> str:
    """The resolved scenario as JSON."""

def compare(sides: str, per_instance: bool = False) -> str:
    """`refault compare`'s table (JSON) of ``[[label, [result, ...]], ...]`` (JSON)."""
    ...

def cli_main(argv: list[str]) -> int | tuple[str, str]:
    """Run the `refault` command line in this process: its exit status, or for `sweep`,
    `plot` and `report` `(command, parsed arguments as JSON)`. Releases the GIL."""
    ...

def seed_runs(docs: str, names: list[str], n: int) -> str:
    """Each result document's recorded scenario under the n - 1 seeds after its own (JSON:
    a list of result documents per input document)."""
    ...
