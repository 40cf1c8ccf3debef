"""
Summary lines for the package families: packages, their versions and their dependencies,
each at the manifest line that declares it (``go.mod:8 github.com/spf13/pflag v1.0.9
(gomod, direct)``), so the text names what a bare ``path:line`` would leave out.
"""

from eshu_mcp.dispatch.summaries.code import listing
from eshu_mcp.dispatch.summaries.rows import location
from eshu_mcp.dispatch.summaries.text import clamp_line, field_rows, first_text

Lines = list[str]


def _declared_at(row: dict) -> str:
    """Where the row's package is declared: its own place, or its first evidence's."""
    where = location(row, ("relative_path", "source_path", "file_path"))
    if ":" in where:
        return where
    evidence = field_rows(row, "evidence")
    return (location(evidence[0], ("relative_path",)) if evidence else "") or where


def _version_of(row: dict) -> str:
    """The version the row names, or the first one its evidence locks or declares."""
    version = first_text(row, "version", "dependency_range", "range")
    if version:
        return version
    for item in field_rows(row, "evidence"):
        version = first_text(item, "version", "dependency_range")
        if version:
            return version
    return ""


def _package_line(row: dict) -> str:
    name = first_text(row, "normalized_name", "name", "purl", "package_id")
    facts = [first_text(row, "ecosystem", "package_manager")]
    if row.get("defined_locally") is True:
        facts.append("defined here")
    elif row.get("direct") is True:
        facts.append("direct")
    elif row.get("direct") is False:
        facts.append("transitive")
    return _line(_declared_at(row), f"{name} {_version_of(row)}".strip(), facts)


def _dependency_line(row: dict) -> str:
    source = first_text(row, "source_package_id").rsplit("/", 1)[-1]
    target = first_text(row, "dependency_normalized", "dependency_purl", "dependency_package_id")
    text = f"{source} -> {target}" if source else target
    version = first_text(row, "dependency_range")
    facts = [first_text(row, "dependency_type")]
    if row.get("optional") is True:
        facts.append("optional")
    return _line(_declared_at(row), f"{text} {version}".strip(), facts)


def _version_line(row: dict) -> str:
    name = first_text(row, "purl", "version_id", "bom_ref")
    flags = [key[3:] for key in ("is_deprecated", "is_retracted", "is_yanked") if row.get(key)]
    return _line(_declared_at(row), name, [first_text(row, "package_manager"), *flags])


def _line(where: str, what: str, facts: list[str]) -> str:
    kept = ", ".join(fact for fact in facts if fact)
    return clamp_line(" ".join(p for p in (where, what, f"({kept})" if kept else "") if p))


def _family(key: str, noun: str, nouns: str, render) -> object:
    def build(data: dict) -> Lines:
        return listing(data, field_rows(data, key), noun, nouns, render=render)

    return build


PACKAGE_FAMILIES = {
    "list_package_registry_packages": _family("packages", "package", "", _package_line),
    "list_package_registry_dependencies": _family(
        "dependencies", "dependency", "dependencies", _dependency_line
    ),
    "list_package_registry_versions": _family("versions", "version", "", _version_line),
}
