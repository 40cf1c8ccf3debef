"""Go modules (``go.mod``, ``go.sum``) and Cargo (``Cargo.toml``, ``Cargo.lock``)."""

from __future__ import annotations

import tomllib

from eshu_mcp.query.local.index.parse.collectors import Fact
from eshu_mcp.query.local.index.parse.collectors.packages_common import (
    LineFinder,
    declared_fact,
    locked_fact,
    project_fact,
)


def _go_fields(line: str) -> tuple[list[str], str]:
    """A go.mod line's fields and its ``//`` comment."""
    code, _, comment = line.partition("//")
    return code.split(), comment.strip()


def collect_go_mod(relative_path: str, text: str) -> list[Fact]:
    """The module, its requirements (``// indirect`` marks transitive ones) and replacements."""
    facts: list[Fact] = []
    own_id = ""
    block = ""
    replaced: dict[str, str] = {}
    requires: list[tuple[int, str, str, bool]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        fields, comment = _go_fields(raw.strip())
        if not fields:
            continue
        if block:
            if fields[0] == ")":
                block = ""
                continue
            fields = [block, *fields]
        elif fields[-1] == "(" and len(fields) == 2:
            block = fields[0]
            continue
        verb, args = fields[0], fields[1:]
        if verb == "module" and args:
            fact = project_fact("gomod", args[0].strip('"'), "", number)
            own_id = fact.name
            facts.append(fact)
        elif verb == "require" and len(args) >= 2:
            requires.append((number, args[0], args[1], "indirect" in comment.split(";")[0]))
        elif verb == "replace" and "=>" in args:
            arrow = args.index("=>")
            replaced[args[0]] = " ".join(args[arrow + 1 :])
    for number, module, version, indirect in requires:
        if not indirect:  # `// indirect` requirements are pins, not declarations
            facts.append(
                declared_fact(
                    "gomod",
                    module,
                    version,
                    number,
                    declared_by=own_id,
                    replaced_by=replaced.get(module, ""),
                )
            )
        facts.append(
            locked_fact(
                "gomod",
                module,
                version,
                number,
                direct=not indirect,
                replaced_by=replaced.get(module, ""),
            )
        )
    return facts


def collect_go_sum(relative_path: str, text: str) -> list[Fact]:
    """Every module version in the build graph's checksums (``/go.mod``-only lines skipped)."""
    facts = []
    seen = set()
    for number, raw in enumerate(text.splitlines(), start=1):
        fields = raw.split()
        if len(fields) < 3 or fields[1].endswith("/go.mod"):
            continue
        key = (fields[0], fields[1])
        if key in seen:
            continue
        seen.add(key)
        facts.append(locked_fact("gomod", fields[0], fields[1], number, checksum=fields[2]))
    return facts


_CARGO_SECTIONS = (
    ("dependencies", "runtime"),
    ("dev-dependencies", "dev"),
    ("build-dependencies", "build"),
)


def collect_cargo_toml(relative_path: str, text: str) -> list[Fact]:
    """The crate, its workspace members and its dependencies (targets included)."""
    document = tomllib.loads(text)
    finder = LineFinder(text)
    facts: list[Fact] = []
    package = document.get("package") or {}
    workspace = document.get("workspace") or {}
    own_id = ""
    if package.get("name"):
        version = package.get("version")
        fact = project_fact(
            "cargo",
            package["name"],
            version if isinstance(version, str) else "",
            finder.find("name"),
            workspaces=list(workspace.get("members") or ()),
        )
        own_id = fact.name
        facts.append(fact)
    tables = [(section, kind, "", document.get(section) or {}) for section, kind in _CARGO_SECTIONS]
    for target, body in (document.get("target") or {}).items():
        tables += [(s, kind, target, (body or {}).get(s) or {}) for s, kind in _CARGO_SECTIONS]
    tables.append(("workspace.dependencies", "workspace", "", workspace.get("dependencies") or {}))
    for section, kind, target, table in tables:
        finder.cursor = 0
        finder.find(f"{section}]")
        for name, spec in table.items():
            optional = False
            crate = name
            if isinstance(spec, dict):
                optional = bool(spec.get("optional"))
                crate = spec.get("package") or name  # a renamed dependency
                spec = spec.get("version") or spec.get("git") or spec.get("path") or ""
            facts.append(
                declared_fact(
                    "cargo",
                    crate,
                    str(spec),
                    finder.find(f"\n{name} ", f"\n{name}=", f"\n{name}."),
                    kind,
                    declared_by=own_id,
                    optional=optional,
                    target=target,
                )
            )
    return facts


def collect_cargo_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned crates; packages with no ``source`` are the workspace's own (their deps: direct)."""
    document = tomllib.loads(text)
    finder = LineFinder(text)
    packages = document.get("package") or []
    local = {p.get("name") for p in packages if not p.get("source")}
    direct = {
        dep.split()[0]
        for p in packages
        if p.get("name") in local
        for dep in p.get("dependencies") or ()
    }
    facts = []
    for package in packages:
        name = package.get("name") or ""
        if not name or name in local:
            continue
        edges = [(dep.split()[0], "") for dep in package.get("dependencies") or ()]
        facts.append(
            locked_fact(
                "cargo",
                name,
                package.get("version") or "",
                finder.find(f'\nname = "{name}"'),
                direct=name in direct,
                dependencies=edges,
                source=package.get("source") or "",
            )
        )
    return facts
