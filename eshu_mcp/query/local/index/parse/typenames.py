"""
Python type expressions as the resolver uses them: an annotation as written, reduced to the
one dotted class name it promises (``Optional[defer.Deferred[int]]`` -> ``defer.Deferred``),
and the return annotation read back from a stored signature. A call result is written
``callee()`` (``defer.maybeDeferred()``): its type is the callee's class or return type.
"""

from __future__ import annotations

import re

_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CHAIN = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(\)(?:\.[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\(\))*"
)
_OPTIONAL_WRAPPERS = frozenset({"Optional", "typing.Optional", "Final", "typing.Final"})
_UNIONS = frozenset({"Union", "typing.Union"})
_NOT_A_CLASS = frozenset(
    {"None", "Any", "typing.Any", "object", "Type", "type", "typing.Type", "Callable"}
)


def annotation_type(annotation: str | None) -> str | None:
    """The single dotted class name an annotation promises, or None when it promises none."""
    if not annotation:
        return None
    text = annotation.strip()
    if len(text) > 1 and text[0] in "'\"" and text[-1] == text[0]:
        text = text[1:-1].strip()
    members = [m.strip() for m in _split_top(text, "|")] if "|" in text else ()
    if len(members) > 1:
        kept = [m for m in members if m != "None"]
        return annotation_type(kept[0]) if len(kept) == 1 else None
    head, _, rest = text.partition("[")
    head = head.strip()
    if rest:
        inner = rest[: rest.rfind("]")] if "]" in rest else rest
        if head in _OPTIONAL_WRAPPERS:
            return annotation_type(inner)
        if head in _UNIONS:
            kept = [m for m in _split_top(inner, ",") if m.strip() != "None"]
            return annotation_type(kept[0]) if len(kept) == 1 else None
    match = _DOTTED.fullmatch(head)
    if match is None or head in _NOT_A_CLASS or head.startswith("typing."):
        return None
    return head


def _split_top(text: str, separator: str) -> list[str]:
    """Split on ``separator`` outside brackets."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def returned_type(signature: str | None) -> str | None:
    """The class a Python function's stored signature says it returns."""
    if not signature or "->" not in signature:
        return None
    _, arrow, annotation = signature.rpartition(") ->")
    return annotation_type(annotation) if arrow else None


def is_dotted(text: str) -> bool:
    """Whether ``text`` is a plain dotted name (``a.b.c``)."""
    return _DOTTED.fullmatch(text) is not None


def call_chain(receiver: str) -> str | None:
    """A receiver that is a call chain, without its arguments (``defer.succeed(x).addCallback(f)``
    -> ``defer.succeed().addCallback()``): its type is the last callee's return type."""
    if not receiver.endswith(")"):
        return None
    kept: list[str] = []
    depth = 0
    for char in receiver:
        if char == "(":
            if depth == 0:
                kept.append(char)
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                kept.append(char)
        elif depth == 0 and not char.isspace() and char != "\\":
            kept.append(char)
    chain = "".join(kept)
    return chain if depth == 0 and _CHAIN.fullmatch(chain) else None
