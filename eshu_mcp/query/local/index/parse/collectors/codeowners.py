"""
CODEOWNERS: ownership rules with GitHub's pattern syntax and precedence.

GitHub reads one CODEOWNERS file per repository, the first of ``.github/CODEOWNERS``,
``CODEOWNERS`` and ``docs/CODEOWNERS`` that exists; inside it the last rule whose pattern
matches a path decides that path's owners (a rule with no owners leaves the path unowned).
Patterns follow gitignore with GitHub's limits: no ``!`` negation, no ``[...]`` ranges, and a
trailing ``/*`` matches only the files directly in that directory.

The collector stores every rule (``owner_rule``) and every line GitHub would reject
(``owner_rule_error``); :func:`compile_pattern` and :func:`owners_for` apply the precedence at
query time, where the repository's other files are known.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact

CODEOWNERS_LOCATIONS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
"""Where GitHub looks, in its order: the first file found is the only one used."""

_OWNER = re.compile(r"^(@[A-Za-z0-9][\w.-]*(/[\w.-]+)?|[^@\s]+@[^@\s]+\.[^@\s]+)$")


def codeowners_rank(relative_path: str) -> int:
    """Position of a CODEOWNERS path in GitHub's search order (lower wins)."""
    return CODEOWNERS_LOCATIONS.index(relative_path)


def _split_fields(line: str) -> list[str]:
    """Whitespace-separated fields, honouring backslash escapes (``\\ `` and ``\\#``)."""
    fields: list[str] = []
    current: list[str] = []
    escaped = False
    for char in line:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in " \t":
            if current:
                fields.append("".join(current))
                current = []
        elif char == "#" and not current:
            break  # a comment starts at a field boundary
        else:
            current.append(char)
    if current:
        fields.append("".join(current))
    return fields


def collect_codeowners(relative_path: str, text: str) -> list[Fact]:
    """One ``owner_rule`` per valid rule, in file order, and one error per rejected line."""
    facts: list[Fact] = []
    order = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = _split_fields(line)
        if not fields:
            continue
        pattern, owners = fields[0], fields[1:]
        problem = _pattern_problem(pattern)
        bad_owners = [owner for owner in owners if not _OWNER.match(owner)]
        if problem is None and bad_owners:
            problem = f"owner {bad_owners[0]!r} is not a @user, @org/team or e-mail address"
        if problem is not None:
            facts.append(Fact("owner_rule_error", pattern, number, {"error": problem}))
            continue
        facts.append(
            Fact(
                "owner_rule",
                pattern,
                number,
                {"order_index": order, "owners": owners, "location": relative_path},
            )
        )
        order += 1
    return facts


def _pattern_problem(pattern: str) -> str | None:
    if pattern.startswith("!"):
        return "negated patterns (!) are not supported in CODEOWNERS"
    if "[" in pattern.replace("\\[", ""):
        return "character ranges ([...]) are not supported in CODEOWNERS"
    return None


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A regular expression matching the repo-relative paths a CODEOWNERS pattern covers."""
    body = pattern
    anchored = body.startswith("/") or "/" in body.rstrip("/")
    body = body.lstrip("/")
    directory_only = body.endswith("/")
    body = body.rstrip("/")
    if body in ("", "**"):
        return re.compile(r"^.*$", re.DOTALL)
    parts: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if body.startswith("**/", i):
            parts.append("(?:.*/)?")
            i += 3
        elif body.startswith("/**", i) and i + 3 == len(body):
            parts.append("/.*")
            i += 3
        elif body.startswith("**", i):
            parts.append(".*")
            i += 2
        elif char == "*":
            parts.append("[^/]*")
            i += 1
        elif char == "?":
            parts.append("[^/]")
            i += 1
        elif char == "\\" and i + 1 < len(body):
            parts.append(re.escape(body[i + 1]))
            i += 2
        else:
            parts.append(re.escape(char))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    last_segment = body.rsplit("/", 1)[-1]
    if directory_only:
        suffix = "/.*"
    elif body.endswith("/**"):
        suffix = ""
    elif "*" in last_segment or "?" in last_segment:
        suffix = "" if anchored else "(?:/.*)?"  # `docs/*` is one level only
    else:
        suffix = "(?:/.*)?"  # a file, or a directory and everything below it
    return re.compile(f"^{prefix}{''.join(parts)}{suffix}$", re.DOTALL)


def owners_for(rules: Sequence[tuple[re.Pattern[str], object]], path: str) -> object | None:
    """The rule value of the last pattern matching ``path`` (GitHub: last match wins)."""
    for compiled, value in reversed(rules):
        if compiled.match(path):
            return value
    return None


def _accepts(relative_path: str) -> bool:
    return relative_path in CODEOWNERS_LOCATIONS


CODEOWNERS_COLLECTOR = Collector(
    artifact_type="codeowners",
    collect=collect_codeowners,
    basenames=frozenset({"codeowners"}),
    accepts=_accepts,
)
