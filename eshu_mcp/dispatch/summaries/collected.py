"""
Summary lines for the collector-fed families whose rows name no entity: counts by
dimension, inventory buckets, ownership rules, documentation findings, workload
correlations, unused infrastructure and language inventories; and change impact, certain
dependents apart from possible ones. Each row reads as what it
says (``provider aws: 9``, ``.github/CODEOWNERS:4 /services/web/ -> @acme/frontend (3
files)``) instead of its first few ``key=value`` pairs.
"""

from collections.abc import Callable

from eshu_mcp.dispatch.summaries.code import listing
from eshu_mcp.dispatch.summaries.rows import location, row_line, row_lines
from eshu_mcp.dispatch.summaries.text import (
    clamp_line,
    field_map,
    field_rows,
    first_int,
    first_text,
    plural,
)

Lines = list[str]
Family = Callable[[dict], Lines]

SHOWN_PER_DIMENSION = 6
"""Values of one ``by_*`` dimension a count summary names."""


def _counts(noun: str, nouns: str = "") -> Family:
    """``total_*`` as the headline, then each ``by_*`` dimension, largest values first."""

    def build(data: dict) -> Lines:
        totals = [v for k, v in data.items() if k.startswith("total_") and isinstance(v, int)]
        if not totals:
            return []
        lines = [plural(totals[0], noun, nouns)]
        for key, value in data.items():
            if not key.startswith("by_") or not isinstance(value, dict) or not value:
                continue
            counted = sorted(
                ((n, str(k)) for k, n in value.items() if isinstance(n, int)), reverse=True
            )
            shown = ", ".join(f"{k} {n}" for n, k in counted[:SHOWN_PER_DIMENSION])
            left = len(counted) - SHOWN_PER_DIMENSION
            more = f", +{left} more" if left > 0 else ""
            lines.append(clamp_line(f"by {key[3:].replace('_', ' ')}: {shown}{more}"))
        return lines

    return build


def _bucket_line(row: dict) -> str:
    dimension = first_text(row, "dimension").replace("_", " ")
    return clamp_line(f"{dimension} {first_text(row, 'value')}: {first_int(row, 'count')}")


def _owner_line(row: dict) -> str:
    where = location(row, ("source_path", "relative_path"))
    owned = first_int(row, "owned_files")
    text = f"{where} {first_text(row, 'pattern')} -> {first_text(row, 'owner_ref', 'owner')}"
    return clamp_line(text + (f" ({plural(owned, 'file')})" if owned is not None else ""))


def _finding_line(row: dict) -> str:
    where = location({"file_path": first_text(row, "document_id"), "line": first_int(row, "line")})
    state = first_text(field_map(row, "states"), "finding_state")
    kind = first_text(row, "claim_type", "finding_type").replace("_", " ")
    text = f"{where} {kind} {first_text(row, 'claim_text')!r}".strip()
    refs = field_rows(row, "candidate_refs")
    if refs:
        text += f" -> {first_text(refs[0], 'source_uri', 'display_name')}"
    return clamp_line(text + (f": {state}" if state else ""))


def _correlation_line(row: dict) -> str:
    facts = [f for f in row.get("evidence_fact_ids") or () if isinstance(f, str)]
    path = facts[0].rsplit(":", 1)[0] if facts else ""
    where = location({"file_path": path, "line": first_int(row, "line_number")})
    workload = first_text(row, "correlation_id").rsplit(":", 1)[-1]
    image = first_text(row, "image_ref")
    text = " ".join(part for part in (where, workload, f"runs {image}" if image else "") if part)
    reason = first_text(row, "reason")
    return clamp_line(text + (f" ({reason})" if reason else ""))


def _dead_iac_line(row: dict) -> str:
    where = location(row, ("relative_path",))
    finding = first_text(row, "finding").replace("_", " ")
    return clamp_line(f"{where} {first_text(row, 'artifact')}: {finding}")


def _reference_role(reference: dict) -> str:
    """How one file names an image: ``base of stage runtime``, ``run by Deployment api``."""
    role = first_text(reference, "role")
    stage = first_text(reference, "stage")
    if role == "base" and stage:
        return f"base of stage {stage}"
    if role == "copy_from" and stage:
        return f"copied from by stage {stage}"
    owner = first_text(reference, "workload", "service", "job")
    kind = first_text(reference, "workload_kind") or (
        "service" if first_text(reference, "service") else "job" if owner else ""
    )
    verb = {"runs": "run by", "builds": "built by"}.get(role, role)
    text = f"{verb} {kind} {owner}".replace("  ", " ").strip() if owner else verb
    dockerfile = first_text(reference, "dockerfile")
    if dockerfile:
        stage = first_text(reference, "final_stage")
        text += f" from {dockerfile}" + (f" stage {stage}" if stage else "")
    return text


def _identity_line(row: dict) -> str:
    """``Dockerfile:4 gcr.io/distroless/python3 (base of stage runtime)``."""
    where = location(row, ("relative_path",))
    roles = []
    for reference in field_rows(row, "references"):
        role = _reference_role(reference)
        if role not in roles:
            roles.append(role)
    shown = f" ({'; '.join(roles[:3])})" if roles else ""
    return clamp_line(f"{where} {first_text(row, 'image_ref')}{shown}")


def _ci_job_line(row: dict) -> str:
    """``.github/workflows/ci.yml:17 CI/image (on push; builds ghcr.io/acme/api:1.4.0)``."""
    where = location(row, ("relative_path",))
    name = "/".join(p for p in (first_text(row, "workflow"), first_text(row, "job")) if p)
    said = []
    for key, label in (
        ("triggers", "on"),
        ("images_built", "builds"),
        ("images_used", "runs in"),
        ("artifacts", "keeps"),
    ):
        values = [v for v in row.get(key) or () if isinstance(v, str)]
        if values:
            said.append(f"{label} {', '.join(values[:3])}")
    environment = first_text(row, "environment")
    if environment:
        said.append(f"environment {environment}")
    return clamp_line(f"{where} {name}" + (f" ({'; '.join(said)})" if said else ""))


def _infra_end(row: dict, side: str) -> str:
    """``deploy/api.yaml:4 api (Deployment)``: one end of an infrastructure relationship."""
    path = first_text(row, f"{side}_file_path")
    line = first_int(row, f"{side}_start_line")
    where = f"{path}:{line}" if path and line else path
    kind = first_text(row, f"{side}_kind", f"{side}_type")
    name = first_text(row, f"{side}_name")
    text = " ".join(part for part in (where, name if name != path else "") if part)
    return f"{text} ({kind})" if kind else text


def _infra_relationships(data: dict) -> Lines:
    """``analyze_infra_relationships``: the object, then each relationship end to end."""
    outgoing, incoming = field_rows(data, "outgoing"), field_rows(data, "incoming")
    if not outgoing and not incoming:
        return []
    labels = [label for label in data.get("labels") or () if isinstance(label, str)]
    kind = first_text(data, "kind") or (labels[0] if labels else "")
    subject = first_text(data, "name") + (f" ({kind})" if kind else "")
    head = (
        f"{subject}: {plural(len(outgoing), 'outgoing relationship')},"
        f" {plural(len(incoming), 'incoming relationship')}"
    )
    rows = [*outgoing, *incoming]
    return [
        clamp_line(head),
        *row_lines(
            rows,
            lambda row: clamp_line(
                f"{_infra_end(row, 'source')} -{first_text(row, 'type')}->"
                f" {_infra_end(row, 'target')}"
            ),
        ),
    ]


def _doc_fact_line(row: dict) -> str:
    """``docs/guide.md:3 charge (entity mention)``: where a documentation fact was read."""
    path = first_text(row, "source_uri", "relative_path").split("#", 1)[0]
    line = first_int(row, "line", "line_number")
    payload = field_map(row, "payload") or {}
    name = first_text(payload, "title", "heading_text", "mention_text", "document_id")
    kind = first_text(row, "fact_kind").removeprefix("documentation_").replace("_", " ")
    where = f"{path}:{line}" if path and line else path
    text = " ".join(part for part in (where, name) if part)
    return clamp_line(f"{text} ({kind})" if kind else text)


def _group_line(row: dict) -> str:
    kind = first_text(row, "finding_kind").replace("_", " ")
    status = first_text(row, "management_status").replace("_", " ")
    return clamp_line(f"{kind} ({status}): {first_int(row, 'count')}")


def _language_line(row: dict) -> str:
    count = first_int(row, "file_count")
    files = plural(count, "file") if count is not None else ""
    return clamp_line(f"{first_text(row, 'language')}: {files}")


def _rows(key: str, noun: str, nouns: str, render: Callable[[dict], str]) -> Family:
    def build(data: dict) -> Lines:
        rows = field_rows(data, key)
        return listing(data, rows, noun, nouns, render=render) if rows else []

    return build


_BUCKETS = _rows("buckets", "bucket", "", _bucket_line)


def _affected_line(row: dict) -> str:
    """An affected definition, marked when only an ambiguous call links it."""
    return row_line(
        row, "(possible: only through an ambiguous call)" if row.get("possible") else ""
    )


def _impact(data: dict) -> Lines:
    """What depends on a change: the certain first, then the possible, and how many each."""
    rows = field_rows(data, "affected")
    total = first_int(data, "affected_count")
    if total is None:
        return []
    possible = first_int(data, "possibly_affected_count") or 0
    subject = first_text(data, "target")
    head = plural(total, "affected definition")
    if subject:
        head += f" for {subject!r}"
        seeds = first_int(data, "seed_count") or 0
        if seeds > 1:  # a shared name: the rows are the union of what each definition affects
            head += f" ({seeds} definitions of that name, together)"
    depth = first_int(data, "max_depth")
    if depth:
        head += " within 1 hop (direct dependents)" if depth == 1 else f" within {depth} hops"
    if possible:
        head += (
            f": {total - possible} through resolved links, {possible} only through"
            " ambiguous calls (possible)"
        )
    files = first_int(data, "importing_files_count")
    if files:
        head += f"; {plural(files, 'file')} importing them (not counted)"
    offset = first_int(data, "offset")
    if data.get("truncated") is True:
        following = f" or call again with offset={offset + len(rows)}" if offset is not None else ""
        head += f"; more: raise limit{following}"
    return [clamp_line(head), *row_lines(rows, _affected_line)]


def _iac_status(data: dict) -> Lines:
    """One resource's management status: its story, the evidence read, what is missing."""
    finding = field_map(data, "finding") or {}
    status = first_text(data, "management_status") or first_text(finding, "management_status")
    story = first_text(data, "story")
    if not story and not status:
        return []
    head = story or f"{first_text(finding, 'resource_id') or 'resource'}: {status}"
    missing = [item for item in finding.get("missing_evidence") or () if isinstance(item, str)]
    if missing:
        head += "; missing evidence: " + ", ".join(missing)
    action = first_text(finding, "recommended_action")
    if action:
        head += f"; next: {action}"
    evidence = field_rows(finding, "evidence")
    return [
        clamp_line(head),
        *row_lines(evidence, lambda row: row_line(row, first_text(row, "source"))),
    ]


COLLECTED_FAMILIES: dict[str, Family] = {
    "get_iac_management_status": _iac_status,
    "count_infra_resources": _counts("infrastructure resource"),
    "count_package_registry_packages": _counts("package"),
    "count_documentation_findings": _counts("documentation finding"),
    "count_ci_cd_run_correlations": _counts("CI job"),
    "count_container_image_identities": _counts(
        "container image identity", "container image identities"
    ),
    "get_infra_resource_inventory": _BUCKETS,
    "get_package_registry_package_inventory": _BUCKETS,
    "get_ci_cd_run_correlation_inventory": _BUCKETS,
    "get_documentation_finding_inventory": _BUCKETS,
    "list_codeowners_ownership": _rows("ownership", "ownership rule", "", _owner_line),
    "list_documentation_findings": _rows("findings", "finding", "", _finding_line),
    "list_documentation_facts": _rows("facts", "documentation fact", "", _doc_fact_line),
    "list_kubernetes_correlations": _rows("correlations", "correlation", "", _correlation_line),
    "list_container_image_identities": _rows(
        "identities", "container image identity", "container image identities", _identity_line
    ),
    "list_ci_cd_run_correlations": _rows("correlations", "CI job", "", _ci_job_line),
    "find_dead_iac": _rows("findings", "unused infrastructure finding", "", _dead_iac_line),
    "find_unmanaged_resources": _rows("finding_groups", "finding group", "", _group_line),
    "get_repository_language_inventory": _rows("languages", "language", "", _language_line),
    "get_repository_coverage": _rows("languages", "language", "", _language_line),
    "analyze_infra_relationships": _infra_relationships,
    "find_change_surface": _impact,
    "analyze_pre_change_impact": _impact,
}
