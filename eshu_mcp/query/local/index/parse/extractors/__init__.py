"""Per-language extractors over tree-sitter grammar wheels, keyed by Eshu's parser keys."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.extractors.core import EXTRACTOR_VERSION, LanguageSpec
from eshu_mcp.query.local.index.parse.extractors.engine import Extraction, LanguageEngine
from eshu_mcp.query.local.index.parse.registry import load_spec

__all__ = ["EXTRACTOR_VERSION", "Extraction", "LanguageEngine", "LanguageSpec", "engine_for"]

_ENGINES: dict[str, LanguageEngine] = {}


def engine_for(language: str) -> LanguageEngine | None:
    """The (cached, per-process) engine for a parser key, or None when none exists.

    The language's extractor module, and so its grammar wheel, is imported on first use.
    """
    engine = _ENGINES.get(language)
    if engine is None:
        spec = load_spec(language)
        if spec is None:
            return None
        engine = _ENGINES[language] = LanguageEngine(spec)
    return engine
