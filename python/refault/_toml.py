"""Scenario dicts as TOML text (written by ``tomli-w``), and positions in that text mapped back
to the dict's keys, so that an error in a dict scenario names the key the user wrote
(``<dict>["task"][0]["phase"][0]["access"]``), not a line of a TOML text nobody sees.

The dict is checked first: keys must be strings and values TOML values (strings, booleans,
64-bit integers, floats, dates and times, lists, dicts); anything else (``None``, a set, an
object) is a :class:`~refault.ScenarioError` naming the key.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Mapping, Union

import tomli_w

from .errors import scenario_error

#: A path into a dict scenario: keys and list indices.
KeyPath = tuple[Union[str, int], ...]

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def format_path(path: KeyPath) -> str:
    """``("task", 0, "name")`` as ``["task"][0]["name"]``."""
    return "".join(f"[{json.dumps(p, ensure_ascii=False)}]" for p in path)


class BadValue(Exception):
    """A value TOML cannot hold, at ``path``."""

    def __init__(self, path: KeyPath, what: str) -> None:
        super().__init__(what)
        self.path = path
        self.what = what


def _plain(value: Any, path: KeyPath) -> Any:
    """``value`` as plain dicts and lists of TOML values; :class:`BadValue` for anything
    TOML cannot hold."""
    if isinstance(value, (bool, str, float, datetime.date, datetime.time)):
        return value
    if isinstance(value, int):
        if not I64_MIN <= value <= I64_MAX:
            raise BadValue(path, f"{value} does not fit in a 64-bit integer")
        return value
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise BadValue(path, f"key {k!r} is not a string")
            out[k] = _plain(v, path + (k,))
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(v, path + (i,)) for i, v in enumerate(value)]
    if value is None:
        raise BadValue(path, "None is not a value (TOML has no null: leave the key out for "
                       "its default)")
    raise BadValue(path, f"a {type(value).__name__} is not a TOML value")


def dumps(d: Mapping[str, Any]) -> str:
    """A scenario dict as TOML text; ScenarioError (naming the key) for what TOML cannot
    hold."""
    try:
        return tomli_w.dumps(_plain(d, ()))
    except BadValue as e:
        where = format_path(e.path)
        raise scenario_error("invalid-value", "<dict>", f"{where}: {e.what}",
                             key=where) from None


def value_literal(value: Any, key: str) -> str:
    """One value as a one-line TOML literal (``4G`` → ``"4G"``, ``[1, 2]``), for an override
    that the core reads with its type; ScenarioError (naming ``--set`` and the key) for
    what has no TOML form."""
    try:
        plain = _plain(value, ())
    except BadValue as e:
        where = key + format_path(e.path)
        raise scenario_error("bad-override", "--set", f"{where}: {e.what}", key=key) from None
    if isinstance(plain, dict):
        raise scenario_error("bad-override", "--set",
                             f"{key}: a table is not a value an override can set", key=key)
    text = tomli_w.dumps({"v": plain}, indent=0).strip()
    # An array is written over several lines; the core takes a one-line value.
    return " ".join(line.strip() for line in text.removeprefix("v = ").splitlines())


class _Scanner:
    """Walks TOML text as tomli-w writes it (headers ``[a.b]`` and ``[[a]]``, ``key = value``
    lines, arrays and inline tables over lines) and records where each key and value starts, with its path."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.marks: list[tuple[int, KeyPath]] = []

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def skip(self, chars: str) -> None:
        while self.i < len(self.s) and self.s[self.i] in chars:
            self.i += 1

    def string(self) -> str:
        start = self.i
        self.i += 1
        while self.i < len(self.s) and self.s[self.i] != '"':
            self.i += 2 if self.s[self.i] == "\\" else 1
        self.i += 1
        try:
            return str(json.loads(self.s[start : self.i]))
        except ValueError:
            return self.s[start + 1 : self.i - 1]

    def key(self) -> str:
        if self.peek() == '"':
            return self.string()
        start = self.i
        while self.i < len(self.s) and (self.s[self.i].isalnum() or self.s[self.i] in "_-"):
            self.i += 1
        return self.s[start : self.i]

    def keyval(self, prefix: KeyPath) -> None:
        self.marks.append((self.i, prefix + (self.key(),)))
        path = self.marks[-1][1]
        self.skip(" =")
        self.value(path)

    def value(self, path: KeyPath) -> None:
        self.marks.append((self.i, path))
        c = self.peek()
        if c == '"':
            self.string()
        elif c == "[":
            self.i += 1
            n = 0
            while True:
                self.skip(" \t\r\n,")
                if self.peek() in ("]", ""):
                    self.i += 1
                    return
                before = self.i
                self.value(path + (n,))
                n += 1
                if self.i == before:  # not text tomli-w writes: step over it
                    self.i += 1
        elif c == "{":
            self.i += 1
            while True:
                self.skip(" ,")
                if self.peek() in ("}", ""):
                    self.i += 1
                    return
                before = self.i
                self.keyval(path)
                if self.i == before:
                    self.i += 1
        else:
            while self.i < len(self.s) and self.s[self.i] not in ",]}\n":
                self.i += 1

    def document(self) -> None:
        prefix: KeyPath = ()
        # Arrays of tables (`[[task]]`) seen so far: concrete path -> elements.
        arrays: dict[KeyPath, int] = {}
        while True:
            self.skip(" \t\r\n")
            if self.i >= len(self.s):
                return
            if self.peek() == "[":
                start = self.i
                double = self.s.startswith("[[", self.i)
                self.i += 2 if double else 1
                keys: list[str] = []
                while self.peek() not in ("]", ""):
                    before = self.i
                    keys.append(self.key())
                    self.skip(" .")
                    if self.i == before:  # not text tomli-w writes: stop scanning
                        return
                self.i += 2 if double else 1
                path: KeyPath = ()
                for n, k in enumerate(keys):
                    path += (k,)
                    last = n == len(keys) - 1
                    if double and last:
                        index = arrays.get(path, 0)
                        arrays[path] = index + 1
                        path += (index,)
                    elif path in arrays:
                        path += (arrays[path] - 1,)
                prefix = path
                self.marks.append((start, prefix))
            else:
                before = self.i
                self.keyval(prefix)
                if self.i == before:
                    return


def key_at(text: str, line: int, column: int) -> KeyPath | None:
    """The path of the innermost key or value of ``text`` (as :func:`dumps` writes it) that
    starts at or before 1-based ``line`` and ``column`` (in characters)."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    offset = sum(len(s) + 1 for s in lines[: line - 1]) + max(column - 1, 0)
    sc = _Scanner(text)
    sc.document()
    best: KeyPath | None = None
    for start, path in sc.marks:
        if start > offset:
            break
        best = path
    return best
