from typing import Any

class RefaultError(Exception): ...

class ScenarioError(RefaultError):
    path: str
    line: int | None
    column: int | None
    kind: str
    message: str

class SimulationError(RefaultError): ...

build_info: dict[str, Any]

def run(
    scenario: str,
    is_path: bool,
    overrides: list[tuple[str, str]],
    seed: int | None = None,
    check_every: int = 0,
) -> str: ...
def resolve(
    scenario: str,
    is_path: bool,
    overrides: list[tuple[str, str]],
    seed: int | None = None,
) -> str: ...
