"""
Python: ``pyproject.toml`` (PEP 621, Poetry, PEP 735 groups), ``requirements*.txt``,
``poetry.lock`` and ``uv.lock``.
"""

from __future__ import annotations

import re
import tomllib

from eshu_mcp.query.local.index.parse.collectors import Fact
from eshu_mcp.query.local.index.parse.collectors.packages_common import (
    LineFinder,
    declared_fact,
    locked_fact,
    project_fact,
)

_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
    r"(?:\[(?P<extras>[^\]]*)\])?\s*"
    r"(?P<spec>@\s*\S+|[^;]*?)\s*(?:;\s*(?P<marker>.*))?$"
)


def parse_requirement(text: str) -> tuple[str, str, str] | None:
    """A PEP 508 requirement -> ``(name, version specifier or @ url, marker)``."""
    match = _REQUIREMENT.match(text)
    if not match:
        return None
    return match["name"], (match["spec"] or "").strip(), (match["marker"] or "").strip()


def _declare(
    facts: list[Fact],
    finder: LineFinder,
    requirement: str,
    dependency_type: str,
    declared_by: str,
    **extra,
) -> None:
    parsed = parse_requirement(requirement)
    if parsed is None:
        return
    name, spec, marker = parsed
    facts.append(
        declared_fact(
            "pypi",
            name,
            spec,
            finder.find(requirement, f'"{name}'),
            dependency_type,
            declared_by=declared_by,
            marker=marker,
            optional=dependency_type == "optional",
            **extra,
        )
    )


def collect_pyproject(relative_path: str, text: str) -> list[Fact]:
    """The project ``pyproject.toml`` defines and every dependency list in it."""
    document = tomllib.loads(text)
    finder = LineFinder(text)
    facts: list[Fact] = []
    project = document.get("project") or {}
    poetry = (document.get("tool") or {}).get("poetry") or {}
    name = project.get("name") or poetry.get("name") or ""
    own_id = ""
    if name:
        fact = project_fact(
            "pypi",
            name,
            str(project.get("version") or poetry.get("version") or ""),
            finder.find("name"),
        )
        own_id = fact.name
        facts.append(fact)
    for requirement in project.get("dependencies") or ():
        _declare(facts, finder, requirement, "runtime", own_id)
    for group, requirements in (project.get("optional-dependencies") or {}).items():
        for requirement in requirements or ():
            _declare(facts, finder, requirement, "optional", own_id, group=group)
    for group, requirements in (document.get("dependency-groups") or {}).items():
        for requirement in requirements or ():
            if isinstance(requirement, str):  # {include-group = ...} entries name no package
                _declare(facts, finder, requirement, "dev", own_id, group=group)
    for requirement in (document.get("build-system") or {}).get("requires") or ():
        _declare(facts, finder, requirement, "build", own_id)
    _poetry_dependencies(facts, finder, poetry, own_id)
    return facts


def _poetry_dependencies(facts: list[Fact], finder: LineFinder, poetry: dict, own_id: str) -> None:
    tables = [("runtime", "", poetry.get("dependencies") or {})]
    tables.append(("dev", "dev", poetry.get("dev-dependencies") or {}))
    for group, body in (poetry.get("group") or {}).items():
        tables.append(("dev", group, (body or {}).get("dependencies") or {}))
    for dependency_type, group, table in tables:
        for name, spec in table.items():
            if name.lower() == "python":
                continue  # the interpreter constraint, not a package
            marker = ""
            optional = False
            if isinstance(spec, dict):
                marker = str(spec.get("markers") or "")
                optional = bool(spec.get("optional"))
                spec = spec.get("version") or spec.get("git") or spec.get("path") or ""
            facts.append(
                declared_fact(
                    "pypi",
                    name,
                    str(spec),
                    finder.find(f"\n{name} ", f"\n{name}=", f'"{name}"'),
                    "optional" if optional else dependency_type,
                    declared_by=own_id,
                    marker=marker,
                    optional=optional,
                    group=group,
                )
            )


def collect_requirements(relative_path: str, text: str) -> list[Fact]:
    """Requirements files: one declared dependency per requirement line, includes kept."""
    facts: list[Fact] = []
    logical = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not logical:
            start = number
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        entry, logical = logical.strip(), ""
        if not entry:
            continue
        if entry.startswith(("-r ", "--requirement", "-c ", "--constraint")):
            target = entry.split(None, 1)[1] if " " in entry else entry.split("=", 1)[-1]
            facts.append(
                Fact("package_include", target.strip(), start, {"option": entry.split()[0]})
            )
            continue
        editable = entry.startswith(("-e ", "--editable"))
        if entry.startswith("-") and not editable:
            continue  # --index-url, --hash-only lines and other options
        if editable:
            entry = entry.split(None, 1)[1] if " " in entry else ""
            egg = re.search(r"#egg=([A-Za-z0-9._-]+)", entry)
            if egg is None:
                continue  # a local path without a name
            entry = egg.group(1) + " @ " + entry.split("#", 1)[0]
        entry = re.sub(r"\s--hash=\S+", "", entry)
        parsed = parse_requirement(entry)
        if parsed is None:
            continue
        name, spec, marker = parsed
        facts.append(
            declared_fact("pypi", name, spec, start, "runtime", marker=marker, editable=editable)
        )
    return facts


def collect_poetry_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned versions from ``poetry.lock`` (direct ones come from ``pyproject.toml``)."""
    document = tomllib.loads(text)
    finder = LineFinder(text)
    facts = []
    for package in document.get("package") or ():
        name = package.get("name") or ""
        if not name:
            continue
        edges = []
        for dep, spec in (package.get("dependencies") or {}).items():
            if isinstance(spec, dict):
                spec = spec.get("version") or ""
            elif isinstance(spec, list):
                spec = " || ".join(str(s.get("version", "")) for s in spec if isinstance(s, dict))
            edges.append((dep, str(spec)))
        category = package.get("category") or ""
        facts.append(
            locked_fact(
                "pypi",
                name,
                package.get("version") or "",
                finder.find(f'\nname = "{name}"'),
                dependencies=edges,
                dependency_type="dev" if category == "dev" else "",
                optional=bool(package.get("optional")),
            )
        )
    return facts


def collect_uv_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned versions from ``uv.lock``; the project's own entries mark the direct ones."""
    document = tomllib.loads(text)
    finder = LineFinder(text)
    packages = document.get("package") or []
    direct: set[str] = set()
    local: set[str] = set()
    for package in packages:
        source = package.get("source") or {}
        if "editable" in source or "virtual" in source:
            local.add(package.get("name", ""))
            for dep in package.get("dependencies") or ():
                direct.add(dep.get("name", ""))
            for group in (package.get("dev-dependencies") or {}).values():
                direct.update(dep.get("name", "") for dep in group)
            for group in (package.get("optional-dependencies") or {}).values():
                direct.update(dep.get("name", "") for dep in group)
    facts = []
    for package in packages:
        name = package.get("name") or ""
        if not name or name in local:
            continue
        edges = [(dep.get("name", ""), "") for dep in package.get("dependencies") or ()]
        facts.append(
            locked_fact(
                "pypi",
                name,
                package.get("version") or "",
                finder.find(f'\nname = "{name}"'),
                direct=name in direct if local else None,
                dependencies=[edge for edge in edges if edge[0]],
            )
        )
    return facts
