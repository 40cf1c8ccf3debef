"""
CI definitions: GitHub Actions workflows and GitLab CI pipelines.

Workflows/pipelines with their triggers (or stages and includes), jobs, the actions they
use and at which ref, the container and service images they run, the images their
steps build (``docker build -t``, ``docker/build-push-action`` tags) and the artifacts
they keep (``actions/upload-artifact``, GitLab ``artifacts:``). These are definitions,
not runs: no outcome, commit or digest is known from the repository.
"""

from __future__ import annotations

import re

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact
from eshu_mcp.query.local.index.parse.collectors.yaml_documents import (
    documents,
    mapping,
    sequence,
    text_of,
)

_BUILD_TAG = re.compile(
    r"\b(?:docker|podman)\s+(?:buildx\s+)?build\b[^\n;&|]*?(?:-t|--tag)[\s=]+"
    r"((?:\$\{\{[^}]*\}\}|[^\s;&|])+)"
)
_PUSH = re.compile(r"\b(?:docker|podman)\s+push\s+((?:\$\{\{[^}]*\}\}|[^\s;&|])+)")
_BUILD_ACTIONS = ("docker/build-push-action",)
_UPLOAD_ACTIONS = ("actions/upload-artifact",)


def _uploaded(step: dict) -> list[str]:
    """The artifact an ``upload-artifact`` step keeps: its name, else its path."""
    given = mapping(step.get("with"))
    name = text_of(given.get("name")) or text_of(given.get("path")).split("\n", 1)[0].strip()
    return [name or "artifact"]


def _gitlab_artifacts(value: object) -> list[str]:
    """A GitLab job's ``artifacts:``: its name, else its paths and report files."""
    artifacts = mapping(value)
    if not artifacts:
        return []
    name = text_of(artifacts.get("name"))
    if name:
        return [name]
    kept = [text_of(path) for path in sequence(artifacts.get("paths")) if text_of(path)]
    for report in mapping(artifacts.get("reports")).values():
        paths = [report] if isinstance(report, str) else sequence(report)
        kept += [text_of(path) for path in paths if text_of(path)]
    return kept


def built_images(script: str) -> list[str]:
    """Image references a shell script builds or pushes."""
    found = []
    for pattern in (_BUILD_TAG, _PUSH):
        for image in pattern.findall(script):
            image = image.strip("\"'")
            if image and image not in found:
                found.append(image)
    return found


def _environment(value: object) -> str:
    if isinstance(value, dict):
        return text_of(value.get("name"))
    return text_of(value)


def _image_name(value: object) -> str:
    if isinstance(value, dict):
        return text_of(value.get("image")) or text_of(value.get("name"))
    return text_of(value)


def _triggers(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [str(key) for key in value]
    return [text_of(item) for item in sequence(value) if text_of(item)]


def collect_github_workflow(relative_path: str, text: str) -> list[Fact]:
    """Facts of one ``.github/workflows/*.yml``."""
    docs = documents(text)
    if not docs or docs[0].error:
        error = docs[0].error if docs else "empty workflow"
        return [Fact("yaml_error", relative_path, docs[0].line if docs else 0, {"error": error})]
    document = docs[0]
    workflow = mapping(document.value)
    stem = relative_path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    title = text_of(workflow.get("name")) or stem
    # YAML 1.1 reads a bare ``on:`` key as the boolean true.
    triggers = _triggers(workflow.get("on", workflow.get(True)))
    jobs = mapping(workflow.get("jobs"))
    facts = [
        Fact(
            "ci_workflow",
            title,
            1,
            {"provider": "github_actions", "triggers": triggers, "jobs": [str(j) for j in jobs]},
        )
    ]
    for job_id, raw in jobs.items():
        job = mapping(raw)
        job_id = str(job_id)
        line = document.key_line(job_id)
        where = {"provider": "github_actions", "workflow": title, "job": job_id}
        actions, built, used, kept = [], [], [], []
        reusable = text_of(job.get("uses"))
        steps = [mapping(step) for step in sequence(job.get("steps"))]
        for step in steps:
            uses = text_of(step.get("uses"))
            if uses:
                action, _, ref = uses.partition("@")
                actions.append(uses)
                step_line = document.line_of(uses, after=line)
                facts.append(Fact("ci_action", action, step_line, {**where, "ref": ref}))
                if action.startswith("docker://"):
                    used.append(action.removeprefix("docker://"))
                if action in _BUILD_ACTIONS:
                    tags = text_of(mapping(step.get("with")).get("tags"))
                    built += [t.strip() for t in re.split(r"[,\n]", tags) if t.strip()]
                if action in _UPLOAD_ACTIONS:
                    kept += _uploaded(step)
            built += built_images(text_of(step.get("run")))
        if reusable:
            action, _, ref = reusable.partition("@")
            actions.append(reusable)
            facts.append(Fact("ci_action", action, line, {**where, "ref": ref, "reusable": True}))
        container = _image_name(job.get("container"))
        if container:
            used.append(container)
        services = [_image_name(svc) for svc in mapping(job.get("services")).values()]
        used += [image for image in services if image]
        payload = {
            **where,
            "stage": "",
            "runs_on": _runs_on(job.get("runs-on")),
            "environment": _environment(job.get("environment")),
            "needs": _triggers(job.get("needs")),
            "triggers": triggers,
            "actions": actions,
            "images_built": built,
            "images_used": used,
            "artifacts": kept,
        }
        facts.append(Fact("ci_job", job_id, line, payload))
        facts += _image_facts(document, where, built, used, after=line)
    return facts


def _runs_on(value: object) -> str:
    if isinstance(value, list):
        return ",".join(text_of(item) for item in value)
    if isinstance(value, dict):
        return text_of(value.get("group")) or ",".join(map(text_of, sequence(value.get("labels"))))
    return text_of(value)


def _image_facts(document, where: dict, built: list[str], used: list[str], after: int = 0):
    facts = []
    for role, images in (("builds", built), ("runs", used)):
        for image in images:
            line = document.line_of(image, after=after)
            facts.append(Fact("image", image, line, {**where, "source": "ci", "role": role}))
    return facts


_GITLAB_RESERVED = frozenset(
    {
        "stages",
        "include",
        "image",
        "services",
        "variables",
        "default",
        "workflow",
        "before_script",
        "after_script",
        "cache",
        "types",
        "pages:deploy",
    }
)


def _includes(value: object) -> list[dict]:
    found = []
    for entry in [value] if isinstance(value, str | dict) else sequence(value):
        if isinstance(entry, str):
            kind = "remote" if entry.startswith(("http://", "https://")) else "local"
            found.append({"kind": kind, "target": entry})
        elif isinstance(entry, dict):
            for kind in ("local", "remote", "template", "component"):
                if text_of(entry.get(kind)):
                    found.append({"kind": kind, "target": text_of(entry.get(kind))})
            if text_of(entry.get("project")):
                files = entry.get("file")
                names = [text_of(f) for f in (files if isinstance(files, list) else [files])]
                for name in names:
                    found.append(
                        {
                            "kind": "project",
                            "target": f"{text_of(entry.get('project'))}:{name}",
                            "project": text_of(entry.get("project")),
                            "ref": text_of(entry.get("ref")),
                        }
                    )
    return found


def _script(value: object) -> str:
    if isinstance(value, list):
        return "\n".join(text_of(line) for line in value)
    return text_of(value)


def collect_gitlab_ci(relative_path: str, text: str) -> list[Fact]:
    """Facts of one ``.gitlab-ci.yml``."""
    docs = documents(text)
    if not docs or docs[0].error:
        error = docs[0].error if docs else "empty pipeline"
        return [Fact("yaml_error", relative_path, docs[0].line if docs else 0, {"error": error})]
    document = docs[0]
    pipeline = mapping(document.value)
    default = mapping(pipeline.get("default"))
    default_image = _image_name(pipeline.get("image")) or _image_name(default.get("image"))
    stages = [text_of(stage) for stage in sequence(pipeline.get("stages"))]
    includes = _includes(pipeline.get("include"))
    jobs = {
        str(name): mapping(body)
        for name, body in pipeline.items()
        if isinstance(name, str)
        and name not in _GITLAB_RESERVED
        and not name.startswith(".")
        and isinstance(body, dict)
    }
    title = relative_path.rsplit("/", 1)[-1]
    workflow = {
        "provider": "gitlab_ci",
        "triggers": [],
        "stages": stages,
        "includes": includes,
        "default_image": default_image,
        "jobs": list(jobs),
    }
    facts = [Fact("ci_workflow", title, 1, workflow)]
    for include in includes:
        facts.append(
            Fact(
                "ci_include",
                include["target"],
                document.line_of(include.get("project") or include["target"]),
                {**include, "provider": "gitlab_ci"},
            )
        )
    for name, job in jobs.items():
        where = {"provider": "gitlab_ci", "workflow": title, "job": name}
        image = _image_name(job.get("image")) or default_image
        used = [image] if image else []
        used += [_image_name(s) for s in sequence(job.get("services")) if _image_name(s)]
        script = "\n".join(_script(job.get(key)) for key in ("before_script", "script"))
        built = built_images(script)
        extends = job.get("extends")
        payload = {
            **where,
            "stage": text_of(job.get("stage")) or "test",
            "runs_on": ",".join(text_of(tag) for tag in sequence(job.get("tags"))),
            "environment": _environment(job.get("environment")),
            "needs": _needs(job.get("needs")),
            "extends": extends if isinstance(extends, list) else ([extends] if extends else []),
            "triggers": _triggers(job.get("only")),
            "actions": [],
            "images_built": built,
            "images_used": used,
            "artifacts": _gitlab_artifacts(job.get("artifacts")),
        }
        line = document.key_line(name, top_level=True)
        facts.append(Fact("ci_job", name, line, payload))
        facts += _image_facts(document, where, built, used, after=line)
    return facts


def _needs(value: object) -> list[str]:
    names = []
    for need in sequence(value):
        name = text_of(mapping(need).get("job")) if isinstance(need, dict) else text_of(need)
        if name:
            names.append(name)
    return names


def is_github_workflow(relative_path: str) -> bool:
    """A workflow file: ``.github/workflows/*.yml`` (at the repository root)."""
    return relative_path.lower().startswith(".github/workflows/")


GITHUB_ACTIONS = Collector(
    "github_actions",
    collect_github_workflow,
    suffixes=(".yml", ".yaml"),
    accepts=is_github_workflow,
)
GITLAB_CI = Collector("gitlab_ci", collect_gitlab_ci, basenames=frozenset({".gitlab-ci.yml"}))
