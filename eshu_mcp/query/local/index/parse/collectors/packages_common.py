"""
The facts every package-manifest and lockfile reader emits, and a cheap line finder.

Three kinds, each named by the package's canonical ``package_id``:

* ``package_project``: the package a manifest itself defines (its name, version, workspaces);
* ``package_dependency``: a dependency a manifest declares (direct by definition), with its
  range, type (``runtime``, ``dev``, ``optional``, ``peer``, ``build``...), marker and the
  project that declares it;
* ``package_locked``: a version a lockfile pins, whether it is direct when the lockfile
  says so (``None`` when only the manifest can tell), and its own dependency edges.
"""

from __future__ import annotations

from typing import Any

from eshu_mcp.query.local.index.parse.collectors import Fact
from eshu_mcp.query.local.index.parse.collectors.package_identity import package_identity

PROJECT = "package_project"
DECLARED = "package_dependency"
LOCKED = "package_locked"


def project_fact(
    ecosystem: str, name: str, version: str, line: int, *, namespace: str = "", **extra: Any
) -> Fact:
    """The package a manifest defines."""
    identity = package_identity(ecosystem, name, namespace=namespace)
    return Fact(PROJECT, identity["package_id"], line, {**identity, "version": version, **extra})


def declared_fact(
    ecosystem: str,
    name: str,
    dependency_range: str,
    line: int,
    dependency_type: str = "runtime",
    *,
    declared_by: str = "",
    namespace: str = "",
    marker: str = "",
    optional: bool = False,
    **extra: Any,
) -> Fact:
    """One declared (direct) dependency."""
    identity = package_identity(ecosystem, name, namespace=namespace)
    payload = {
        **identity,
        "dependency_range": dependency_range.strip(),
        "dependency_type": dependency_type,
        "marker": marker.strip(),
        "optional": optional,
        "declared_by": declared_by,
        **extra,
    }
    return Fact(DECLARED, identity["package_id"], line, payload)


def locked_fact(
    ecosystem: str,
    name: str,
    version: str,
    line: int,
    *,
    direct: bool | None = None,
    dependencies: list[tuple[str, str]] | tuple = (),
    dependency_type: str = "",
    namespace: str = "",
    **extra: Any,
) -> Fact:
    """One pinned version; ``dependencies`` are ``(name, range)`` pairs in the same ecosystem."""
    identity = package_identity(ecosystem, name, namespace=namespace)
    edges = [
        [package_identity(ecosystem, dep)["package_id"], dep_range or ""]
        for dep, dep_range in dependencies
    ]
    payload = {
        **identity,
        "version": str(version).strip(),
        "direct": direct,
        "dependency_type": dependency_type,
        "dependencies": edges,
        **extra,
    }
    return Fact(LOCKED, identity["package_id"], line, payload)


class LineFinder:
    """
    Line numbers of needles in a text, searching forward from the last hit so that a
    lockfile read in order costs one pass; a needle not found ahead is looked for from
    the start once, and 0 means not found.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.cursor = 0
        self._offset = 0
        self._line = 1

    def line_at(self, offset: int) -> int:
        """The 1-based line of ``offset`` (counting on from the previous answer)."""
        if offset < self._offset:
            self._offset, self._line = 0, 1
        self._line += self.text.count("\n", self._offset, offset)
        self._offset = offset
        return self._line

    def find(self, *needles: str) -> int:
        for needle in needles:
            at = self.text.find(needle, self.cursor)
            if at < 0:
                at = self.text.find(needle)
            if at >= 0:
                self.cursor = at + len(needle)
                return self.line_at(at) + (1 if needle.startswith("\n") else 0)
        return 0


def load_yaml(text: str):
    """``yaml.safe_load`` with the C loader when libyaml is there (lockfiles run large).

    PyYAML is imported here, on the first YAML lockfile, so a build without one never
    loads it.
    """
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
