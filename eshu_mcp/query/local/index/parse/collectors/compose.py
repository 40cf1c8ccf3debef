"""
Docker Compose files: services, their images, build contexts and Dockerfiles,
``depends_on``, published ports, and the env files they read (names only).
"""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact
from eshu_mcp.query.local.index.parse.collectors.yaml_documents import (
    documents,
    mapping,
    sequence,
    text_of,
)


def _depends_on(value: object) -> list[str]:
    if isinstance(value, dict):
        return [str(name) for name in value]
    return [text_of(name) for name in sequence(value) if text_of(name)]


def _env_files(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    files = []
    for entry in sequence(value):
        path = text_of(mapping(entry).get("path")) if isinstance(entry, dict) else text_of(entry)
        if path:
            files.append(path)
    return files


def collect_compose(relative_path: str, text: str) -> list[Fact]:
    """Facts of one Compose file."""
    facts: list[Fact] = []
    directory = relative_path.rsplit("/", 1)[0] if "/" in relative_path else ""
    for document in documents(text):
        if document.error:
            facts.append(
                Fact("yaml_error", relative_path, document.line, {"error": document.error})
            )
            continue
        services = mapping(mapping(document.value).get("services"))
        for name, raw in services.items():
            service = mapping(raw)
            name = str(name)
            build = service.get("build")
            context, dockerfile = "", ""
            if isinstance(build, str):
                context = build
            elif isinstance(build, dict):
                context = text_of(build.get("context")) or "."
                dockerfile = text_of(build.get("dockerfile"))
            if context:
                base = context.removeprefix("./").rstrip("/")
                joined = f"{directory}/{base}" if directory and base != "." else base
                context_path = "" if joined == "." else joined
                dockerfile_path = "/".join(
                    p for p in (context_path, dockerfile or "Dockerfile") if p
                )
            else:
                context_path, dockerfile_path = "", ""
            image = text_of(service.get("image"))
            payload = {
                "image": image,
                "build_context": context,
                "build_context_path": context_path if context else "",
                "dockerfile": dockerfile_path,
                "depends_on": _depends_on(service.get("depends_on")),
                "ports": [text_of(port) for port in sequence(service.get("ports"))],
                "env_files": _env_files(service.get("env_file")),
                "profiles": [text_of(p) for p in sequence(service.get("profiles"))],
            }
            line = document.key_line(name)
            facts.append(Fact("compose_service", name, line, payload))
            if image:
                role = "builds" if context else "runs"
                facts.append(
                    Fact(
                        "image",
                        image,
                        document.line_of(image),
                        {"source": "compose", "role": role, "service": name},
                    )
                )
    return facts


def is_compose_file(relative_path: str) -> bool:
    """``docker-compose*.yml`` and ``compose*.yaml`` (overrides and per-environment files too)."""
    name = relative_path.rsplit("/", 1)[-1].lower()
    return name.startswith(("docker-compose", "compose.", "compose-")) and name.endswith(
        (".yml", ".yaml")
    )


COMPOSE = Collector("compose", collect_compose, suffixes=(".yml", ".yaml"), accepts=is_compose_file)
