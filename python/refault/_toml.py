"""A small TOML writer for scenario dicts (tables, arrays of tables, strings, numbers, bools,
arrays). Python has tomllib to read TOML but nothing to write it."""

from __future__ import annotations

import json
from typing import Any, Mapping


def _key(k: str) -> str:
    if k and all(c.isalnum() or c in "_-" for c in k):
        return k
    return json.dumps(k)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _emit(d: Mapping[str, Any], prefix: list[str], out: list[str]) -> None:
    plain = [(k, v) for k, v in d.items() if not isinstance(v, Mapping) and not _is_table_array(v)]
    for k, v in plain:
        out.append(f"{_key(k)} = {_value(v)}")
    for k, v in d.items():
        path = prefix + [_key(k)]
        if isinstance(v, Mapping):
            out.append("")
            out.append("[" + ".".join(path) + "]")
            _emit(v, path, out)
        elif _is_table_array(v):
            for item in v:
                out.append("")
                out.append("[[" + ".".join(path) + "]]")
                _emit(item, path, out)


def dumps(d: Mapping[str, Any]) -> str:
    """Serialize a scenario dict to TOML text."""
    out: list[str] = []
    _emit(d, [], out)
    return "\n".join(out) + "\n"
