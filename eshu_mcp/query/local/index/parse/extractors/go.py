"""Go extraction: functions, methods (receiver type as class context), structs, interfaces."""

from __future__ import annotations

import tree_sitter_go
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
        ["if_statement", "for_statement", "expression_case", "type_case", "communication_case"]
    ),
    nested=frozenset({"function_declaration", "method_declaration", "func_literal"}),
    boolean_ops={"binary_expression": frozenset({"&&", "||"})},
)


def _params(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    names = []
    for decl in node.named_children:
        idents = [text(c) for c in decl.children_by_field_name("name")]
        names.extend(idents or ["_"])
    return tuple(names)


def type_name(type_text: str) -> str | None:
    """The named type a Go type expression denotes (``*pkg.Server[T]`` -> ``Server``); None
    for slices, maps, channels, functions and literal types."""
    name = type_text.lstrip("*").split("[", 1)[0].rsplit(".", 1)[-1]
    return name if name.isidentifier() and type_text[:1] not in "[(" else None


def _typed_params(*lists: Node | None) -> tuple[tuple[str, str], ...]:
    """Parameter (and receiver) names with the named type each is declared with."""
    found = []
    for node in lists:
        for decl in node.named_children if node is not None else ():
            type_node = decl.child_by_field_name("type")
            named = type_name(text(type_node)) if type_node is not None else None
            if named is not None:
                found.extend((text(c), named) for c in decl.children_by_field_name("name"))
    return tuple(found)


def _receiver_type(method: Node) -> str | None:
    receiver = method.child_by_field_name("receiver")
    if receiver is None:
        return None
    for decl in receiver.named_children:
        type_node = decl.child_by_field_name("type")
        while type_node is not None and type_node.type in ("pointer_type", "generic_type"):
            inner = type_node.named_children
            type_node = inner[0] if inner else None
        if type_node is not None:
            return text(type_node)
    return None


def _root_kinds(name: str, is_method: bool) -> list[str]:
    if not is_method and name in ("main", "init"):
        return ["go.entrypoint"]
    if name[:1].isupper():
        return ["go.exported_symbol"]
    return []


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node)
    if node.type == "method_elem":  # a method an interface requires: its method set
        return Definition(
            "Function",
            name,
            name_node,
            node,
            args=_params(node.child_by_field_name("parameters")),
            metadata={"interface_method": True, "dead_code_root_kinds": ["go.interface_method"]},
        )
    if node.type in ("function_declaration", "method_declaration"):
        is_method = node.type == "method_declaration"
        metadata: dict = {"exported": name[:1].isupper()}
        roots = _root_kinds(name, is_method)
        if roots:
            metadata["dead_code_root_kinds"] = roots
        return Definition(
            "Function",
            name,
            name_node,
            node,
            node.child_by_field_name("body"),
            args=_params(node.child_by_field_name("parameters")),
            class_context=_receiver_type(node) if is_method else None,
            metadata=metadata,
            locals=_typed_params(
                node.child_by_field_name("receiver"), node.child_by_field_name("parameters")
            ),
        )
    type_node = node.child_by_field_name("type")
    span = (
        node.parent if node.parent is not None and node.parent.type == "type_declaration" else node
    )
    if span.type == "type_declaration" and span.named_child_count > 1:
        span = node
    bases: list[tuple[str, str]] = []
    typed: dict[str, str] = {}
    if type_node is not None and type_node.type == "struct_type":
        label = "Struct"
        fields = type_node.named_children[0] if type_node.named_child_count else None
        for field in fields.named_children if fields is not None else ():
            if field.type != "field_declaration":
                continue
            field_type = field.child_by_field_name("type")
            if field_type is None:
                continue
            names = field.children_by_field_name("name")
            if not names:
                bases.append((text(field_type).lstrip("*").rsplit(".", 1)[-1], "embeds"))
                continue
            named = type_name(text(field_type))
            if named is not None:
                typed.update((text(n), named) for n in names)
    elif type_node is not None and type_node.type == "interface_type":
        label = "Interface"
    else:
        label = "TypeAlias"
    metadata = {"exported": name[:1].isupper()}
    if typed:  # receiver types of s.field.m() calls, read at resolution
        metadata["attribute_types"] = typed
    if name[:1].isupper():
        metadata["dead_code_root_kinds"] = ["go.exported_symbol"]
    return Definition(
        label, name, name_node, span, type_node, bases=tuple(bases), metadata=metadata
    )


SELECTOR = core.MemberAccess("selector_expression", "field", "operand")


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    function = node.child_by_field_name("function")
    count = core.argument_count(node)
    if function is None:
        return None
    return core.plain_or_method_call(function, count, SELECTOR)


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    path = node.child_by_field_name("path")
    if path is None:
        return []
    module = text(path).strip('"`')
    alias_node = node.child_by_field_name("name")
    alias = text(alias_node) if alias_node is not None else None
    return [ImportRow(module, None, alias, "import", line_of(node))]


def assign(node: Node) -> tuple[str, str] | None:
    """A local bound to a constructed or declared type (``v := &Cls{}``, ``var v Cls``), for
    type-inferred calls."""
    if node.type == "var_spec":
        names = node.children_by_field_name("name")
        type_node = node.child_by_field_name("type")
        named = type_name(text(type_node)) if type_node is not None else None
        return (text(names[0]), named) if named is not None and len(names) == 1 else None
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None or not left.named_child_count:
        return None
    if right.named_child_count != 1:
        return None
    value = right.named_children[0]
    if value.type == "call_expression":  # v := New(), v, err := pkg.Open(): the result type
        function = value.child_by_field_name("function")
        if function is None or function.type not in ("identifier", "selector_expression"):
            return None
        if function.type == "selector_expression":
            operand = function.child_by_field_name("operand")
            if operand is None or operand.type != "identifier":
                return None
        return text(left.named_children[0]), text(function) + "()"
    if left.named_child_count != 1:
        return None
    if value.type == "unary_expression":
        operand = value.child_by_field_name("operand")
        value = operand if operand is not None else value
    if value.type != "composite_literal":
        return None
    type_node = value.child_by_field_name("type")
    if type_node is None:
        return None
    return text(left.named_children[0]), text(type_node).rsplit(".", 1)[-1]


_VALUES = "[(identifier) (selector_expression)]"
REFERENCE_PATTERN = core.reference_patterns(
    ("argument_list", "literal_element"), _VALUES
) + "".join(
    f" ({parent} (expression_list {_VALUES} @reference))"
    for parent in (
        "short_var_declaration right:",
        "assignment_statement right:",
        "return_statement",
    )
)
"""Function values: passed, assigned, returned, placed in a composite literal."""


def reference(node: Node) -> tuple[str, str | None] | None:
    """(name, receiver) of a function value (``handle``, ``pkg.Handle``, ``s.handle``)."""
    return core.value_reference(node, SELECTOR)


SPEC = LanguageSpec(
    key="go",
    load=tree_sitter_go.language,
    definitions=frozenset(
        {"function_declaration", "method_declaration", "type_spec", "method_elem"}
    ),
    define=define,
    calls=frozenset({"call_expression"}),
    call=call,
    imports=frozenset({"import_spec"}),
    import_rows=import_rows,
    assignments=frozenset({"short_var_declaration", "var_spec"}),
    assign=assign,
    typed_members=True,
    call_result_receivers=True,
    complexity=COMPLEXITY,
    references=frozenset({"reference"}),
    reference=reference,
    query_patterns={"reference": REFERENCE_PATTERN},
)
