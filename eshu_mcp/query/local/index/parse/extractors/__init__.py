"""Per-language extractors over tree-sitter grammar wheels, keyed by Eshu's parser keys."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.extractors.core import EXTRACTOR_VERSION, LanguageSpec
from eshu_mcp.query.local.index.parse.extractors.engine import Extraction, LanguageEngine

__all__ = ["EXTRACTOR_VERSION", "Extraction", "LanguageEngine", "LanguageSpec", "engine_for"]

_ENGINES: dict[str, LanguageEngine] = {}


def _specs() -> dict[str, LanguageSpec]:
    from eshu_mcp.query.local.index.parse.extractors import (
        clang,
        ecmascript,
        go,
        managed,
        php,
        python,
        ruby,
        rust,
    )

    return {
        "python": python.SPEC,
        "go": go.SPEC,
        "javascript": ecmascript.JAVASCRIPT,
        "typescript": ecmascript.TYPESCRIPT,
        "tsx": ecmascript.TSX,
        "java": managed.JAVA,
        "c_sharp": managed.CSHARP,
        "c": clang.C,
        "cpp": clang.CPP,
        "rust": rust.SPEC,
        "ruby": ruby.SPEC,
        "php": php.SPEC,
    }


def engine_for(language: str) -> LanguageEngine | None:
    """The (cached, per-process) engine for a parser key, or None when none exists."""
    engine = _ENGINES.get(language)
    if engine is None:
        spec = _specs().get(language)
        if spec is None:
            return None
        engine = _ENGINES[language] = LanguageEngine(spec)
    return engine
