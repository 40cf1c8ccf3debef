"""
The engine that extracts one file: one tree-sitter query per language captures definitions,
calls, imports and decision points; a single sweep in source order assigns each capture to
its enclosing definition.
"""

from __future__ import annotations

import re
from operator import itemgetter
from typing import Any

from attrs import Factory, define
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from eshu_mcp.query.local.index.parse.extractors.attributes import type_instance_attributes
from eshu_mcp.query.local.index.parse.extractors.core import (
    ALIAS,
    CURRENT_SOURCE,
    SIGNATURE_CAP,
    Definition,
    LanguageSpec,
    leading_comment,
    text,
)
from eshu_mcp.query.local.index.parse.typenames import argument_free_chain, call_chain


@define
class Extraction:
    """Everything extracted from one file, as plain picklable values."""

    entities: list[dict[str, Any]] = Factory(list)
    calls: list[tuple] = Factory(list)
    imports: list[tuple] = Factory(list)
    bases: list[tuple[int, str, str]] = Factory(list)
    references: list[tuple] = Factory(list)  # (owner entity index, name, receiver, line)
    parse_errors: int = 0
    module_doc: tuple[str, int, int, int] | None = None  # text, end line, start byte, end byte


# What the sweep does with a captured kind, as bits of one int (one dict lookup per capture).
_DEFINES, _NESTS, _CALLS, _IMPORTS, _ASSIGNS, _BRANCHES, _BOOLEAN, _CATCH_ALL, _REFERS = (
    1 << bit for bit in range(9)
)
_AFTER_DEFINE = _CALLS | _IMPORTS | _ASSIGNS | _BRANCHES | _BOOLEAN

# A sweep frame is a tuple: (end byte * key scale, entity index or None, complexity counted here,
# innermost function as (entity index, locals) or None, innermost entity index or None).
_END, _ENTITY, _COUNTS, _FUNCTION, _OWNER = range(5)


def _roles(spec: LanguageSpec) -> dict[str, int]:
    table = spec.complexity
    groups = [
        (spec.definitions, _DEFINES),
        (spec.calls, _CALLS),
        (spec.imports, _IMPORTS),
        (spec.assignments, _ASSIGNS),
        (spec.references, _REFERS),
    ]
    if table is not None:
        groups += [
            (table.nested, _NESTS),
            (table.branches, _BRANCHES),
            (table.boolean_ops, _BOOLEAN),
            (table.catch_all_kinds, _CATCH_ALL),
        ]
    roles: dict[str, int] = {}
    for kinds, bit in groups:
        for kind in kinds:
            roles[kind] = roles.get(kind, 0) | bit
    return roles


class LanguageEngine:
    """A loaded grammar plus its compiled capture query; one per language per process."""

    def __init__(self, spec: LanguageSpec) -> None:
        self.spec = spec
        self.language = Language(spec.load())
        self.parser = Parser(self.language)
        self.roles = _roles(spec)
        self.call_readers = {kind: spec.call_readers.get(kind, spec.call) for kind in spec.calls}
        self.type_context_labels = spec.type_context_labels
        patterns = spec.query_patterns
        self.query = Query(
            self.language,
            " ".join(
                patterns.get(kind, f"({kind}) @{kind}")
                for kind, role in sorted(self.roles.items())
                if role != _CATCH_ALL
            ),
        )

    def extract(self, source: bytes, entity_cap: int, ascii_text: str | None = None) -> Extraction:
        """Parse ``source`` and extract entities, calls, imports and bases.

        ``ascii_text`` is ``source`` already decoded, when the caller has it and it is ASCII.
        """
        prepare = self.spec.prepare
        # same length, so every node's offsets index ``source`` as written
        tree = self.parser.parse(source if prepare is None else prepare(source))
        CURRENT_SOURCE.data = source
        if ascii_text is None and source.isascii():
            ascii_text = source.decode("ascii")
        CURRENT_SOURCE.ascii = ascii_text
        try:
            return self._extract(tree, source, entity_cap)
        finally:
            CURRENT_SOURCE.data = CURRENT_SOURCE.ascii = None

    def _extract(self, tree: Tree, source: bytes, entity_cap: int) -> Extraction:
        result = Extraction()
        root = tree.root_node
        if root.has_error:
            result.parse_errors = _count_errors(root)
        # One number orders captures by start, then outermost first: start * scale + (scale
        # - 1 - end). A float while exact (2**26 * 2**26 < 2**53): floats sort fastest.
        scale = 67108864.0 if len(source) < 67108864 else 4294967296
        low = scale - 1
        items: list[tuple[float, str, Node]] = []
        values: list[Node] = []
        roles = self.roles
        read = self.spec.captures
        if read is None:
            captured = QueryCursor(self.query).captures(root)
        else:  # a language reading each match's captures together (a tags query)
            captured = read(self.query, root, source)
        for kind, nodes in captured.items():
            if kind not in roles:  # a helper capture a pattern's predicate tests
                continue
            if roles[kind] == _REFERS:  # attributed after the sweep, once filtered
                values += nodes
                continue
            items += [
                (node.start_byte * scale + (low - node.end_byte), kind, node) for node in nodes
            ]
        items.sort(key=_first)
        frames: list[tuple[float, float, int, tuple[str, ...]]] = []
        self._sweep(items, result, source, scale, frames)
        if values:
            self._references(values, frames, result, scale)
        if self.spec.module_docstring is not None and root.named_child_count:
            doc = self.spec.module_docstring(root)
            if doc:
                first = root.named_child(0)
                result.module_doc = (doc, first.end_point[0] + 1, first.start_byte, first.end_byte)
        if len(result.entities) > entity_cap:
            result.entities = []
            result.bases = []
            result.calls = [(None, *call[1:]) for call in result.calls]
            result.references = [(None, *ref[1:]) for ref in result.references]
        return result

    def _references(
        self, nodes: list[Node], frames: list[tuple], result: Extraction, scale: float
    ) -> None:
        """Keep the value references the language's reader keeps, each with its
        innermost enclosing entity (None at file level), in source order.

        ``frames`` are the sweep's entity frames, in its order: (start key, end byte *
        scale, entity index, parameter names). A bare name that is one of the enclosing
        function's parameters names a local value, never a definition, and is dropped.
        """
        reader = self.spec.reference_reader
        if reader is None:
            read = self.spec.reference
            kept = []
            for node in nodes:
                value = read(node)
                if value is not None:
                    kept.append((node, *value))
        else:
            kept = reader(result)(nodes)
        if not kept:
            return
        low = scale - 1
        found = [
            (node.start_byte * scale + (low - node.end_byte), name, receiver, node)
            for node, name, receiver in kept
        ]
        found.sort(key=_first)
        references = result.references
        enclosing: list[tuple] = []  # (end byte * scale, entity index, parameter names)
        following = iter(frames)
        frame = next(following, None)
        for key, name, receiver, node in found:
            while frame is not None and frame[0] < key:  # entities starting before it
                start = frame[0]
                while enclosing and enclosing[-1][0] <= start:
                    enclosing.pop()
                enclosing.append(frame[1:])
                frame = next(following, None)
            while enclosing and enclosing[-1][0] <= key:
                enclosing.pop()
            if enclosing:
                _, owner, args = enclosing[-1]
                if receiver is None and name in args:
                    continue
            else:
                owner = None
            references.append((owner, name, receiver, node.start_point[0] + 1))

    def _sweep(
        self, items: list, result: Extraction, source: bytes, scale: float, frames: list
    ) -> None:
        spec = self.spec
        roles = self.roles
        table = spec.complexity
        counted = table is not None
        bool_ops = table.boolean_ops if table else {}
        define, assign = spec.define, spec.assign
        readers = self.call_readers
        import_rows = spec.import_rows
        shadowing = spec.parameters_shadow_calls
        calls = result.calls
        imports = result.imports
        prefix = spec.instance_prefix
        # how a call on ``v.f`` records its receiver's type: ``T.f``, ``T|f`` or not at all
        members = "." if spec.typed_members else "|" if spec.attribute_paths else None
        chains = spec.typed_chains  # ``v.get().m()``: ``T.get()`` (Java)
        aliases = spec.attribute_paths or spec.function_aliases  # bare calls of a bound local
        typed, binder = spec.receiver_type, spec.bind  # declared types read off nodes
        results = spec.call_result_receivers
        attributes: list[tuple[int, str, str]] = []  # (entity index, self.attr, type)
        module_scope: dict[str, str] = {}  # module-level names bound so far, seen by functions

        def call_row(call: tuple, node: Node, function: tuple | None) -> tuple:
            """A call's row as stored, with its receiver's type in ``function``'s scope."""
            name, full, receiver, call_kind, count = call
            if function is None:
                receiver_type = None
            elif receiver:
                scope = function[1]
                receiver_type = (
                    scope.get(receiver)
                    or (
                        _member_type(scope, receiver, members, chains)
                        if members and "." in receiver
                        else None
                    )
                    or (_called(receiver) if results else None)
                    or (typed(node, scope) if typed else None)
                )
            else:
                receiver_type = _bound_alias(function[1], name) if aliases else None
            return (
                None if function is None else function[0],
                name,
                full,
                receiver,
                receiver_type,
                call_kind,
                count,
                node.start_point[0] + 1,
            )

        stack: list[tuple] = []
        top: tuple | None = None
        counts: dict[int, int] = {}
        for key, kind, node in items:
            # a frame holds end * scale: it ends at or before this start iff that is <= key
            if top is not None and top[0] <= key:
                stack.pop()
                while stack and stack[-1][0] <= key:
                    stack.pop()
                top = stack[-1] if stack else None
            role = roles[kind]
            if role == _CALLS:  # most captures: a kind that is nothing but a call
                call = readers[kind](node)
                if call is None or (shadowing and _calls_parameter(call, top)):
                    continue
                calls.append(call_row(call, node, None if top is None else top[_FUNCTION]))
                continue
            if role & _DEFINES:
                found = define(node)
                if found is not None:
                    cut = _unstretched(node, source) if node.has_error else None
                    index = self._add_entity(found, top, result, source, cut)
                    stop = node.end_byte
                    if found.body is not None and found.body.end_byte > stop:
                        stop = found.body.end_byte  # a body kept beside its signature
                    if cut is not None:
                        stop = cut
                    end = stop * scale
                    frames.append((key, end, index, found.args))
                    if found.label == "Function":
                        counts[index] = 0
                        # a nested function sees its enclosing function's locals
                        outer = None if top is None else top[_FUNCTION]
                        scope = dict(module_scope if outer is None else outer[1])
                        if found.locals:
                            scope.update(found.locals)
                            if prefix:  # parameters that declare fields (TS ``private x: T``)
                                attributes.extend(
                                    (index, name, value)
                                    for name, value in found.locals
                                    if name.startswith(prefix)
                                )
                        params = _NO_PARAMETERS
                        if shadowing:  # a closure sees its enclosing function's parameters
                            params = set(found.args).union(outer[2] if outer else ())
                        top = (end, index, counted, (index, scope, params), index)
                    else:
                        function = None if top is None else top[_FUNCTION]
                        top = (end, index, False, function, index)
                    stack.append(top)
                    continue
            if role & _NESTS:
                end = node.end_byte * scale
                if top is None:
                    top = (end, None, False, None, None)
                else:
                    top = (end, None, False, top[_FUNCTION], top[_OWNER])
                stack.append(top)
                continue
            if not role & _AFTER_DEFINE:
                continue
            function = None if top is None else top[_FUNCTION]
            if role & _CALLS:
                call = readers[kind](node)
                if call is not None and not (shadowing and _calls_parameter(call, top)):
                    calls.append(call_row(call, node, function))
            if role & _IMPORTS:
                imports.extend(map(tuple, import_rows(node)))  # plain tuples, as stored
            if role & _ASSIGNS and binder is not None:
                bound_in = module_scope if top is None else None  # not a type's body
                bound_in = function[1] if function is not None else bound_in
                for target, value in binder(node, bound_in) if bound_in is not None else ():
                    bound_in[target] = value
            elif role & _ASSIGNS:
                bound = assign(node)
                if bound is not None:
                    target, value = bound
                    if shadowing and function is not None:
                        function[2].add(target)  # a local: calling it calls its value
                    scope = module_scope if function is None else function[1]
                    if value[:1] == ALIAS:  # x = y: y's type, if known; self.y's: resolved later
                        alias = value[1:]
                        known = scope.get(alias) if alias else None
                        if known is not None:
                            value = known
                        elif spec.function_aliases and alias:  # const f = obj.m
                            value = _method_alias(scope, alias)
                        elif not (prefix and alias.startswith(prefix) and function is not None):
                            scope.pop(target, None)
                            value = None
                    if value is None:
                        pass
                    elif function is not None:
                        if members == "|" and value[-1:] == ")":  # p = factory.build()
                            value = _typed_chain(scope, value) or value
                        scope[target] = value
                        if prefix and target.startswith(prefix):
                            attributes.append((function[0], target, value))
                    elif top is None:
                        module_scope[target] = value
                    elif prefix and top[_OWNER] is not None and value[:1] != ALIAS:
                        attributes.append((top[_OWNER], prefix + target, value))
            if top is not None and top[_COUNTS]:
                if role & _BRANCHES:
                    if not (role & _CATCH_ALL and _is_catch_all(node)):
                        counts[top[_ENTITY]] += 1
                elif role & _BOOLEAN:
                    operator = node.child_by_field_name("operator")
                    if operator is not None and text(operator) in bool_ops[kind]:
                        counts[top[_ENTITY]] += 1
        if counted:
            entities = result.entities
            for index, count in counts.items():
                entities[index]["cyclomatic_complexity"] = 1 + count
        if prefix:
            type_instance_attributes(
                result, attributes, prefix, self.type_context_labels, spec.implicit_instance
            )

    def _add_entity(
        self,
        found: Definition,
        top: tuple | None,
        result: Extraction,
        source: bytes,
        cut: int | None = None,
    ) -> int:
        label, name, name_node, span, body, args, class_context, bases, metadata, _ = found
        parent = None if top is None else top[_OWNER]
        metadata = dict(metadata)
        entities = result.entities
        if parent is not None and class_context is None:
            parent_row = entities[parent]
            if parent_row["entity_type"] in self.type_context_labels:
                class_context = parent_row["entity_name"]
            elif parent_row["entity_type"] == "Function" and label == "Function":
                metadata.setdefault("enclosing_function", parent_row["entity_name"])
        start_line = name_node.start_point[0] + 1
        end_byte, end_point = span.end_byte, span.end_point
        if body is not None and body.end_byte > end_byte:  # a body beside its signature
            end_byte, end_point = body.end_byte, body.end_point
        if cut is not None and cut < end_byte:  # a parse error swallowed what follows
            end_byte = cut
            end_line = source.count(b"\n", 0, cut) + 1
        else:
            end_row, end_column = end_point
            end_line = end_row + 1
            if end_column == 0 and end_line > start_line:
                end_line -= 1
        read_docstring = self.spec.docstring
        docstring = read_docstring(found) if read_docstring else leading_comment(span)
        if class_context:
            metadata["class_context"] = class_context
        if args:
            metadata["args"] = list(args)
        if docstring:
            metadata["docstring"] = docstring
        if bases:
            metadata["bases"] = [base for base, _ in bases]
        index = len(entities)
        entities.append(
            {
                "entity_type": label,
                "entity_name": name,
                "qualified_name": f"{class_context}.{name}" if class_context else name,
                "start_line": start_line,
                "end_line": max(end_line, start_line),
                "start_byte": span.start_byte,
                "end_byte": end_byte,
                "parent": parent,
                "class_context": class_context,
                "cyclomatic_complexity": None,
                "arg_count": len(args) if label == "Function" else None,
                "signature": _signature(source, span, body),
                "docstring": docstring,
                "metadata": metadata,
            }
        )
        if bases:
            result.bases.extend((index, base, kind) for base, kind in bases)
        return index


_first = itemgetter(0)
_CLOSERS = (b"}", b")", b"]", b"end", b"#", b"//", b"/*", b"*", b"--", b"{")
"""How a line at a definition's own indent may start without ending it (closing it, a directive,
a comment, or, Allman style, opening its body)."""


def _unstretched(node: Node, source: bytes) -> int | None:
    """Where a definition that holds a parse error really ends, when the error made it swallow
    what follows (a missing ``}``): before the first later line indented no deeper than the
    definition's own first line that does not close it. None when no such line exists."""
    start = node.start_byte
    line_start = source.rfind(b"\n", 0, start) + 1
    head = source[line_start:start]
    indent = len(head) - len(head.lstrip(b" \t"))
    position = source.find(b"\n", start, node.end_byte)
    while position != -1:
        following = position + 1
        line_end = source.find(b"\n", following, node.end_byte)
        line = source[following : node.end_byte if line_end == -1 else line_end]
        stripped = line.lstrip(b" \t")
        shallow = stripped.strip() and len(line) - len(stripped) <= indent
        if shallow and not stripped.startswith(_CLOSERS):
            return position
        position = line_end
    return None


_NO_PARAMETERS: frozenset[str] = frozenset()


def _calls_parameter(call: tuple, top: tuple | None) -> bool:
    """Whether a bare call calls a parameter of its function (``fn(x)`` in ``map(t, fn)``):
    a value passed in, never the definition of that name."""
    if call[2] is not None or call[1] != call[0] or top is None or top[_FUNCTION] is None:
        return False  # a call on a receiver, or written with a path
    return call[0] in top[_FUNCTION][2]


_CALLED = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\(")


def _called(receiver: str) -> str | None:
    """``Must()`` for a receiver that is one call, ``Must(NewRandom())`` (or ``pkg.F(x)``)."""
    match = _CALLED.match(receiver)
    if match is None or not receiver.endswith(")"):
        return None
    depth = 0
    for index in range(match.end() - 1, len(receiver)):
        char = receiver[index]
        depth += (char == "(") - (char == ")")
        if depth == 0:  # the call's own parentheses close here: the rest is not one call
            return f"{match[1]}()" if index == len(receiver) - 1 else None
    return None


def _bound_alias(scope: dict[str, str], name: str) -> str | None:
    """``@self.emit`` for a bare call ``emit()`` of a local bound by ``emit = self.emit``
    (Python: the resolver follows the alias); None for any other bare call."""
    value = scope.get(name)
    return value if value is not None and value[:1] == ALIAS else None


def _member_type(
    scope: dict[str, str], receiver: str, separator: str, chains: bool = False
) -> str | None:
    """``T.f.g`` for a receiver ``v.f.g`` whose ``v`` has the type ``T`` in a function's
    scope (the fields' types are looked up when calls resolve); None otherwise. With the
    separator ``|``, ``T|f.g``, where ``T`` may be dotted or a call result. With ``chains``,
    ``T.get().f`` for ``v.get(x).f`` (the results' types are looked up when calls resolve)."""
    head, dot, fields = receiver.partition(".")
    owner = scope.get(head) if dot else None  # usually None: a cheap first test
    if owner is None or owner[:1] == ALIAS or "|" in owner:
        return None
    if not fields.replace(".", "_").isidentifier():
        if separator == "|" and receiver[-1:] == ")":  # v.build(x): what T().build returns
            chain = call_chain(receiver)
            return None if chain is None else _typed_chain(scope, chain)
        if chains and "." not in owner:
            chain = argument_free_chain(fields)
            return None if chain is None else f"{owner}.{chain}"
        return None
    if separator == "|":
        return f"{owner}|{fields}"
    if "." not in owner and owner[-1:] != ")":
        return f"{owner}.{fields}"
    return None


def _method_alias(scope: dict[str, str], alias: str) -> str:
    """``@T.m`` for ``const f = obj.m`` whose ``obj`` has the type ``T`` (a class's name) in
    scope; ``@obj.m`` (or ``@g`` for ``const f = g``) otherwise: the resolver follows it."""
    head, dot, rest = alias.partition(".")
    owner = scope.get(head) if dot else None
    if owner is not None and owner.replace("_", "a").isalnum() and owner[:1].isupper():
        return f"{ALIAS}{owner}.{rest}"
    return ALIAS + alias


def _typed_chain(scope: dict[str, str], chain: str) -> str | None:
    """``T().build()`` for a call chain ``v.build()`` whose ``v`` was built as ``T()`` (or is
    annotated ``T``) in a function's scope, ``T`` a class's (capitalised) name: the
    resolver finds what ``build`` of a ``T`` returns."""
    head, dot, rest = chain.partition(".")
    owner = scope.get(head) if dot else None
    if owner is None or "|" in owner or "[" in owner:
        return None
    named = owner[:-2] if owner[-2:] == "()" else owner
    last = named.rpartition(".")[2]
    if not last[:1].isupper() or last == "Self" or not named.replace(".", "_").isidentifier():
        return None
    return f"{owner}.{rest}"


def _is_catch_all(node: Node) -> bool:
    for child in node.children:
        kind = child.type
        if not child.is_named and kind in ("default", "else", "_"):
            return True
        if kind in ("wildcard", "default_keyword", "wildcard_pattern"):
            return True
        if kind in ("match_pattern", "case_pattern") and text(child).strip() == "_":
            return True
    return False


def _signature(source: bytes, span: Node, body: Node | None) -> str:
    start = span.start_byte
    if body is not None and body.start_byte > start:
        end = body.start_byte
    else:
        end = span.end_byte
        newline = source.find(b"\n", start, end)
        if newline >= 0:
            end = newline
    ascii_text = CURRENT_SOURCE.ascii
    if ascii_text is not None:
        raw = ascii_text[start:end]
    else:
        raw = source[start:end].decode("utf-8", "replace")
    return " ".join(raw.split()).rstrip("{:").rstrip()[:SIGNATURE_CAP]


def _count_errors(root: Node) -> int:
    count = 0
    cursor = root.walk()
    while True:
        node = cursor.node
        if node.is_error or node.is_missing:
            count += 1
        if node.has_error and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return count
