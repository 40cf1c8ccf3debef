"""
The language-independent part of extraction: one tree-sitter query per language captures
definitions, calls, imports and decision points; a single sweep in source order assigns
each capture to its enclosing definition.

Per-language modules supply a :class:`LanguageSpec` (node-kind tables as data, plus small
functions that read one node: a definition's name, a call's callee, an import's module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import Factory, define, frozen
from tree_sitter import Language, Node, Parser, Query, QueryCursor

EXTRACTOR_VERSION = "1"
"""Bumped whenever extraction output changes, so cached results are invalidated."""

DOCSTRING_CAP = 4096
SIGNATURE_CAP = 400
TYPE_LABELS = frozenset(
    {"Class", "Struct", "Interface", "Trait", "Enum", "Union", "ImplBlock", "Record", "Module"}
)


@frozen
class Definition:
    """What a language module read from one definition node."""

    label: str
    name: str
    name_node: Node
    span: Node
    body: Node | None = None
    args: tuple[str, ...] = ()
    class_context: str | None = None
    bases: tuple[tuple[str, str], ...] = ()
    metadata: Mapping[str, Any] = Factory(dict)


@frozen
class Call:
    """A call expression's callee as written."""

    name: str
    full_name: str
    receiver: str | None
    kind: str = "call"
    arg_count: int | None = None


@frozen
class ImportRow:
    """One imported name (or whole module) at a line."""

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


def text(node: Node | None) -> str:
    """The node's source text, decoded leniently."""
    if node is None:
        return ""
    return node.text.decode("utf-8", "replace")


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


@define
class _Frame:
    end: int
    entity: int | None
    is_function: bool
    counts_complexity: bool
    locals: dict[str, str] = Factory(dict)


@define
class Extraction:
    """Everything extracted from one file, as plain picklable values."""

    entities: list[dict[str, Any]] = Factory(list)
    calls: list[tuple] = Factory(list)
    imports: list[tuple] = Factory(list)
    bases: list[tuple[int, str, str]] = Factory(list)
    parse_errors: int = 0
    module_doc: tuple[str, int, int, int] | None = None  # text, end line, start byte, end byte


class LanguageEngine:
    """A loaded grammar plus its compiled capture query; one per language per process."""

    def __init__(self, spec: LanguageSpec) -> None:
        self.spec = spec
        self.language = Language(spec.load())
        self.parser = Parser(self.language)
        table = spec.complexity
        kinds = set(spec.definitions) | spec.calls | spec.imports | spec.assignments
        if table is not None:
            kinds |= table.branches | table.nested | set(table.boolean_ops)
        self.query = Query(self.language, " ".join(f"({k}) @{k}" for k in sorted(kinds)))

    def extract(self, source: bytes, entity_cap: int) -> Extraction:
        """Parse ``source`` and extract entities, calls, imports and bases."""
        tree = self.parser.parse(source)
        result = Extraction()
        root = tree.root_node
        if root.has_error:
            result.parse_errors = _count_errors(root)
        items = []
        for kind, nodes in QueryCursor(self.query).captures(root).items():
            for node in nodes:
                items.append((node.start_byte, -node.end_byte, kind, node))
        items.sort(key=lambda item: (item[0], item[1]))
        self._sweep(items, result)
        if self.spec.module_docstring is not None and root.named_child_count:
            doc = self.spec.module_docstring(root)
            if doc:
                first = root.named_children[0]
                result.module_doc = (doc, first.end_point[0] + 1, first.start_byte, first.end_byte)
        if len(result.entities) > entity_cap:
            result.entities = []
            result.bases = []
            result.calls = [(None, *call[1:]) for call in result.calls]
        return result

    def _sweep(self, items: list, result: Extraction) -> None:
        spec = self.spec
        table = spec.complexity
        branches = table.branches if table else frozenset()
        nested = table.nested if table else frozenset()
        bool_ops = table.boolean_ops if table else {}
        catch_all = table.catch_all_kinds if table else frozenset()
        stack: list[_Frame] = []
        counts: dict[int, int] = {}
        for start, neg_end, kind, node in items:
            while stack and stack[-1].end <= start:
                stack.pop()
            if kind in spec.definitions:
                found = spec.define(node)
                if found is not None:
                    index = self._add_entity(found, stack, result)
                    is_fn = found.label == "Function"
                    stack.append(_Frame(-neg_end, index, is_fn, is_fn and table is not None))
                    if is_fn:
                        counts[index] = 0
                    continue
            if kind in nested:
                stack.append(_Frame(-neg_end, None, False, False))
                continue
            if kind in spec.calls:
                call = spec.call(node)
                if call is not None:
                    caller = _innermost_function(stack)
                    inferred = None
                    if caller is not None and call.receiver:
                        inferred = caller.locals.get(call.receiver)
                    result.calls.append(
                        (
                            None if caller is None else caller.entity,
                            call.name,
                            call.full_name,
                            call.receiver,
                            inferred,
                            call.kind,
                            call.arg_count,
                            line_of(node),
                        )
                    )
            if kind in spec.imports:
                result.imports.extend(
                    (r.module, r.imported_name, r.alias, r.import_type, r.line)
                    for r in spec.import_rows(node)
                )
            if kind in spec.assignments:
                caller = _innermost_function(stack)
                bound = spec.assign(node)
                if bound is not None and caller is not None:
                    caller.locals[bound[0]] = bound[1]
            if stack and stack[-1].counts_complexity:
                frame = stack[-1]
                if kind in branches and not (kind in catch_all and _is_catch_all(node)):
                    counts[frame.entity] += 1
                elif kind in bool_ops:
                    operator = node.child_by_field_name("operator")
                    if operator is not None and text(operator) in bool_ops[kind]:
                        counts[frame.entity] += 1
        if table is not None:
            for index, count in counts.items():
                result.entities[index]["cyclomatic_complexity"] = 1 + count

    def _add_entity(self, found: Definition, stack: list[_Frame], result: Extraction) -> int:
        parent_frame = next((f for f in reversed(stack) if f.entity is not None), None)
        parent = None if parent_frame is None else parent_frame.entity
        class_context = found.class_context
        metadata = dict(found.metadata)
        if parent is not None and class_context is None:
            parent_row = result.entities[parent]
            if parent_row["entity_type"] in self.spec.type_context_labels:
                class_context = parent_row["entity_name"]
            elif parent_row["entity_type"] == "Function" and found.label == "Function":
                metadata.setdefault("enclosing_function", parent_row["entity_name"])
        span = found.span
        start_line = line_of(found.name_node)
        end_line = span.end_point[0] + 1
        if span.end_point[1] == 0 and end_line > start_line:
            end_line -= 1
        docstring = self.spec.docstring(found) if self.spec.docstring else leading_comment(span)
        if class_context:
            metadata["class_context"] = class_context
        if found.args:
            metadata["args"] = list(found.args)
        if docstring:
            metadata["docstring"] = docstring
        if found.bases:
            metadata["bases"] = [name for name, _ in found.bases]
        qualified = f"{class_context}.{found.name}" if class_context else found.name
        index = len(result.entities)
        result.entities.append(
            {
                "entity_type": found.label,
                "entity_name": found.name,
                "qualified_name": qualified,
                "start_line": start_line,
                "end_line": max(end_line, start_line),
                "start_byte": span.start_byte,
                "end_byte": span.end_byte,
                "parent": parent,
                "class_context": class_context,
                "cyclomatic_complexity": None,
                "arg_count": len(found.args) if found.label == "Function" else None,
                "signature": _signature(span, found.body),
                "docstring": docstring,
                "metadata": metadata,
            }
        )
        result.bases.extend((index, name, kind) for name, kind in found.bases)
        return index


def _innermost_function(stack: list[_Frame]) -> _Frame | None:
    for frame in reversed(stack):
        if frame.is_function:
            return frame
    return None


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


def _signature(span: Node, body: Node | None) -> str:
    raw = span.text
    if body is not None and body.start_byte > span.start_byte:
        raw = raw[: body.start_byte - span.start_byte]
    else:
        raw = raw.split(b"\n", 1)[0]
    signature = " ".join(raw.decode("utf-8", "replace").split())
    return signature.rstrip("{:").rstrip()[:SIGNATURE_CAP]


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
