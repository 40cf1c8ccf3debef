"""
Reading YAML for the collectors: each ``---`` document separately (one bad document
does not hide the others), with the line it starts on, through PyYAML's safe loader.
"""

from __future__ import annotations

import re
from typing import Any

_YAML: Any = None  # (module, loader class), imported when the first YAML file is read


def _yaml() -> Any:
    """PyYAML and its fastest safe loader, imported when the first YAML file is collected."""
    global _YAML
    if _YAML is None:
        import yaml

        _YAML = (yaml, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return _YAML


_SEPARATOR = re.compile(r"^---(?:\s|$)", re.MULTILINE)


class YamlDocument:
    """One document of a YAML stream: its value, first line, text, and load error if any."""

    __slots__ = ("error", "line", "text", "value")

    def __init__(self, value: Any, line: int, text: str, error: str = "") -> None:
        self.value = value
        self.line = line
        self.text = text
        self.error = error

    def line_of(self, needle: str, after: int = 0) -> int:
        """The file line of the first line (past line ``after``) containing ``needle``."""
        for offset, line in enumerate(self.text.splitlines()):
            if self.line + offset > after and needle in line:
                return self.line + offset
        return max(self.line, after)

    def key_line(self, key: str, top_level: bool = False) -> int:
        """
        The file line where mapping key ``key`` is written: the least indented such line
        (at column 0 only, when ``top_level``).
        """
        best, best_indent = self.line, None
        for offset, line in enumerate(self.text.splitlines()):
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            if top_level and indent:
                continue
            if stripped.startswith((f"{key}:", f'"{key}":', f"'{key}':")) and (
                best_indent is None or indent < best_indent
            ):
                best, best_indent = self.line + offset, indent
        return best


def documents(text: str) -> list[YamlDocument]:
    """The documents of ``text``; a malformed one carries its error and a None value."""
    yaml, loader = _yaml()
    starts = [0] + [match.start() for match in _SEPARATOR.finditer(text) if match.start()]
    found = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(text)
        chunk = text[start:end]
        line = text.count("\n", 0, start) + 1
        try:
            value = yaml.load(chunk, Loader=loader)
        except yaml.YAMLError as error:
            problem = str(error).splitlines()[0] if str(error) else type(error).__name__
            mark = getattr(error, "problem_mark", None)
            where = line + mark.line if mark is not None else line
            found.append(YamlDocument(None, where, chunk, problem[:200]))
            continue
        if value is not None:
            found.append(YamlDocument(value, line, chunk))
    return found


def text_of(value: Any) -> str:
    """A scalar as text ('' for mappings, lists and None)."""
    if value is None or isinstance(value, dict | list):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def mapping(value: Any) -> dict:
    """``value`` when it is a mapping, else an empty one."""
    return value if isinstance(value, dict) else {}


def sequence(value: Any) -> list:
    """``value`` when it is a list, else an empty one."""
    return value if isinstance(value, list) else []
