"""
Package manifests and lockfiles: which file name each reader takes, as two collectors.

``package_manifest`` reads what a project declares (``package.json``, ``pyproject.toml``,
``requirements*.txt``, ``go.mod``, ``Cargo.toml``, ``pom.xml``, ``composer.json``);
``package_lockfile`` reads what is pinned (``package-lock.json``, ``npm-shrinkwrap.json``,
``yarn.lock``, ``pnpm-lock.yaml``, ``poetry.lock``, ``uv.lock``, ``go.sum``, ``Cargo.lock``,
``Gemfile.lock``, ``composer.lock``). ``go.mod`` is both: its requirements are the module
graph's pinned versions, so it emits locked facts too.
"""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors import Collect, Collector, Fact
from eshu_mcp.query.local.index.parse.collectors.packages_native import (
    collect_cargo_lock,
    collect_cargo_toml,
    collect_go_mod,
    collect_go_sum,
)
from eshu_mcp.query.local.index.parse.collectors.packages_npm import (
    collect_package_json,
    collect_package_lock,
    collect_pnpm_lock,
    collect_yarn_lock,
)
from eshu_mcp.query.local.index.parse.collectors.packages_other import (
    collect_composer_json,
    collect_composer_lock,
    collect_gemfile_lock,
    collect_pom,
)
from eshu_mcp.query.local.index.parse.collectors.packages_python import (
    collect_poetry_lock,
    collect_pyproject,
    collect_requirements,
    collect_uv_lock,
)

MANIFEST_READERS: dict[str, Collect] = {
    "package.json": collect_package_json,
    "pyproject.toml": collect_pyproject,
    "go.mod": collect_go_mod,
    "cargo.toml": collect_cargo_toml,
    "pom.xml": collect_pom,
    "composer.json": collect_composer_json,
}
LOCKFILE_READERS: dict[str, Collect] = {
    "package-lock.json": collect_package_lock,
    "npm-shrinkwrap.json": collect_package_lock,
    "yarn.lock": collect_yarn_lock,
    "pnpm-lock.yaml": collect_pnpm_lock,
    "poetry.lock": collect_poetry_lock,
    "uv.lock": collect_uv_lock,
    "go.sum": collect_go_sum,
    "cargo.lock": collect_cargo_lock,
    "gemfile.lock": collect_gemfile_lock,
    "composer.lock": collect_composer_lock,
}


def _basename(relative_path: str) -> str:
    return relative_path.rsplit("/", 1)[-1].lower()


def is_requirements_file(relative_path: str) -> bool:
    """``requirements.txt``, ``requirements-dev.txt``, ``requirements/base.txt``..."""
    name = _basename(relative_path)
    if name.startswith("requirements"):
        return True
    return "/requirements/" in "/" + relative_path.lower()


def _collect_manifest(relative_path: str, text: str) -> list[Fact]:
    reader = MANIFEST_READERS.get(_basename(relative_path), collect_requirements)
    return reader(relative_path, text)


def _collect_lockfile(relative_path: str, text: str) -> list[Fact]:
    return LOCKFILE_READERS[_basename(relative_path)](relative_path, text)


def _not_vendored(relative_path: str) -> bool:
    """Manifests inside installed dependency trees describe someone else's package."""
    return "node_modules/" not in relative_path and "/vendor/" not in "/" + relative_path


PACKAGE_MANIFEST_COLLECTOR = Collector(
    artifact_type="package_manifest",
    collect=_collect_manifest,
    basenames=frozenset(MANIFEST_READERS),
    accepts=_not_vendored,
)
REQUIREMENTS_COLLECTOR = Collector(
    artifact_type="package_manifest",
    collect=_collect_manifest,
    suffixes=(".txt", ".in"),
    accepts=is_requirements_file,
)
PACKAGE_LOCKFILE_COLLECTOR = Collector(
    artifact_type="package_lockfile",
    collect=_collect_lockfile,
    basenames=frozenset(LOCKFILE_READERS),
    accepts=_not_vendored,
)
