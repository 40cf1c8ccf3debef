"""
Receiver types of Go, TypeScript/JavaScript, Java and C# method calls, as calls resolve:
field chains (the extractor's ``T.f.g``: field ``g`` of field ``f`` of a ``T``), ``this.f``
and (Java, C#) bare fields of the caller's class and its bases, locals assigned from a call
whose declared result type is known (``s := NewServer()``, ``const s = make()``); and what a
call on a receiver of unknown type links to: the methods of that name, as ambiguous.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eshu_mcp.query.local.index.parse.registry import LANGUAGES
from eshu_mcp.query.local.index.resolve.builtins import SCRIPT_GLOBALS, TYPE_METHODS, is_builtin

if TYPE_CHECKING:
    from eshu_mcp.query.local.index.resolve.bindings import FileBindings
    from eshu_mcp.query.local.index.resolve.calls import Catalog, Entity

RECEIVER_TYPED = {language.key: language.receivers for language in LANGUAGES if language.receivers}
"""Languages whose method calls resolve by receiver type, each to its family (whose methods a
call of it can run), as the language registry declares them."""
RESULT_TYPED = frozenset({"go", "typescript", "tsx"})
"""Languages whose function signatures state a result type after the parameters."""
DISPATCHED = frozenset(
    language.receivers for language in LANGUAGES if language.receivers and language.dispatched
)
"""Families where a value declared as one class may be an instance of a class deriving from it
(Go's embedding promotes methods, it does not override them)."""
CAPITALISED_TYPES = frozenset(
    language.receivers for language in LANGUAGES if language.capitalised_types
)
"""Families whose capitalised names are types: one the repository lacks is a library's."""
AMBIGUOUS_CAP = 8
"""The most candidates an ambiguous call lists."""
NULLISH = frozenset({"null", "undefined", ""})


def library_receiver(catalog: Catalog, receiver: str, family: str) -> bool:
    """Whether an untyped receiver names something outside the repository: a script global
    (``console.log()``), or in Java/C# a class the repository does not define
    (``System.out.println()``, ``Console.WriteLine()``: capitalised names are types)."""
    head = receiver.split(".", 1)[0]
    if family == "ecmascript":
        return head in SCRIPT_GLOBALS and not catalog.types.get(head)
    if family in CAPITALISED_TYPES:
        return head[:1].isupper() and head.isidentifier() and not catalog.types.get(head)
    return False


def member_type(
    catalog: Catalog,
    bindings: FileBindings,
    call: tuple,
    inferred: str | None,
    context: str | None,
    implicit: bool,
) -> str | None:
    """The type name a call's receiver has, from what the extractor recorded (``inferred``)
    and the declarations of the repository; "" when a type on the way is one the repository
    does not define (the call is external); None when it cannot be known."""
    receiver = call[5]
    if inferred is not None:
        if inferred.endswith("()"):
            return returned_type(catalog, bindings, inferred[:-2], call[1])
        if "." not in inferred:
            return inferred
        owner, *fields = inferred.split(".")
        for field in fields:
            if not catalog.types.get(owner):
                return ""
            owner = catalog.field_type(owner, field)
            if owner is None:
                return None
        return owner
    if context is None:
        return None
    if receiver.startswith("this.") and receiver.count(".") == 1:
        return catalog.field_type(context, receiver[5:])
    if implicit and receiver.isidentifier():
        return catalog.field_type(context, receiver)
    return None


def returned_type(catalog: Catalog, bindings: FileBindings, callee: str, file_id: int):
    """The result type a function's signature declares (its first result in Go), for a
    callee written ``f`` or ``pkg.f``; None when the function or its result is unknown."""
    function = _callee(catalog, bindings, callee, file_id)
    if function is None or not function.signature:
        return None
    if function.language == "go":
        return go_result(function.signature)
    return annotated_result(function.signature)


def _callee(catalog: Catalog, bindings: FileBindings, callee: str, file_id: int) -> Entity | None:
    head, dot, name = callee.rpartition(".")
    if dot:
        binding = bindings.lookup(file_id, head) if "." not in head else None
        if binding is None or binding.symbol is not None or not binding.file_ids:
            return None
        found = catalog.callables.in_files(name, binding.file_ids)
    else:
        found = catalog.callables.in_file(name, file_id)
        if not found:
            binding = bindings.lookup(file_id, name)
            if binding is not None and binding.symbol and binding.file_ids:
                found = catalog.callables.in_files(binding.symbol, binding.file_ids)
            elif binding is None:  # a Go package is its directory
                found = [
                    e
                    for e in catalog.callables.in_dir(name, catalog.dirs.get(file_id))
                    if e.language == "go"
                ]
    functions = [e for e in found if e.entity_type == "Function"]
    return functions[0] if len(functions) == 1 else None


def _after_group(text: str) -> str | None:
    """What follows the bracketed group ``text`` starts with; None when it never closes."""
    depth = 0
    for index, char in enumerate(text):
        if char in "([{<" and not (char == "<" and text[index - 1 : index] == "="):
            depth += 1
        elif char in ")]}>" and not (char == ">" and text[index - 1 : index] == "="):
            depth -= 1
            if depth == 0:
                return text[index + 1 :]
    return None


def go_result(signature: str) -> str | None:
    """``Server`` for ``func NewServer(addr string) (*Server, error)``."""
    rest = signature.removeprefix("func").lstrip()
    if rest.startswith("("):  # a method's receiver
        rest = (_after_group(rest) or "").lstrip()
    start = rest.find("(")
    if start < 0:
        return None
    rest = (_after_group(rest[start:]) or "").strip()
    if rest.startswith("("):
        inner = rest[1:]
        depth = 0
        for index, char in enumerate(inner):
            if char in "([{":
                depth += 1
            elif char in ")]}":
                if depth == 0:
                    inner = inner[:index]
                    break
                depth -= 1
            elif char == "," and depth == 0:
                inner = inner[:index]
                break
        words = inner.split()
        rest = words[-1] if words else ""
    name = rest.lstrip("*").split("[", 1)[0].rsplit(".", 1)[-1]
    return name if name.isidentifier() and rest[:1] not in "[(" else None


def annotated_result(signature: str) -> str | None:
    """``Foo`` for ``function make(a: A): Foo | null`` (TypeScript)."""
    start = signature.find("(")
    if start < 0:
        return None
    rest = (_after_group(signature[start:]) or "").strip()
    if not rest.startswith(":"):
        return None
    rest = rest[1:].removesuffix("=>").strip()
    parts = [part.strip() for part in rest.split("|") if part.strip() not in NULLISH]
    if len(parts) != 1:
        return None
    name = parts[0].split("<", 1)[0].rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def dispatched(
    catalog: Catalog,
    type_name: str,
    name: str,
    found: Entity | None,
    family: str,
    arity: int | None = None,
):
    """A method call on a value declared as ``type_name``: ``found`` (the method the type or
    its bases define, if any) unless derived types override it, then ambiguous between them;
    an interface's declaration never runs, its implementations do. Overrides with another
    parameter count than the call's (other overloads) are left out."""
    below = catalog.overrides_below(type_name, name, family)
    if arity is not None and found is not None and found.arity is not None:
        below = [m for m in below if m.arity is None or m.arity == found.arity]
    owner = catalog.by_id.get(found.parent) if found is not None and found.parent else None
    abstract = found is None or (owner is not None and owner.entity_type == "Interface")
    candidates = below if abstract else [found, *below]
    if not candidates:
        return found, "type_inferred"
    if len(candidates) == 1:
        return candidates[0], "type_inferred"
    if len(candidates) > AMBIGUOUS_CAP:  # too many to list: the declared one, with the count
        if found is None:
            return None, f"ambiguous:{len(candidates)}"
        return [found], "ambiguous", len(candidates)
    return candidates, "ambiguous"


def untyped_method(catalog: Catalog, name: str, family: str, language: str | None):
    """A method call whose receiver's type is unknown: every method of that name in the
    language family (a short list, as ambiguous), the one there is, or the count. A name
    the standard library's common types also define counts one more candidate, outside."""
    found = [
        e for e in catalog.methods.by_name.get(name, ()) if RECEIVER_TYPED.get(e.language) == family
    ]
    library = name in TYPE_METHODS.get(family, ())
    if not found:
        return None, "builtin" if library or is_builtin(language, name) else "no_definition"
    could_run = len(found) + library
    if could_run > AMBIGUOUS_CAP:
        return None, f"ambiguous:{could_run}"
    if library:
        return found, "ambiguous", could_run
    if len(found) == 1:
        return found[0], "repo_unique_name"
    return found, "ambiguous"
