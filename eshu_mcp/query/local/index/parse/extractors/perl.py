"""Perl extraction: packages (with their ``use parent``/``@ISA`` bases), subs as their
package's methods, function and method calls, ``use``/``require`` imports, complexity."""

from __future__ import annotations

import ctypes
import importlib
from bisect import bisect_right

from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors.core import (
    CURRENT_SOURCE,
    Call,
    ComplexityTable,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)

COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {
            "conditional_statement",
            "elsif",
            "loop_statement",
            "for_statement",
            "cstyle_for_statement",
            "conditional_expression",
            "postfix_conditional_expression",
            "postfix_loop_expression",
            "binary_expression",
            "lowprec_logical_expression",
        }
    ),
    nested=frozenset({"anonymous_subroutine_expression"}),
    boolean_ops={},
)
PRAGMAS = frozenset(
    {"strict", "warnings", "utf8", "lib", "constant", "vars", "feature", "integer", "overload"}
)
INHERITING = frozenset({"parent", "base"})


def _short(package: str) -> str:
    """``Shop::Cart`` -> ``Cart``: a package as its subs' class context."""
    return package.rsplit("::", 1)[-1]


class _Packages:
    """Where each ``package X;`` statement of a file starts, read once per file: a sub
    belongs to the last package declared before it."""

    source: object = None
    starts: list[int] = []
    names: list[str] = []

    @classmethod
    def at(cls, node: Node) -> str | None:
        source = CURRENT_SOURCE.data
        if source is None or source is not cls.source:
            root = node
            while root.parent is not None:
                root = root.parent
            found = [
                (child.start_byte, text(child.child_by_field_name("name")))
                for child in root.named_children
                if child.type == "package_statement" and child.child_by_field_name("name")
            ]
            cls.source, cls.starts, cls.names = source, [s for s, _ in found], [n for _, n in found]
        index = bisect_right(cls.starts, node.start_byte) - 1
        return cls.names[index] if index >= 0 else None


def _inherited(statement: Node) -> list[str]:
    """The packages a ``use parent``/``use base`` or ``@ISA = (...)`` statement names."""
    if statement.type == "use_statement":
        module = statement.child_by_field_name("module")
        if module is None or text(module) not in INHERITING:
            return []
        words = " ".join(
            text(c.child_by_field_name("content") or c)
            for c in statement.named_children[1:]
            if c.type in ("string_literal", "quoted_word_list", "interpolated_string_literal")
        )
        return [word for word in words.split() if word != "-norequire"]
    source = text(statement)
    if "@ISA" not in source or "=" not in source:
        return []
    values = source.split("=", 1)[1]
    return [w.strip("'\"(); ") for w in values.split(",") if w.strip("'\"(); ")]


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node)
    if node.type == "subroutine_declaration_statement":
        enclosing = node.parent
        in_block = enclosing is not None and enclosing.type == "block"
        package = None if in_block else _Packages.at(node)
        metadata: dict = {"package": package} if package else {}
        if name.startswith("_"):
            metadata["visibility"] = "private"
        if name in ("new", "DESTROY", "AUTOLOAD", "import", "BEGIN", "END"):
            metadata["dead_code_root_kinds"] = [f"perl.{name.lower()}"]
        return Definition(
            "Function",
            name,
            name_node,
            node,
            node.child_by_field_name("body"),
            class_context=_short(package) if package else None,
            metadata=metadata,
        )
    bases: list[str] = []
    block = next((c for c in node.named_children if c.type == "block"), None)
    following = block.named_children if block is not None else []
    if block is None:  # package X; ... up to the next package statement
        sibling = node.next_named_sibling
        while sibling is not None and sibling.type != "package_statement":
            following.append(sibling)
            sibling = sibling.next_named_sibling
    for statement in following:
        inner = statement.named_children[0] if statement.type == "expression_statement" else None
        bases += _inherited(inner if inner is not None else statement)
    return Definition(
        "Module",
        _short(name),
        name_node,
        node,
        block,
        bases=tuple((_short(base), "extends") for base in bases if base),
        metadata={"package": name},
    )


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    if node.type == "method_call_expression":
        invocant = node.child_by_field_name("invocant")
        method = node.child_by_field_name("method")
        if invocant is None or method is None:
            return None
        owner = text(invocant)
        if owner == "$self":
            owner = "self"
        elif invocant.type == "bareword":  # Shop::Cart->new: a class method
            owner = _short(owner)
        name = text(method)
        if name.startswith("SUPER::"):  # $self->SUPER::m: the parent package's m
            name, owner = name[7:], "super"
        arguments = node.child_by_field_name("arguments")
        count = 0 if arguments is None else max(1, arguments.named_child_count)
        return Call(name, f"{owner}->{name}", owner, "method_call", count)
    function = node.child_by_field_name("function")
    if function is None:
        return None
    written = text(function)
    arguments = node.child_by_field_name("arguments")
    count = 0 if arguments is None else 1
    package, _, name = written.rpartition("::")
    if package:  # Shop::Money::round(...)
        return Call(name, written, _short(package), "call", count)
    return Call(written, written, None, "call", count)


def import_rows(node: Node) -> list[ImportRow]:
    """The names one ``use``/``require`` brings in."""
    if node.type == "require_expression":
        word = node.named_children[0] if node.named_child_count else None
        if word is None or word.type != "bareword":
            return []
        return [ImportRow(text(word), None, None, "require", line_of(node))]
    module = node.child_by_field_name("module")
    if module is None or text(module) in PRAGMAS or text(module) in INHERITING:
        return []
    line = line_of(node)
    listed = [c for c in node.named_children[1:] if c.type == "quoted_word_list"]
    if listed:
        content = listed[0].child_by_field_name("content")
        names = text(content).split() if content is not None else []
        return [ImportRow(text(module), n, None, "use", line) for n in names if n[:1].isalpha()]
    return [ImportRow(text(module), "*", None, "use", line)]


def _load() -> object:
    """The grammar, as the capsule tree-sitter takes (this wheel hands out a bare pointer)."""
    pointer = importlib.import_module("tree_sitter_perl").language()
    if not isinstance(pointer, int):
        return pointer
    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype = ctypes.py_object
    capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
    return capsule(pointer, b"tree_sitter.Language", None)


SPEC = LanguageSpec(
    key="perl",
    load=_load,
    definitions=frozenset({"subroutine_declaration_statement", "package_statement"}),
    define=define,
    calls=frozenset(
        {"function_call_expression", "ambiguous_function_call_expression", "method_call_expression"}
    ),
    call=call,
    imports=frozenset({"use_statement", "require_expression"}),
    import_rows=import_rows,
    complexity=COMPLEXITY,
    query_patterns={
        "binary_expression": '[(binary_expression "&&") (binary_expression "||")'
        ' (binary_expression "//")] @binary_expression',
    },
)
