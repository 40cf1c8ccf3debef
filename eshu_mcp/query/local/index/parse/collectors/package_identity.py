"""
Package identities in Eshu's canonical form, so local answers join with registry ones.

``package_id`` is ``<ecosystem>://<registry>/<normalized name>`` (Maven:
``maven://<registry>/<group>:<artifact>``), names normalised per ecosystem (PyPI's PEP 503
folding, lower-cased npm/Cargo/RubyGems/Composer names, Go module paths kept as written),
the registry the ecosystem's default one; ``purl`` is the Package URL of the same identity.
"""

from __future__ import annotations

import re
from typing import Any

DEFAULT_REGISTRY = {
    "npm": "registry.npmjs.org",
    "pypi": "pypi.org/simple",
    "gomod": "proxy.golang.org",
    "maven": "repo.maven.apache.org/maven2",
    "composer": "repo.packagist.org",
    "rubygems": "rubygems.org",
    "cargo": "crates.io",
}

PACKAGE_MANAGER = {
    "npm": "npm",
    "pypi": "pypi",
    "gomod": "gomod",
    "maven": "maven",
    "composer": "composer",
    "rubygems": "rubygems",
    "cargo": "cargo",
}

_PURL_TYPE = {"gomod": "golang", "rubygems": "gem"}
_PYPI_FOLD = re.compile(r"[-_.]+")


def normalize_name(ecosystem: str, name: str, namespace: str = "") -> tuple[str, str]:
    """``(normalized name, namespace)`` by the ecosystem's identity rules."""
    name = name.strip()
    if ecosystem == "npm":
        lowered = name.lower()
        if lowered.startswith("@") and "/" in lowered:
            return lowered, lowered[1:].split("/", 1)[0]
        return lowered, ""
    if ecosystem == "pypi":
        return _PYPI_FOLD.sub("-", name.lower()), ""
    if ecosystem == "gomod":
        return name, name.rsplit("/", 1)[0] if "/" in name else ""
    if ecosystem == "maven":
        return name, namespace.strip()
    if ecosystem == "composer":
        lowered = name.lower()
        return lowered, lowered.split("/", 1)[0] if "/" in lowered else ""
    return name.lower(), ""


def package_identity(
    ecosystem: str, name: str, *, namespace: str = "", package_manager: str = ""
) -> dict[str, Any]:
    """The identity fields of one package (Eshu's ``PackageRegistryPackageResult`` names)."""
    normalized, namespace = normalize_name(ecosystem, name, namespace)
    registry = DEFAULT_REGISTRY.get(ecosystem, "unknown")
    if ecosystem == "maven":
        package_id = f"maven://{registry}/{namespace}:{normalized}"
        path = f"{namespace}/{normalized}"
    else:
        package_id = f"{ecosystem}://{registry}/{normalized}"
        path = "%40" + normalized[1:] if normalized.startswith("@") else normalized
    return {
        "package_id": package_id,
        "ecosystem": ecosystem,
        "registry": registry,
        "namespace": namespace,
        "normalized_name": normalized,
        "raw_name": name,
        "purl": f"pkg:{_PURL_TYPE.get(ecosystem, ecosystem)}/{path}",
        "package_manager": package_manager or PACKAGE_MANAGER.get(ecosystem, ecosystem),
    }
