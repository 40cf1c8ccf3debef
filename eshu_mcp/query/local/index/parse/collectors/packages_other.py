"""Maven (``pom.xml``), Bundler (``Gemfile.lock``) and Composer (``composer.json`` and lock)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree

from eshu_mcp.query.local.index.parse.collectors import Fact
from eshu_mcp.query.local.index.parse.collectors.packages_common import (
    LineFinder,
    declared_fact,
    locked_fact,
    project_fact,
)

_PROPERTY = re.compile(r"\$\{([^}]+)\}")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element, name: str):
    for child in element:
        if _local(child.tag) == name:
            return child
    return None


def _text(element, name: str) -> str:
    child = _child(element, name) if element is not None else None
    return (child.text or "").strip() if child is not None else ""


def collect_pom(relative_path: str, text: str) -> list[Fact]:
    """The artifact, its dependencies and managed versions (``${property}`` resolved locally)."""
    root = ElementTree.fromstring(text.encode("utf-8"))
    if _local(root.tag) != "project":
        raise ValueError("pom.xml has no <project> root")
    parent = _child(root, "parent")
    group = _text(root, "groupId") or _text(parent, "groupId")
    version = _text(root, "version") or _text(parent, "version")
    properties = {"project.groupId": group, "project.version": version, "version": version}
    declared_properties = _child(root, "properties")
    for prop in declared_properties if declared_properties is not None else ():
        properties[_local(prop.tag)] = (prop.text or "").strip()

    def resolve(value: str) -> str:
        for _ in range(5):  # properties may name properties; never loop forever
            new = _PROPERTY.sub(lambda m: properties.get(m.group(1), m.group(0)), value)
            if new == value:
                break
            value = new
        return value

    finder = LineFinder(text)
    facts: list[Fact] = []
    artifact = _text(root, "artifactId")
    own_id = ""
    if artifact and group:
        fact = project_fact(
            "maven", artifact, resolve(version), finder.find("<artifactId>"), namespace=group
        )
        own_id = fact.name
        facts.append(fact)
    management = _child(root, "dependencyManagement")
    managed = _child(management, "dependencies") if management is not None else None
    managed_versions = {}
    if managed is not None:
        for dep in managed:
            key = (resolve(_text(dep, "groupId")), resolve(_text(dep, "artifactId")))
            managed_versions[key] = resolve(_text(dep, "version"))
    dependencies = _child(root, "dependencies")
    for dep in dependencies if dependencies is not None else ():
        if _local(dep.tag) != "dependency":
            continue
        dep_group, dep_artifact = resolve(_text(dep, "groupId")), resolve(_text(dep, "artifactId"))
        if not dep_group or not dep_artifact:
            continue
        dep_version = resolve(_text(dep, "version")) or managed_versions.get(
            (dep_group, dep_artifact), ""
        )
        scope = _text(dep, "scope") or "compile"
        facts.append(
            declared_fact(
                "maven",
                dep_artifact,
                dep_version,
                finder.find(f"<artifactId>{_text(dep, 'artifactId')}</artifactId>"),
                "dev" if scope == "test" else scope,
                declared_by=own_id,
                namespace=dep_group,
                optional=_text(dep, "optional") == "true",
                scope=scope,
            )
        )
    return facts


_GEM_SPEC = re.compile(r"^    (\S+) \(([^)]+)\)$")
_GEM_DEP = re.compile(r"^      (\S+)(?: \(([^)]+)\))?$")
_GEM_DIRECT = re.compile(r"^  ([^\s!]+)(?: \(([^)]+)\))?(!)?$")


def collect_gemfile_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned gems from the ``specs:`` sections; ``DEPENDENCIES`` names the direct ones."""
    section = ""
    specs: list[dict] = []
    direct: dict[str, tuple[str, int]] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw and not raw.startswith(" "):
            section = raw.strip()
            continue
        if section in ("GEM", "GIT", "PATH"):
            spec = _GEM_SPEC.match(raw)
            if spec:
                version = spec.group(2).split("-", 1)[0] if "-" in spec.group(2) else spec.group(2)
                specs.append(
                    {"name": spec.group(1), "version": version, "line": number, "deps": []}
                )
                continue
            dep = _GEM_DEP.match(raw)
            if dep and specs:
                specs[-1]["deps"].append((dep.group(1), dep.group(2) or ""))
        elif section == "DEPENDENCIES":
            match = _GEM_DIRECT.match(raw)
            if match:
                direct[match.group(1)] = (match.group(2) or "", number)
    facts: list[Fact] = [
        declared_fact("rubygems", name, spec, line) for name, (spec, line) in direct.items()
    ]
    seen = set()
    for spec in specs:
        if (spec["name"], spec["version"]) in seen:
            continue  # one gem listed for several platforms
        seen.add((spec["name"], spec["version"]))
        facts.append(
            locked_fact(
                "rubygems",
                spec["name"],
                spec["version"],
                spec["line"],
                direct=spec["name"] in direct,
                dependencies=spec["deps"],
            )
        )
    return facts


def _composer_package(name: str) -> bool:
    """Composer's platform requirements (``php``, ``ext-*``) are not packages."""
    return "/" in name


def collect_composer_json(relative_path: str, text: str) -> list[Fact]:
    """The package a ``composer.json`` defines and its ``require``/``require-dev``."""
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("composer.json is not a JSON object")
    finder = LineFinder(text)
    facts: list[Fact] = []
    own_id = ""
    if isinstance(document.get("name"), str) and "/" in document["name"]:
        fact = project_fact(
            "composer", document["name"], str(document.get("version") or ""), finder.find('"name"')
        )
        own_id = fact.name
        facts.append(fact)
    for section, kind in (("require", "runtime"), ("require-dev", "dev")):
        for name, spec in (document.get(section) or {}).items():
            if _composer_package(name):
                facts.append(
                    declared_fact(
                        "composer",
                        name,
                        str(spec),
                        finder.find(f'"{name}"'),
                        kind,
                        declared_by=own_id,
                    )
                )
    return facts


def collect_composer_lock(relative_path: str, text: str) -> list[Fact]:
    """Pinned packages from ``composer.lock`` (``packages`` and ``packages-dev``)."""
    document = json.loads(text)
    if not isinstance(document, dict):
        raise ValueError("composer.lock is not a JSON object")
    finder = LineFinder(text)
    facts = []
    for section, kind in (("packages", ""), ("packages-dev", "dev")):
        for package in document.get(section) or ():
            name = package.get("name") or ""
            if not _composer_package(name):
                continue
            edges = [
                (dep, str(spec))
                for dep, spec in (package.get("require") or {}).items()
                if _composer_package(dep)
            ]
            facts.append(
                locked_fact(
                    "composer",
                    name,
                    str(package.get("version") or "").lstrip("v"),
                    finder.find(f'"name": "{name}"'),
                    dependencies=edges,
                    dependency_type=kind,
                )
            )
    return facts
