"""npm: ``package.json`` and its lockfiles (``package-lock.json``, ``yarn.lock``, pnpm's)."""

from __future__ import annotations

import json
import re

from eshu_mcp.query.local.index.parse.collectors import Fact
from eshu_mcp.query.local.index.parse.collectors.packages_common import (
    LineFinder,
    declared_fact,
    load_yaml,
    locked_fact,
    project_fact,
)

_DEPENDENCY_SECTIONS = (
    ("dependencies", "runtime"),
    ("devDependencies", "dev"),
    ("optionalDependencies", "optional"),
    ("peerDependencies", "peer"),
)


def collect_package_json(relative_path: str, text: str) -> list[Fact]:
    """The package a ``package.json`` defines and the dependencies it declares."""
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("package.json is not a JSON object")
    finder = LineFinder(text)
    facts: list[Fact] = []
    name = document.get("name")
    own_id = ""
    if isinstance(name, str) and name.strip():
        workspaces = document.get("workspaces")
        if isinstance(workspaces, dict):  # yarn's {"packages": [...]}
            workspaces = workspaces.get("packages")
        fact = project_fact(
            "npm",
            name,
            str(document.get("version") or ""),
            finder.find('"name"'),
            private=bool(document.get("private")),
            workspaces=[w for w in workspaces or () if isinstance(w, str)],
        )
        own_id = fact.name
        facts.append(fact)
    optional = document.get("optionalDependencies")
    optional_names = set(optional) if isinstance(optional, dict) else set()
    for section, dependency_type in _DEPENDENCY_SECTIONS:
        entries = document.get(section)
        if not isinstance(entries, dict):
            continue
        finder.cursor = 0
        finder.find(f'"{section}"')
        for dep, spec in entries.items():
            if section == "dependencies" and dep in optional_names:
                continue  # npm: the optionalDependencies entry wins
            facts.append(
                declared_fact(
                    "npm",
                    dep,
                    str(spec),
                    finder.find(f'"{dep}"'),
                    dependency_type,
                    declared_by=own_id,
                    optional=dependency_type == "optional",
                )
            )
    return facts


def _lock_name(key: str) -> str:
    """``node_modules/a/node_modules/@s/b`` -> ``@s/b``."""
    return key.rsplit("node_modules/", 1)[-1]


def collect_package_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned versions from ``package-lock.json`` (lockfile v1, v2 and v3)."""
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("package-lock.json is not a JSON object")
    finder = LineFinder(text)
    packages = document.get("packages")
    if isinstance(packages, dict):
        return _lock_v2(packages, finder)
    return _lock_v1(document.get("dependencies") or {}, finder, top=True)


def _lock_v2(packages: dict, finder: LineFinder) -> list[Fact]:
    root = packages.get("") or {}
    direct_names = set()
    for section, _ in _DEPENDENCY_SECTIONS:
        direct_names.update((root.get(section) or {}).keys())
    facts: list[Fact] = []
    for key, entry in packages.items():
        if not key or not isinstance(entry, dict) or "node_modules/" not in key:
            continue  # the root project and workspace folders are manifests, not pins
        if entry.get("link"):
            continue  # a workspace symlink: the package is the workspace's own
        name = entry.get("name") or _lock_name(key)
        top_level = key.count("node_modules/") == 1 and key.startswith("node_modules/")
        edges = [
            (dep, str(spec))
            for section in ("dependencies", "optionalDependencies", "peerDependencies")
            for dep, spec in (entry.get(section) or {}).items()
        ]
        facts.append(
            locked_fact(
                "npm",
                name,
                entry.get("version") or "",
                finder.find(f'"{key}"'),
                direct=top_level and name in direct_names,
                dependencies=edges,
                dependency_type="dev" if entry.get("dev") else "",
                resolved=entry.get("resolved") or "",
            )
        )
    return facts


def _lock_v1(dependencies: dict, finder: LineFinder, *, top: bool) -> list[Fact]:
    facts: list[Fact] = []
    for name, entry in dependencies.items():
        if not isinstance(entry, dict):
            continue
        facts.append(
            locked_fact(
                "npm",
                name,
                entry.get("version") or "",
                finder.find(f'"{name}"'),
                direct=None if top else False,
                dependencies=[
                    (dep, str(spec)) for dep, spec in (entry.get("requires") or {}).items()
                ],
                dependency_type="dev" if entry.get("dev") else "",
            )
        )
        facts.extend(_lock_v1(entry.get("dependencies") or {}, finder, top=False))
    return facts


_YARN_ENTRY = re.compile(r'^"?(@?[^@"\s]+)@')


def _yarn_name(selector: str) -> str:
    match = _YARN_ENTRY.match(selector.strip())
    return match.group(1) if match else selector.strip().strip('"')


def collect_yarn_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned versions from ``yarn.lock``, classic (v1) or Berry (YAML) format."""
    facts: list[Fact] = []
    current: dict | None = None
    section = ""

    def flush() -> None:
        if current and current.get("version") and current["name"] != "__metadata":
            facts.append(
                locked_fact(
                    "npm",
                    current["name"],
                    current["version"],
                    current["line"],
                    dependencies=current["deps"],
                )
            )

    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if indent == 0:
            flush()
            first = line.rstrip(":").split(",")[0]
            current = {"name": _yarn_name(first), "line": number, "version": "", "deps": []}
            if "@workspace:" in first or "@link:" in first:
                current = None  # the repository's own packages: their manifests say more
            section = ""
        elif current is None:
            continue
        elif indent == 2:
            key, _, value = line.partition(" ")
            key = key.rstrip(":")
            section = key if not value.strip() else ""
            if key == "version":
                current["version"] = value.strip().strip('"')
        elif indent >= 4 and section in ("dependencies", "optionalDependencies"):
            dep, _, spec = line.partition(" ")
            current["deps"].append((dep.rstrip(":").strip('"'), spec.strip().strip('"')))
    flush()
    return facts


def collect_pnpm_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned versions from ``pnpm-lock.yaml`` (v5 to v9), direct ones from ``importers``."""
    document = load_yaml(text)
    if not isinstance(document, dict):
        raise ValueError("pnpm-lock.yaml is not a YAML mapping")
    importers = document.get("importers") or {".": document}
    direct: dict[str, str] = {}
    for importer in importers.values():
        for section in ("dependencies", "devDependencies", "optionalDependencies"):
            for name, spec in ((importer or {}).get(section) or {}).items():
                version = spec.get("version") if isinstance(spec, dict) else spec
                direct[name] = str(version).split("(")[0]
    finder = LineFinder(text)
    snapshots = document.get("snapshots") or {}
    facts: list[Fact] = []
    for key, entry in (document.get("packages") or {}).items():
        name, version = _pnpm_key(str(key))
        if not name:
            continue
        entry = entry or {}
        edges_from = snapshots.get(key) or entry
        edges = [
            (dep, str(spec))
            for section in ("dependencies", "optionalDependencies")
            for dep, spec in (edges_from.get(section) or {}).items()
        ]
        facts.append(
            locked_fact(
                "npm",
                name,
                entry.get("version") or version,
                finder.find(str(key)),
                direct=direct.get(name) == version,
                dependencies=edges,
                dependency_type="dev" if entry.get("dev") else "",
            )
        )
    return facts


def _pnpm_key(key: str) -> tuple[str, str]:
    """``/@s/a@1.0.0(peer)``, ``/a/1.0.0`` or ``a@1.0.0`` -> ``(name, version)``."""
    key = key.lstrip("/").split("(")[0]
    at = key.rfind("@")
    if at > 0:
        return key[:at], key[at + 1 :]
    slash = key.rfind("/")
    if slash > 0:
        return key[:slash], key[slash + 1 :]
    return "", ""
