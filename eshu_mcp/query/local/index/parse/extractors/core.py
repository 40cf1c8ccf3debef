"""
The language-independent vocabulary of extraction: what a language module supplies (a
:class:`LanguageSpec`: node-kind tables as data, plus small functions that read one node: a
definition's name, a call's callee, an import's module) and the helpers those readers share.
The engine that runs a spec over a file is in :mod:`.engine`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from attrs import Factory, frozen
from tree_sitter import Node

EXTRACTOR_VERSION = "12"
"""Bumped whenever extraction output changes, so cached results are invalidated."""
ALIAS = "@"
"""An assignment reader's type that means "whatever type the name after it has" (``x = y``);
alone, "no type any more". The engine resolves it: receiver types never start with it."""

DOCSTRING_CAP = 4096
SIGNATURE_CAP = 400
TYPE_LABELS = frozenset(
    {"Class", "Struct", "Interface", "Trait", "Enum", "Union", "ImplBlock", "Record", "Module"}
)


class Definition(NamedTuple):
    """What a language module read from one definition node (a tuple: cheap to build)."""

    label: str
    name: str
    name_node: Node
    span: Node
    body: Node | None = None
    args: tuple[str, ...] = ()
    class_context: str | None = None
    bases: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, Any] = MappingProxyType({})
    locals: tuple[tuple[str, str], ...] = ()  # parameter -> declared type (Python, C++, Rust)


class Call(NamedTuple):
    """A call expression's callee as written (a tuple: one is built per call in the file)."""

    name: str
    full_name: str
    receiver: str | None
    kind: str = "call"
    arg_count: int | None = None


class ImportRow(NamedTuple):
    """One imported name (or whole module) at a line (a tuple: cheap to build)."""

    module: str
    imported_name: str | None
    alias: str | None
    import_type: str
    line: int


@frozen
class ComplexityTable:
    """Eshu's McCabe table for one language (local-backend §3.6)."""

    branches: frozenset[str]
    nested: frozenset[str]
    boolean_ops: Mapping[str, frozenset[str]]
    catch_all_kinds: frozenset[str] = frozenset()


def _no_imports(node: Node) -> list[ImportRow]:
    return []


def _no_assign(node: Node) -> tuple[str, str] | None:
    return None


def _no_reference(node: Node) -> tuple[str, str | None] | None:
    return None


@frozen
class LanguageSpec:
    """Everything the engine needs to extract one language."""

    key: str
    load: Callable[[], object]
    definitions: frozenset[str]
    define: Callable[[Node], Definition | None]
    calls: frozenset[str]
    call: Callable[[Node], Call | None]
    imports: frozenset[str] = frozenset()
    import_rows: Callable[[Node], list[ImportRow]] = _no_imports
    assignments: frozenset[str] = frozenset()
    assign: Callable[[Node], tuple[str, str] | None] = _no_assign
    complexity: ComplexityTable | None = None
    docstring: Callable[[Definition], str | None] | None = None
    type_context_labels: frozenset[str] = TYPE_LABELS
    module_docstring: Callable[[Node], str | None] | None = None
    references: frozenset[str] = frozenset()
    """Capture names of definitions used as values (passed, assigned, returned, registered)."""
    reference: Callable[[Node], tuple[str, str | None] | None] = _no_reference
    """(name, receiver or None) of a captured value reference; None to skip it."""
    instance_prefix: str | None = None
    """How a method names an attribute of its own instance (``self.``): the types assigned to
    those attributes in one method are the receiver types of calls in every method."""
    implicit_instance: bool = False
    """Whether a method names its instance's fields bare too (Java, C#: ``db.m()`` is
    ``this.db.m()`` when no local ``db`` is typed)."""
    typed_members: bool = False
    """Whether a call on ``v.f`` whose ``v`` has a known type ``T`` records ``T.f`` as its
    receiver type (the field's type is looked up at resolution)."""
    typed_chains: bool = False
    """Whether a call on a call chain rooted at a typed local (``entry.getValue().isEmpty()``)
    records ``T.getValue()`` as its receiver's type (the chain's arguments left out, see
    :func:`..typenames.argument_free_chain`): the resolver follows declared result types."""
    call_result_receivers: bool = False
    """Whether a call on a call's result (``Must(NewRandom()).String()``) records ``Must()``
    as its receiver's type: the result type ``Must``'s signature declares."""
    reference_reader: (
        Callable[[Any], Callable[[list[Node]], list[tuple[Node, str, str | None]]]] | None
    ) = None
    """Given a file's swept extraction, the file's reader of its captured value references:
    (node, name, receiver or None) for each one it keeps, like ``reference`` reads them,
    leaving out as well a reference nothing could resolve (Python: a bare name the file
    neither defines nor imports is a local value). Without it, ``reference`` reads them all."""
    function_aliases: bool = False
    """Whether a local bound to a function or method (``const f = obj.m``) carries it: a bare
    call ``f()`` records ``@obj.m`` (``@T.m`` when ``obj`` has the type ``T``) as its
    receiver type, and the resolver follows it."""
    attribute_paths: bool = False
    """Whether such a call records ``T|f.g`` instead (Python: ``T`` may be a call result or a
    dotted class name, so the attribute path is kept apart from it)."""
    parameters_shadow_calls: bool = False
    """Whether a bare call of a name that is a parameter or an assigned local of the enclosing
    function (or of a function around it) calls that value, not a definition: such calls are
    left out."""
    bind: Callable[[Node, Mapping[str, str]], Iterable[tuple[str, str]]] | None = None
    """When given, reads a captured assignment kind instead of ``assign``: the (local, type)
    pairs a declaration, ``let`` or loop binds, given the enclosing scope's types so far
    (C++ ``std::string s, t;``, Rust ``for (a, b) in pairs``)."""
    receiver_type: Callable[[Node, Mapping[str, str]], str | None] | None = None
    """When given, the type of a call's receiver that is no typed local, read off the call
    node and the scope's types (a chain ``T::new().args(x)`` as ``T.new().args()``: the
    resolver follows each method's declared result)."""
    prepare: Callable[[bytes], bytes] | None = None
    """When given, what the grammar parses instead of a file's bytes: of the same length, with
    what it misreads blanked out (C++ ``class EXPORT_MACRO Name``)."""
    query_patterns: Mapping[str, str] = Factory(dict)
    """Per-kind query pattern narrowing what is captured (capture name = kind); the reader
    must return None for every node the narrowed pattern leaves out. A pattern may capture
    other kinds too, whose own pattern is then empty (one pattern capturing a node under two
    names is one state of the query cursor where two patterns were two)."""
    call_readers: Mapping[str, Callable[[Node], Call | None]] = Factory(dict)
    """Per call kind, a reader used instead of ``call``: for a kind whose capture name already
    says what ``call`` would test the node for (Python: an attribute read or assigned)."""
    captures: Callable[[Any, Node, bytes], Mapping[str, list[Node]]] | None = None
    """Given the compiled query, a file's root and its bytes, the file's captures by kind,
    instead of the engine's own capture pass: for a language whose readers need each
    match's captures together (a tags query pairs a definition with its ``@name``)."""


class _SourceBeingExtracted(threading.local):
    """The bytes being extracted (and their str when pure ASCII), so node text is a slice.

    ``Node.text`` costs twice a slice of the source; readers run only inside
    :meth:`.engine.LanguageEngine.extract`, which sets this for its tree and clears it after.
    Per thread, so engines used from two threads never read each other's source.
    """

    data: bytes | None = None
    ascii: str | None = None


CURRENT_SOURCE = _SourceBeingExtracted()


def text(node: Node | None) -> str:
    """The node's source text, decoded leniently."""
    if node is None:
        return ""
    current = CURRENT_SOURCE
    if current.ascii is not None:
        return current.ascii[node.start_byte : node.end_byte]
    if current.data is not None:
        return current.data[node.start_byte : node.end_byte].decode("utf-8", "replace")
    return node.text.decode("utf-8", "replace")


def starts_with(node: Node, prefix: bytes) -> bool:
    """Whether the node's source begins with ``prefix`` (a keyword, without reading children)."""
    if CURRENT_SOURCE.data is not None:
        return CURRENT_SOURCE.data.startswith(prefix, node.start_byte, node.end_byte)
    return node.text.startswith(prefix)


def argument_count(node: Node) -> int | None:
    """How many arguments a call node passes; None when it has no argument list."""
    arguments = node.child_by_field_name("arguments")
    return arguments.named_child_count if arguments is not None else None


@frozen
class MemberAccess:
    """A grammar's ``receiver.name`` node kind and the fields holding its two halves."""

    kind: str
    name_field: str
    receiver_field: str


def plain_or_method_call(function: Node, count: int | None, member: MemberAccess) -> Call | None:
    """Read a bare identifier callee as a call and a member access as a method call.

    None for any other callee, so a language can go on to its own forms.
    """
    if function.type == "identifier":
        name = text(function)
        return Call(name, name, None, "call", count)
    if function.type == member.kind:
        field = function.child_by_field_name(member.name_field)
        receiver = function.child_by_field_name(member.receiver_field)
        return Call(text(field), text(function), text(receiver), "method_call", count)
    return None


def line_of(node: Node) -> int:
    """1-based line of the node's first byte."""
    return node.start_point[0] + 1


def leading_comment(node: Node) -> str | None:
    """The comment block directly above a definition (Go, Java, Rust, C doc comments)."""
    lines: list[str] = []
    current = node
    expected_row = node.start_point[0]
    while True:
        prev = current.prev_sibling
        if prev is None or "comment" not in prev.type or prev.end_point[0] < expected_row - 1:
            break
        lines.append(text(prev))
        expected_row = prev.start_point[0]
        current = prev
    if not lines:
        return None
    cleaned = []
    for block in reversed(lines):
        for raw in block.splitlines():
            stripped = raw.strip().lstrip("/").lstrip("*").lstrip("#").strip()
            if stripped in ("", "*/"):
                continue
            cleaned.append(stripped.removesuffix("*/").strip())
    return "\n".join(cleaned)[:DOCSTRING_CAP] or None


_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\Z").match


def reference_patterns(parents: tuple[str, ...], values: str) -> str:
    """A ``reference`` capture of ``values`` under each parent (``"kind"`` or ``"kind field"``)."""
    patterns = []
    for parent in parents:
        kind, _, field = parent.partition(" ")
        where = f"{kind} {field}: " if field else f"{kind} "
        patterns.append(f"({where}{values} @reference)")
    return " ".join(patterns)


def value_reference(node: Node, member: MemberAccess) -> tuple[str, str | None] | None:
    """(name, receiver) of a name or a member access used as a value; None otherwise.

    ``handler`` -> (handler, None), ``this.onDone`` -> (onDone, this); a member of anything
    but a dotted name (``f().x``) cannot be resolved and is skipped.
    """
    if node.type == member.kind:
        field = node.child_by_field_name(member.name_field)
        receiver = node.child_by_field_name(member.receiver_field)
        if field is None or receiver is None:
            return None
        owner = text(receiver)
        return (text(field), owner) if _DOTTED_NAME(owner) else None
    name = text(node)
    return (name, None) if _DOTTED_NAME(name) and "." not in name else None
