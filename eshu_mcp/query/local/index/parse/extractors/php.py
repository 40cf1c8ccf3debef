"""PHP extraction: functions, methods, classes, interfaces, traits, enums, use and require."""

from __future__ import annotations

import tree_sitter_php
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors import core
from eshu_mcp.query.local.index.parse.extractors.core import (
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
        [
            "if_statement",
            "else_if_clause",
            "for_statement",
            "foreach_statement",
            "while_statement",
            "do_statement",
            "case_statement",
            "match_conditional_expression",
            "catch_clause",
            "conditional_expression",
        ]
    ),
    nested=frozenset(
        {
            "function_definition",
            "method_declaration",
            "anonymous_function",
            "arrow_function",
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
        }
    ),
    boolean_ops={"binary_expression": frozenset({"&&", "||", "and", "or"})},
)
LABELS = {
    "function_definition": "Function",
    "method_declaration": "Function",
    "class_declaration": "Class",
    "interface_declaration": "Interface",
    "trait_declaration": "Trait",
    "enum_declaration": "Enum",
}
REQUIRES = {
    "require_expression": "require",
    "require_once_expression": "require",
    "include_expression": "include",
    "include_once_expression": "include",
}


def _last(name: str) -> str:
    return name.rsplit("\\", 1)[-1]


def _params(node: Node | None) -> tuple[str, ...]:
    names = []
    for param in node.named_children if node is not None else ():
        name = param.child_by_field_name("name")
        if name is not None:
            names.append(text(name).lstrip("$"))
    return tuple(names)


def _bases(node: Node) -> tuple[tuple[str, str], ...]:
    bases = []
    for child in node.named_children:
        if child.type == "base_clause":
            bases.extend((_last(text(n)), "extends") for n in child.named_children)
        elif child.type == "class_interface_clause":
            bases.extend((_last(text(n)), "implements") for n in child.named_children)
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type == "use_declaration":
            bases.extend((_last(text(n)), "includes") for n in member.named_children)
    return tuple(bases)


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    label = LABELS[node.type]
    body = node.child_by_field_name("body")
    if label == "Function":
        metadata: dict = {}
        if text(name_node) == "__construct":
            metadata["dead_code_root_kinds"] = ["php.constructor"]
        return Definition(
            label,
            text(name_node),
            name_node,
            node,
            body,
            args=_params(node.child_by_field_name("parameters")),
            metadata=metadata,
        )
    return Definition(label, text(name_node), name_node, node, body, bases=_bases(node))


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    count = core.argument_count(node)
    kind = node.type
    if kind == "function_call_expression":
        function = node.child_by_field_name("function")
        if function is None or function.type not in ("name", "qualified_name"):
            return None
        full = text(function)
        return Call(_last(full), full, None, "call", count)
    if kind == "object_creation_expression":
        type_node = next(
            (c for c in node.named_children if c.type in ("name", "qualified_name")), None
        )
        if type_node is None:
            return None
        full = text(type_node)
        return Call(_last(full), full, None, "constructor_call", count)
    name = node.child_by_field_name("name")
    if name is None:
        return None
    receiver = node.child_by_field_name("object") or node.child_by_field_name("scope")
    receiver_text = text(receiver)
    separator = "::" if kind == "scoped_call_expression" else "->"
    return Call(
        text(name), f"{receiver_text}{separator}{text(name)}", receiver_text, "method_call", count
    )


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    line = line_of(node)
    if node.type in REQUIRES:
        strings = [c for c in node.named_children if c.type in ("string", "encapsed_string")]
        if not strings:
            return []
        module = "".join(text(c) for c in strings[0].named_children if c.type == "string_content")
        return [ImportRow(module, None, None, REQUIRES[node.type], line)]
    rows = []
    for clause in node.named_children:
        if clause.type != "namespace_use_clause":
            continue
        target = next(
            (c for c in clause.named_children if c.type in ("qualified_name", "name")), None
        )
        alias = clause.child_by_field_name("alias")
        if target is None:
            continue
        full = text(target)
        namespace, _, name = full.rpartition("\\")
        rows.append(
            ImportRow(
                namespace or full, name, text(alias) if alias is not None else None, "use", line
            )
        )
    return rows


def assign(node: Node) -> tuple[str, str] | None:
    """A local bound to a constructed type (``v = Cls()``), for type-inferred calls."""
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None or right.type != "object_creation_expression":
        return None
    type_node = next(
        (c for c in right.named_children if c.type in ("name", "qualified_name")), None
    )
    if type_node is None:
        return None
    return text(left), _last(text(type_node))


SPEC = LanguageSpec(
    key="php",
    load=tree_sitter_php.language_php,
    definitions=frozenset(LABELS),
    define=define,
    calls=frozenset(
        {
            "function_call_expression",
            "member_call_expression",
            "nullsafe_member_call_expression",
            "scoped_call_expression",
            "object_creation_expression",
        }
    ),
    call=call,
    imports=frozenset({"namespace_use_declaration", *REQUIRES}),
    import_rows=import_rows,
    assignments=frozenset({"assignment_expression"}),
    assign=assign,
    complexity=COMPLEXITY,
)
