"""
Turning one file's bytes into index rows: a pure function of (path, bytes, extractor version).

Runs in worker processes, so everything it returns is plain picklable data.
"""

from __future__ import annotations

import hashlib
from typing import Any

from attrs import Factory, frozen

from eshu_mcp.query.local.index.parse.collectors import (
    MAX_COLLECTED_BYTES,
    collect_file,
    collector_for,
)
from eshu_mcp.query.local.index.parse.credentials import (
    credential_reason,
    serving_credential_files,
)
from eshu_mcp.query.local.index.parse.extractors import EXTRACTOR_VERSION, engine_for
from eshu_mcp.query.local.index.parse.languages import (
    is_generated,
    is_parsed_language,
    is_test_path,
    language_of,
)
from eshu_mcp.query.local.index.parse.secrets import find_secrets

MAX_CONTENT_BYTES = 1024 * 1024
"""Files over 1 MiB are recorded with their hash and size but no content (too_large)."""
BINARY_SNIFF_BYTES = 8192
ENTITY_CAP = 10_000


@frozen
class ParsedFile:
    """Everything the store needs to write for one file."""

    relative_path: str
    language: str | None
    content: str
    content_hash: str
    byte_size: int
    line_count: int
    parse_status: str
    parse_errors: int = 0
    is_test: bool = False
    is_generated: bool = False
    entities: list[dict[str, Any]] = Factory(list)
    calls: list[tuple] = Factory(list)
    imports: list[tuple] = Factory(list)
    bases: list[tuple] = Factory(list)
    references: list[tuple] = Factory(list)  # (owner entity index, name, receiver, line)
    secrets: list[tuple] = Factory(list)
    artifact_type: str | None = None  # the local collector that read the file, if any
    facts: list[tuple] = Factory(list)  # (kind, name, line, payload JSON) from that collector
    extractor_version: str = EXTRACTOR_VERSION


def content_hash(data: bytes) -> str:
    """sha256 hex of raw bytes, the files.content_hash and the change detector."""
    return hashlib.sha256(data).hexdigest()


def read_limit(relative_path: str) -> int:
    """
    The most of a file the index reads: what it can keep as content, or, for a file a
    collector reads, what that collector reads (lockfiles). One byte more tells "larger".
    """
    return MAX_COLLECTED_BYTES if collector_for(relative_path) is not None else MAX_CONTENT_BYTES


def fingerprint(data: bytes, byte_size: int | None = None) -> str:
    """
    ``files.content_hash``: the sha256 of the bytes, or, for a file read only in part
    (``byte_size`` beyond ``data``), of its first bytes and its size.
    """
    if byte_size is None or byte_size <= len(data):
        return content_hash(data)
    digest = hashlib.sha256(b"eshu-first-bytes\0%d\0" % byte_size)
    digest.update(data)
    return digest.hexdigest()


def python_module_name(relative_path: str) -> str:
    """Dotted module name of a Python path: 'pkg/sub/mod.py' -> 'pkg.sub.mod'."""
    stem = (
        relative_path.rsplit(".", 1)[0]
        if "." in relative_path.rsplit("/", 1)[-1]
        else relative_path
    )
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts) or stem.rsplit("/", 1)[-1]


def is_credential_file(relative_path: str, data: bytes, language: str | None) -> bool:
    """Whether the file is withheld as a credential file (see :mod:`.credentials`)."""
    if serving_credential_files():
        return False
    return credential_reason(relative_path, data, is_parsed_language(language)) is not None


def parse_file(relative_path: str, data: bytes, byte_size: int | None = None) -> ParsedFile:
    """
    Classify, decode and extract one file (``byte_size``: its size, when ``data`` holds only
    its first bytes, as :func:`read_limit` bounds a read).
    """
    digest = fingerprint(data, byte_size)
    size = max(len(data), byte_size or 0)
    language = language_of(relative_path, data)
    is_test = is_test_path(relative_path)
    generated = is_generated(relative_path, data[:2048])
    common = {
        "relative_path": relative_path,
        "language": language,
        "content_hash": digest,
        "byte_size": size,
        "is_test": is_test,
        "is_generated": generated,
    }
    collector = collector_for(relative_path)
    # withheld files never come back as text, nor as bytes read from disk (binary, too large)
    withhold = (collector is not None and collector.withhold_content) or is_credential_file(
        relative_path, data, language
    )
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        status = "withheld" if withhold else "binary"
        return ParsedFile(content="", line_count=0, parse_status=status, **common)
    text = data.decode("utf-8", "replace") if size <= MAX_CONTENT_BYTES else None
    if collector is not None:
        common["artifact_type"] = collector.artifact_type
        if size <= MAX_COLLECTED_BYTES and size == len(data):
            collected = text if text is not None else data.decode("utf-8", "replace")
            common["facts"] = collect_file(collector, relative_path, collected)
        if collector.claims_by_facts and not common.get("facts"):
            del common["artifact_type"]
    if text is None:
        status = "withheld" if withhold else "too_large"
        return ParsedFile(content="", line_count=0, parse_status=status, **common)
    line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    secrets = [
        (
            s.line_number,
            s.finding_kind,
            s.severity,
            s.redacted_excerpt,
            s.value_hash,
            list(s.suppression_notes),
        )
        for s in find_secrets(relative_path, text)
    ]
    if withhold:
        return ParsedFile(
            content="", line_count=line_count, parse_status="withheld", secrets=secrets, **common
        )
    engine = engine_for(language) if is_parsed_language(language) else None
    if engine is None:
        return ParsedFile(
            content=text, line_count=line_count, parse_status="no_parser", secrets=secrets, **common
        )
    source = text.encode("utf-8") if "\ufffd" in text else data
    extraction = engine.extract(source, ENTITY_CAP, text if text.isascii() else None)
    entities = extraction.entities
    if extraction.module_doc is not None:
        doc, end_line, start_byte, end_byte = extraction.module_doc
        entities.append(
            {
                "entity_type": "Module",
                "entity_name": python_module_name(relative_path),
                "qualified_name": python_module_name(relative_path),
                "start_line": 1,
                "end_line": end_line,
                "start_byte": start_byte,
                "end_byte": end_byte,
                "parent": None,
                "class_context": None,
                "cyclomatic_complexity": None,
                "arg_count": None,
                "signature": None,
                "docstring": doc,
                "metadata": {"docstring": doc},
            }
        )
    if len(entities) > ENTITY_CAP:
        status = "entity_cap"
    elif extraction.parse_errors:
        status = "parse_error"
    else:
        status = "parsed"
    return ParsedFile(
        content=text,
        line_count=line_count,
        parse_status=status,
        parse_errors=extraction.parse_errors,
        entities=entities,
        calls=extraction.calls,
        imports=extraction.imports,
        bases=extraction.bases,
        references=extraction.references,
        secrets=secrets,
        **common,
    )
