"""
Dockerfiles and Containerfiles: build stages, their base images (with ``ARG`` defaults
substituted), ``COPY --from`` edges between stages, and exposed ports.
"""

from __future__ import annotations

import re

from eshu_mcp.query.local.index.parse.collectors import Collector, Fact

_VARIABLE = re.compile(
    r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)


def logical_lines(text: str):
    """(first line number, instruction text) with ``\\`` continuations joined, comments dropped."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        pending.append(line)
        yield start, " ".join(part for part in pending if part)
        pending = []
    if pending:
        yield start, " ".join(part for part in pending if part)


def substitute(value: str, args: dict[str, str]) -> tuple[str, bool]:
    """``value`` with ``$NAME``/``${NAME:-default}`` replaced; whether all were known."""
    complete = True

    def replace(match: re.Match) -> str:
        nonlocal complete
        name = match.group(1) or match.group(3)
        if name in args and args[name] != "":
            return args[name]
        if match.group(2) is not None:
            return match.group(2)
        complete = False
        return match.group(0)

    return _VARIABLE.sub(replace, value), complete


def _flags(words: list[str]) -> tuple[dict[str, str], list[str]]:
    flags: dict[str, str] = {}
    rest = []
    for word in words:
        if word.startswith("--") and not rest:
            key, _, value = word[2:].partition("=")
            flags[key.lower()] = value
        else:
            rest.append(word)
    return flags, rest


def collect_dockerfile(relative_path: str, text: str) -> list[Fact]:
    """Facts of one Dockerfile."""
    facts: list[Fact] = []
    global_args: dict[str, str] = {}
    stage_args: dict[str, str] = {}
    stages: list[str] = []
    stage: dict | None = None
    for line, instruction in logical_lines(text):
        keyword, _, rest = instruction.partition(" ")
        keyword = keyword.upper()
        words = rest.split()
        if keyword == "ARG" and words:
            for word in words:
                name, _, default = word.partition("=")
                default = default.strip("\"'")
                (global_args if stage is None else stage_args)[name] = default
        elif keyword == "FROM" and words:
            flags, operands = _flags(words)
            if not operands:
                continue
            raw_image = operands[0]
            alias = operands[2] if len(operands) >= 3 and operands[1].upper() == "AS" else ""
            image, resolved = substitute(raw_image, global_args)
            index = len(stages)
            from_stage = image if image in stages else ""
            stage = {
                "stage_index": index,
                "stage_name": alias,
                "base_image": image,
                "base_image_raw": raw_image,
                "base_stage": from_stage,
                "resolved": resolved,
                "platform": flags.get("platform", ""),
                "exposed_ports": [],
                "copies_from": [],
            }
            stage_args = {}
            stages.append(alias or str(index))
            facts.append(Fact("docker_stage", alias or str(index), line, stage))
            if not from_stage and image.lower() != "scratch":
                facts.append(
                    Fact(
                        "image",
                        image,
                        line,
                        {"source": "dockerfile", "role": "base", "stage": alias or str(index)},
                    )
                )
        elif stage is None:
            continue
        elif keyword == "EXPOSE":
            args = {**global_args, **stage_args}
            for word in words:
                port, _complete = substitute(word, args)
                stage["exposed_ports"].append(port)
                facts.append(Fact("docker_expose", port, line, {"stage": stages[-1]}))
        elif keyword in ("COPY", "ADD"):
            flags, _operands = _flags(words)
            source = flags.get("from", "")
            if source:
                internal = source in stages
                stage["copies_from"].append(source)
                facts.append(
                    Fact(
                        "docker_copy_from",
                        source,
                        line,
                        {"stage": stages[-1], "from_stage": internal},
                    )
                )
                if not internal and not source.isdigit():
                    payload = {"source": "dockerfile", "role": "copy_from", "stage": stages[-1]}
                    facts.append(Fact("image", source, line, payload))
    return facts


DOCKERFILE = Collector(
    "dockerfile",
    collect_dockerfile,
    basenames=frozenset({"dockerfile", "containerfile"}),
    suffixes=(".dockerfile", ".containerfile"),
)
"""Exact names and ``*.Dockerfile``; ``Dockerfile.*`` is matched by :data:`DOCKERFILE_VARIANT`."""


def _is_variant(relative_path: str) -> bool:
    name = relative_path.rsplit("/", 1)[-1].lower()
    return name.startswith(("dockerfile.", "containerfile.")) and not name.endswith(
        (".md", ".txt", ".rst")
    )


DOCKERFILE_VARIANT = Collector(
    "dockerfile", collect_dockerfile, suffixes=("",), accepts=_is_variant
)
"""``Dockerfile.prod``: a name prefix, so tested after every suffix (one string test per file)."""
