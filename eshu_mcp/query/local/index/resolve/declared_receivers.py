"""
Receiver types of Rust and C++ method calls, as calls resolve: the type a local or parameter
was declared with, and (Rust) a call chain followed through each method's declared result
(``RecordBuilder::new().args(a).build()``: ``new`` returns a ``RecordBuilder``, so does
``args``, ``build`` returns a ``Record``). A type the repository does not define is a
library's or the language's (``std::string``, ``String``, ``[T]``): its methods run outside.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eshu_mcp.query.local.index.parse.declared_types import (
    called,
    chain_steps,
    outside_cpp,
    rust_result,
    with_self,
)

if TYPE_CHECKING:
    from eshu_mcp.query.local.index.resolve.calls import Catalog


def declared_receiver(
    catalog: Catalog, inferred: str, context: str | None, strict: bool
) -> str | None:
    """The type whose method a call on a receiver of the recorded type ``inferred`` runs;
    "" when that type is outside the repository; None when it cannot be known. ``strict``:
    every type the repository does not define is outside (not only the standard library's)."""
    if outside_cpp(inferred):
        return ""
    parsed = chain_steps(inferred)
    if parsed is None:
        return None
    start, steps = parsed
    current: str | None = context if start == "Self" else start
    for index, step in enumerate(steps):
        if not current:
            return current
        if step == "[]":
            current = current[1:-1] if current[:1] == "[" and current[-1:] == "]" else None
            continue
        if step[-2:] != "()":  # a field: its declared type
            named = current[:1] not in "[(" and current[-1:] != "?"
            current = catalog.field_type(current, step) if named else None
            continue
        step = step[:-2]
        known = called(current, step)  # the language's own types: collections, options
        if known is not None:
            if not known:
                return ""  # a slice's, a vector's or an option's own method
            current = known
            continue
        methods = catalog.by_class.get((current, step)) or ()
        method = methods[0] if methods else catalog.inherited(current, step)
        if method is None:
            if not catalog.types.get(current):
                return "" if strict else None
            # an associated function the repository does not show (derived, generated)
            # builds its type, as ``T::new()`` and ``T::default()`` do
            current = current if index == 0 and start != "Self" else None
            continue
        result = rust_result(method.signature)
        current = with_self(result, current) if result else None
    if current and (current[:1] in "[(" or current[-1:] == "?" or outside_cpp(current)):
        return ""  # a collection's, a tuple's or an option's method, or the library's
    if current and not catalog.types.get(current):
        return "" if strict else None
    return current
