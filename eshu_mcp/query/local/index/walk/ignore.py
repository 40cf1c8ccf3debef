"""
gitignore-syntax matching for directories that are not git work trees (``.gitignore`` and
``.eshuignore``): anchoring, ``dir/``, ``*``, ``**``, ``?``, classes and ``!`` negation,
nested files, last match wins. (In git work trees git itself does the matching.)
"""

from __future__ import annotations

import re
from pathlib import Path

from attrs import frozen

from eshu_mcp.query.local.index.walk.reading import read_bounded

MAX_RULES_BYTES = 1024 * 1024
"""An ignore file's first MiB is read; the rest is not (nobody writes a larger one)."""


@frozen
class IgnoreRule:
    """One pattern line, compiled, relative to the directory holding its file."""

    base: str
    regex: re.Pattern[str]
    negated: bool
    directory_only: bool


def _translate(pattern: str) -> str:
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "*":
            if pattern[i : i + 3] == "**/":
                out.append("(?:.*/)?")
                i += 3
                continue
            if pattern[i : i + 2] == "**":
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def parse_rules(text: str, base: str) -> list[IgnoreRule]:
    """Compile the lines of one ignore file located in directory ``base`` ('' = root)."""
    rules = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        body = _translate(line)
        regex = f"^{body}$" if anchored else f"^(?:.*/)?{body}$"
        rules.append(IgnoreRule(base, re.compile(regex), negated, directory_only))
    return rules


def load_rules(root: Path, directory: str) -> list[IgnoreRule]:
    """Rules from ``.gitignore`` and ``.eshuignore`` in one directory of the tree."""
    rules: list[IgnoreRule] = []
    for name in (".gitignore", ".eshuignore"):
        # the repository's own file, not a link out of it, and never more than the cap
        read = read_bounded(str(root / directory / name), MAX_RULES_BYTES)
        if read is not None:
            text = read[0][:MAX_RULES_BYTES].decode("utf-8", "replace")
            rules.extend(parse_rules(text, directory))
    return rules


def is_ignored(rules: list[IgnoreRule], relative_path: str, is_dir: bool) -> bool:
    """Whether the last matching rule (outermost file first) excludes the path."""
    ignored = False
    for rule in rules:
        if rule.directory_only and not is_dir:
            continue
        if rule.base:
            prefix = rule.base + "/"
            if not relative_path.startswith(prefix):
                continue
            local = relative_path[len(prefix) :]
        else:
            local = relative_path
        if rule.regex.match(local):
            ignored = not rule.negated
    return ignored
