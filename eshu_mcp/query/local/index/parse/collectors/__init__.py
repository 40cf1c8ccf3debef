"""
Local collectors: facts about a repository read from its own non-code files.

Eshu fills its infrastructure, dependency, ownership, CI and documentation families from
collectors running in its cluster. Much of that evidence sits in the repository itself
(CODEOWNERS, package manifests and lockfiles, Terraform, Kubernetes and Compose YAML,
Dockerfiles, CI workflows, documentation), so the indexer reads it in the same build, same
generation and same changed-since as the code: each collector turns one file's text into
:class:`Fact` values, stored in ``artifact_facts`` and dropped with the file's other rows.

A collector is chosen by path alone (:func:`collector_for`, a set lookup and a few suffix
tests per file) so files nobody collects cost nothing. Collectors run in the parser worker
processes: they are pure functions of (path, text) and return plain picklable data.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from attrs import field, frozen

from eshu_mcp.query.local.index.parse.secrets import redact_url_credentials

MAX_COLLECTED_BYTES = 16 * 1024 * 1024
"""Files up to this size are collected even when too large to keep as content (lockfiles)."""
MAX_FACTS_PER_FILE = 20_000
"""A file yielding more facts than this keeps the first ones and a ``facts_capped`` fact."""


@frozen
class Fact:
    """
    One piece of evidence from one file.

    ``kind`` names what it is (``owner_rule``, ``package``, ``tf_resource``, ``image``...),
    ``name`` is what a query looks it up by, ``line`` is its 1-based line in the file (0 when
    the file format has none), ``payload`` the rest, JSON-serialisable.
    """

    kind: str
    name: str
    line: int = 0
    payload: dict = field(factory=dict)


Collect = Callable[[str, str], list[Fact]]
"""A collector: (repo-relative path, file text) -> facts."""


@frozen
class Collector:
    """A named collector and the files it reads."""

    artifact_type: str  # stored in files.artifact_type
    collect: Collect
    basenames: frozenset[str] = frozenset()  # exact file names, lower-cased
    suffixes: tuple[str, ...] = ()  # name endings, lower-cased
    accepts: Callable[[str], bool] | None = None  # a finer path test, after the cheap ones
    withhold_content: bool = False  # the file can hold secrets in clear: keep only its facts
    # A catch-all (any YAML no other collector claims) reads a file as its own only when it
    # finds something there: ``.golangci.yml`` is no Kubernetes manifest.
    claims_by_facts: bool = False


_COLLECTORS: list[Collector] | None = None
_BY_BASENAME: dict[str, list[Collector]] = {}
_BY_SUFFIX: list[tuple[str, Collector]] = []


def _load() -> list[Collector]:
    """Every collector, in precedence order (imported lazily: workers load them once)."""
    global _COLLECTORS
    if _COLLECTORS is None:
        from eshu_mcp.query.local.index.parse.collectors.registry import COLLECTORS

        _COLLECTORS = list(COLLECTORS)
        for collector in _COLLECTORS:
            for name in collector.basenames:
                _BY_BASENAME.setdefault(name, []).append(collector)
            _BY_SUFFIX.extend((suffix, collector) for suffix in collector.suffixes)
    return _COLLECTORS


def collector_for(relative_path: str) -> Collector | None:
    """The collector that reads this path, or None (the common case, decided cheaply)."""
    _load()
    name = relative_path.rsplit("/", 1)[-1].lower()
    for collector in _BY_BASENAME.get(name, ()):
        if collector.accepts is None or collector.accepts(relative_path):
            return collector
    for suffix, collector in _BY_SUFFIX:
        if name.endswith(suffix) and (
            collector.accepts is None or collector.accepts(relative_path)
        ):
            return collector
    return None


def collect_file(collector: Collector, relative_path: str, text: str) -> list[tuple]:
    """
    Run one collector; its facts as ``(kind, name, line, payload JSON)`` rows.

    A collector that fails on a malformed file yields one ``collect_error`` fact naming the
    problem instead of failing the build: the rest of the repository is still indexed.
    Credentials a URL carries (a dependency's ``git+https://user:token@host``, a module
    source's ``?token=``) are redacted before a fact is stored, whatever the file.
    """
    try:
        facts = collector.collect(relative_path, text)
    except Exception as error:  # a bad file must never stop a build
        facts = [Fact("collect_error", relative_path, 0, {"error": _describe(error)})]
    rows = [
        (fact.kind, redact_url_credentials(fact.name), int(fact.line), _payload_json(fact.payload))
        for fact in facts[:MAX_FACTS_PER_FILE]
    ]
    if len(facts) > MAX_FACTS_PER_FILE:
        rows.append(("facts_capped", relative_path, 0, json.dumps({"facts": len(facts)})))
    return rows


def _payload_json(payload: dict) -> str:
    """The payload as stored: JSON, every string in it with URL credentials redacted."""
    encoded = json.dumps(payload, sort_keys=True)
    if "://" not in encoded and "=" not in encoded:
        return encoded  # the common case: nothing a URL credential could hide in
    return json.dumps(_redacted(payload), sort_keys=True)


def _redacted(value):
    if isinstance(value, str):
        return redact_url_credentials(value)
    if isinstance(value, dict):
        return {_redacted(key): _redacted(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(item) for item in value]
    return value


def _describe(error: Exception) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:300]
