"""
The generic extractor: a language read by a query in tree-sitter's tags conventions, so that
adding one is a registry module (its query as data) and a wheel pin, with no code.

What each capture of a match becomes:

* ``@definition.<kind>`` with ``@name``: an entity; ``class``, ``interface``, ``module``,
  ``enum``, ``struct``, ``trait``, ``mixin``, ``object``, ``record``, ``union`` and
  ``extension`` are types, ``function`` and ``method`` functions (a method nested in a type is
  named ``Type.method``); other kinds (``type``, ``constant``, ``field``...) are left out. A
  name claimed by two definitions belongs to the outer one; a definition with several names
  (``Shape.named``) is named by the last. A definition's extent is its node, or its node and
  the ``...body`` that follows it when the grammar keeps them siblings.
* ``@reference.call`` or ``@reference.send`` with ``@name``: a call of that name. It is a
  method call when a member separator (``.``, ``?.``, ``::``, ``->``) comes before the name;
  its receiver is the source from ``@receiver`` (when the query captures one), or else from
  the call's start, to that separator.
* ``@reference.class``, ``@reference.implementation`` or ``@reference.interface`` with
  ``@name``: in a type's header (before its body) a base the type extends (``class``) or
  implements (the others); anywhere else a construction of that class.
* ``@import`` with ``@import.module`` (quotes stripped) and an optional ``@import.alias``:
  an import of every name of the module, or of the module under the alias.
* ``@complexity.branch``: a decision point; ``@complexity.scope``: a closure whose decisions
  are its own (McCabe complexity of each function).

Receiver types, where the query says where a language writes them: ``@result`` in a
definition's match is the result type it declares; ``@assign`` with ``@assign.name`` and
``@assign.type`` (a declared or constructed type) or ``@assign.call`` (a function whose
result it holds: a capitalised name constructs that class, another name has the result the
file's own definition of it declares) types a local (in a function), a field (in a type of
a language with implicit ``this``) or a file-level name; a typed parameter types its name. A
receiver written as a call of a function of the file with a declared result has that type.

Every other capture (``@doc``, ``@ignore``...) is left alone. The query's matches are read
once per file, before the engine's single sweep assigns each capture to its definition.
"""

from __future__ import annotations

import importlib
import re
import threading
from importlib.resources import files
from types import MappingProxyType

from tree_sitter import Node, Query, QueryCursor

from eshu_mcp.query.local.index.parse.extractors.core import (
    Call,
    ComplexityTable,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)

LABELS = MappingProxyType(
    {
        "class": "Class",
        "object": "Class",
        "interface": "Interface",
        "module": "Module",
        "enum": "Enum",
        "struct": "Struct",
        "record": "Record",
        "union": "Union",
        "trait": "Trait",
        "mixin": "Trait",
        "extension": "ImplBlock",
        "function": "Function",
        "method": "Function",
    }
)
"""Eshu's entity label for each ``@definition.<kind>`` it keeps."""
CALLS = frozenset({"reference.call", "reference.send"})
CLASS_USES = MappingProxyType(
    {
        "reference.class": "extends",
        "reference.implementation": "implements",
        "reference.interface": "implements",
    }
)
"""A reference to a type: in a type's header, a base of this kind; elsewhere a construction."""
SEPARATORS = (b"?.", b"!.", b"::", b"->", b".")
"""Member separators, longest first: one just before a call's name makes it a method call."""

# The capture names the engine sees (its roles), whatever the query's own names are.
_DEFINITION, _CALL, _IMPORT, _ASSIGN = "definition", "call", "import", "assign"
_BRANCH, _SCOPE = "branch", "scope"
_CALLED = re.compile(r"([A-Za-z_$][\w$]*)\(.*\)\Z", re.DOTALL)
"""A receiver written as one call of a bare name: ``_parse(path)``."""
_COMPLEXITY = ComplexityTable(
    branches=frozenset({_BRANCH}), nested=frozenset({_SCOPE}), boolean_ops={}
)


class _FileMatches(threading.local):
    """What one file's matches say of each captured node (keyed by ``id(node)``: the engine
    hands the readers the very node objects the matches gave), per thread."""

    def __init__(self) -> None:
        self.definitions: dict[int, tuple[str, Node, tuple[tuple[str, str], ...]]] = {}
        self.calls: dict[int, Call] = {}
        self.imports: dict[int, list[ImportRow]] = {}
        self.assigns: dict[int, tuple[str, str]] = {}


_FILE = _FileMatches()


def _header_end(node: Node) -> int:
    """Where a type definition's body begins (its end, when it has none)."""
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type.endswith(("body", "block"))), None)
    return node.end_byte if body is None else body.start_byte


def _body(node: Node) -> Node | None:
    """A definition's body: its own ``body`` field, or a ``...body`` sibling following it
    (a grammar that keeps a signature and its body apart)."""
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    following = node.next_named_sibling
    while following is not None and "comment" in following.type:
        following = following.next_named_sibling
    if following is not None and following.type.endswith("body"):
        return following
    return None


def _parameters(node: Node) -> tuple[tuple[str, str | None], ...]:
    """(name, declared type or None) of a function definition's parameters (its first
    parameter list, searched two levels down, never into its body)."""
    found = node.child_by_field_name("parameters")
    if found is None:
        for child in node.named_children:
            if "parameter" in child.type:
                found = child
                break
            found = next((c for c in child.named_children if "parameter" in c.type), None)
            if found is not None:
                break
    parameters: list[tuple[str, str | None]] = []
    pending = list(found.named_children) if found is not None else []
    while pending:
        parameter = pending.pop(0)
        if parameter.type.startswith(("optional", "named")) or "parameters" in parameter.type:
            pending[:0] = parameter.named_children  # [int b] and {int c}: groups of them
            continue
        name = parameter.child_by_field_name("name")
        if name is None:
            name = next(
                (c for c in reversed(parameter.named_children) if c.type == "identifier"), None
            )
        if name is None and parameter.type == "identifier":
            name = parameter
        if name is None:
            continue
        written = parameter.child_by_field_name("type")
        if written is None:  # the type written last before the name (``p.Path path``)
            written = next(
                (
                    c
                    for c in reversed(parameter.named_children)
                    if c.type == "type_identifier" and c.start_byte < name.start_byte
                ),
                None,
            )
        parameters.append((text(name), _type_name(written) if written is not None else None))
    return tuple(parameters)


def _receiver(source: bytes, start: int, name: Node) -> str | None:
    """The receiver written from ``start`` to the member separator before ``name``; None when
    no separator comes before it (a bare call). A separator after nothing (a cascade's
    ``..add()``) gives ``?``: some receiver, not a name."""
    before = source[start : name.start_byte].rstrip()
    for separator in SEPARATORS:
        if before.endswith(separator):
            written = before[: -len(separator)].rstrip()
            if written.endswith(b"."):  # a cascade ``t..a()..b()``: each runs on ``t``
                written = written.split(b"..", 1)[0]
            written = written.rstrip(b"!?.").strip()
            return written.decode("utf-8", "replace") if written else "?"
    return None


def _type_name(node: Node) -> str:
    """``Path`` of a written type ``p.Path`` (generic arguments and ``?`` are its siblings)."""
    return text(node).split("<", 1)[0].rstrip("?").rsplit(".", 1)[-1]


def _read_matches(query: Query, root: Node, source: bytes) -> dict[str, list[Node]]:
    """Run the tags query over a file once: remember what each definition, call and import
    is, and hand the engine its captures under the names of its roles."""
    nodes_by_key: dict[tuple[int, int, int], Node] = {}

    def one(node: Node) -> Node:  # one object per tree node, whichever match captured it
        return nodes_by_key.setdefault((node.start_byte, node.end_byte, node.kind_id), node)

    definitions: dict[int, tuple[str, Node, list[tuple[str, str]]]] = {}
    defined: dict[int, Node] = {}
    calls: dict[int, Call] = {}
    imports: dict[int, list[ImportRow]] = {}
    # an assignment of a call's receiver and the call share a node: the binding comes first
    captured: dict[str, dict[int, Node]] = {
        _ASSIGN: {},
        _CALL: {},
        _IMPORT: {},
        _BRANCH: {},
        _SCOPE: {},
    }
    results: dict[int, Node] = {}  # a definition's name (start byte) -> its declared result
    bindings: dict[int, tuple[Node, Node | None, Node | None]] = {}  # name, type, call
    receivers: dict[int, int] = {}  # call -> where its receiver starts (the earliest wins)
    class_uses: list[tuple[str, Node, Node]] = []
    for _, captures in QueryCursor(query).matches(root):
        names = captures.get("name")
        for capture, nodes in captures.items():
            node = one(nodes[0])
            if capture.startswith("definition."):
                label = LABELS.get(capture[11:])
                if label is None or not names:
                    continue
                known = definitions.get(id(node))
                name = names[-1]
                result = captures.get("result")
                if result:  # ``p.Path f()``: the type written last before the name
                    known_result = results.get(name.start_byte)
                    if known_result is None or result[0].start_byte > known_result.start_byte:
                        results[name.start_byte] = result[0]
                if known is None or name.start_byte > known[1].start_byte:
                    definitions[id(node)] = (label, name, [])
                    defined[id(node)] = node
            elif capture in CALLS and names:
                receiver = captures.get("receiver")
                start = receiver[0].start_byte if receiver else node.start_byte
                if id(node) in receivers and receivers[id(node)] <= start:
                    continue
                receivers[id(node)] = start
                name = names[-1]
                owner = _receiver(source, start, name)
                called = text(name)
                full = called if owner is None else f"{owner}.{called}"
                kind = "call" if owner is None else "method_call"
                arguments = node.child_by_field_name("arguments")
                count = arguments.named_child_count if arguments is not None else None
                calls[id(node)] = Call(called, full, owner, kind, count)
                captured[_CALL][id(node)] = node
            elif capture in CLASS_USES and names:
                class_uses.append((capture, node, names[-1]))
            elif capture == "import":
                module = captures.get("import.module")
                if module:
                    alias = captures.get("import.alias")
                    imported = text(module[0]).strip("'\"`")
                    local = text(alias[0]) if alias else None
                    imports[id(node)] = [ImportRow(imported, "*", local, node.type, line_of(node))]
                    captured[_IMPORT][id(node)] = node
            elif capture == "assign":
                target = captures.get("assign.name")
                if target:
                    declared = captures.get("assign.type")
                    called = captures.get("assign.call")
                    known = bindings.get(id(node))
                    if known is None or (
                        declared
                        and (known[1] is None or declared[0].start_byte > known[1].start_byte)
                    ):
                        bindings[id(node)] = (
                            target[0],
                            declared[0] if declared else None,
                            called[0] if called else None,
                        )
                        captured[_ASSIGN][id(node)] = node
            elif capture == "complexity.branch":
                captured[_BRANCH][id(node)] = node
            elif capture == "complexity.scope":
                captured[_SCOPE][id(node)] = node
    _keep_outermost(definitions, defined)
    types = [
        (node, _header_end(node))
        for key, node in defined.items()
        if key in definitions and definitions[key][0] != "Function"
    ]
    for capture, node, name in class_uses:
        _class_use(capture, node, name, types, definitions, calls, captured[_CALL])
    returns = {
        text(name): _type_name(results[name.start_byte])
        for label, name, _ in definitions.values()
        if label == "Function" and name.start_byte in results
    }
    assigns = _bound_types(bindings, returns, captured[_ASSIGN])
    for key, call in calls.items():  # _parse(path).extension(): what _parse declares
        called = _one_call(call.receiver) if call.receiver else None
        if called is None:
            continue
        typed = called if called[:1].isupper() else returns.get(called)
        if typed is not None:
            assigns[key] = (call.receiver, typed)
            captured[_ASSIGN][key] = captured[_CALL][key]
    state = _FILE
    state.definitions = {
        key: (label, name, tuple(bases)) for key, (label, name, bases) in definitions.items()
    }
    state.calls, state.imports, state.assigns = calls, imports, assigns
    found = {kind: list(nodes.values()) for kind, nodes in captured.items()}
    found[_DEFINITION] = [node for key, node in defined.items() if key in definitions]
    return found


def _one_call(receiver: str) -> str | None:
    """``f`` of a receiver written as one call ``f(...)`` or ``new F(...)`` (not
    ``f(a).g(b)``); else None."""
    receiver = receiver.removeprefix("new ").lstrip()
    written = _CALLED.match(receiver)
    if written is None:
        return None
    depth = 0
    for index in range(written.end(1), len(receiver)):
        depth += (receiver[index] == "(") - (receiver[index] == ")")
        if depth == 0:
            return written[1] if index == len(receiver) - 1 else None
    return None


def _bound_types(bindings: dict, returns: dict[str, str], nodes: dict[int, Node]) -> dict:
    """(name, type) of each typed binding; the others leave the engine's assignments."""
    typed: dict[int, tuple[str, str]] = {}
    for key, (target, declared, called) in bindings.items():
        if declared is not None:
            typed[key] = (text(target), _type_name(declared))
            continue
        name = text(called) if called is not None else ""
        if name[:1].isupper():  # Foo(...): a construction
            typed[key] = (text(target), name)
        elif name in returns:
            typed[key] = (text(target), returns[name])
        else:
            del nodes[key]
    return typed


def _keep_outermost(definitions: dict, defined: dict) -> None:
    """Drop a definition whose name an outer definition claims too (a method's signature
    inside the method)."""
    claimed: dict[int, Node] = {}
    for node in defined.values():
        found = definitions.get(id(node))
        if found is None:
            continue
        other = claimed.get(found[1].start_byte)
        if other is None:
            claimed[found[1].start_byte] = node
            continue
        outer, inner = (
            (other, node)
            if other.end_byte - other.start_byte >= node.end_byte - node.start_byte
            else (node, other)
        )
        claimed[found[1].start_byte] = outer
        definitions.pop(id(inner), None)


def _class_use(capture, node, name, types, definitions, calls, captured) -> None:
    """A type reference: a base of the type whose header holds it, else a construction."""
    start = node.start_byte
    holder = None
    for candidate, header_end in types:
        if candidate.start_byte <= start < header_end and (
            holder is None or candidate.start_byte >= holder.start_byte
        ):
            holder = candidate
    called = text(name)
    if holder is not None:
        definitions[id(holder)][2].append((called.rsplit(".", 1)[-1], CLASS_USES[capture]))
        return
    if id(node) not in calls:
        calls[id(node)] = Call(called, called, None, "constructor_call", None)
        captured[id(node)] = node


def _define(node: Node) -> Definition | None:
    found = _FILE.definitions.get(id(node))
    if found is None:
        return None
    label, name, bases = found
    body = _body(node)
    if label != "Function":
        return Definition(label, text(name), name, node, body, bases=bases)
    parameters = _parameters(node)
    args = tuple(name for name, _ in parameters)
    typed = tuple((name, written) for name, written in parameters if written)
    return Definition(label, text(name), name, node, body, args, bases=bases, locals=typed)


def _assign(node: Node) -> tuple[str, str] | None:
    return _FILE.assigns.get(id(node))


def _call(node: Node) -> Call | None:
    return _FILE.calls.get(id(node))


def _import_rows(node: Node) -> list[ImportRow]:
    return _FILE.imports.get(id(node), [])


def query_text(grammar_module: str, own: str, shipped: bool) -> str:
    """The language's tags query: the wheel's ``queries/tags.scm`` (when ``shipped``) and
    the registry's own query after it."""
    if not shipped:
        return own
    tags = files(grammar_module).joinpath("queries", "tags.scm").read_text(encoding="utf-8")
    return tags + "\n" + own


def spec_for(entry) -> LanguageSpec:
    """The extraction spec of a registry entry whose extractor is ``tags``."""
    grammar = entry.grammar or f"{(entry.wheel or '').replace('-', '_')}:language"
    module, _, function = grammar.partition(":")
    query = query_text(module, entry.tags, entry.shipped_tags)

    def load() -> object:
        return getattr(importlib.import_module(module), function or "language")()

    def captures(compiled: Query, root: Node, source: bytes) -> dict[str, list[Node]]:
        return _read_matches(compiled, root, source)

    # the engine compiles the whole query once (under one of its roles' names) and then
    # hands each file's root to ``captures`` instead of running its own capture pass
    return LanguageSpec(
        key=entry.key,
        load=load,
        definitions=frozenset({_DEFINITION}),
        define=_define,
        calls=frozenset({_CALL}),
        call=_call,
        imports=frozenset({_IMPORT}),
        import_rows=_import_rows,
        assignments=frozenset({_ASSIGN}),
        assign=_assign,
        complexity=_COMPLEXITY,
        # a field of a language with implicit ``this`` types ``this.f.m()`` and ``f.m()``
        instance_prefix="this." if entry.implicit_this else None,
        implicit_instance=entry.implicit_this,
        query_patterns={
            _ASSIGN: query,
            _BRANCH: "",
            _CALL: "",
            _DEFINITION: "",
            _IMPORT: "",
            _SCOPE: "",
        },
        captures=captures,
    )
