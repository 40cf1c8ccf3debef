"""Swift extraction: classes, structs, enums, actors, protocols, extensions (as the extended
type's methods), functions and initialisers, calls, imports, conformances, typed locals and
McCabe complexity."""

from __future__ import annotations

import importlib

from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors.core import (
    Call,
    ComplexityTable,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)

SWIFT_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {
            "if_statement",
            "guard_statement",
            "for_statement",
            "while_statement",
            "repeat_while_statement",
            "switch_entry",
            "catch_block",
            "conjunction_expression",
            "disjunction_expression",
            "ternary_expression",
        }
    ),
    nested=frozenset({"lambda_literal"}),
    boolean_ops={},
    catch_all_kinds=frozenset({"switch_entry"}),
)
_SWIFT_KINDS = {
    "class": "Class",
    "struct": "Struct",
    "enum": "Enum",
    "actor": "Class",
    "extension": "ImplBlock",
}
_TYPE_KINDS = ("user_type", "optional_type", "array_type", "dictionary_type")


def _simple_type(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type == "optional_type" and node.named_child_count:
        node = node.named_children[0]
    if node.type != "user_type":
        return None
    name = text(node).split("<", 1)[0].rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def _swift_parameters(node: Node) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    names: list[str] = []
    typed: list[tuple[str, str]] = []
    for parameter in node.named_children:
        if parameter.type != "parameter":
            continue
        name = parameter.child_by_field_name("name")
        if name is None or name.type != "simple_identifier":
            continue
        names.append(text(name))
        kind = _simple_type(
            next((c for c in parameter.named_children if c.type in _TYPE_KINDS), None)
        )
        if kind:
            typed.append((text(name), kind))
    return tuple(names), tuple(typed)


def _swift_define(node: Node) -> Definition | None:
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    words = text(modifiers).split() if modifiers is not None else []
    metadata: dict = {}
    if "override" in words:
        metadata["override"] = True
    if "private" in words or "fileprivate" in words:
        metadata["visibility"] = "private"
    elif "public" in words or "open" in words:
        metadata["visibility"] = "public"
    body = node.child_by_field_name("body")
    if node.type == "init_declaration":
        init = next((c for c in node.children if c.type == "init"), node)
        args, typed = _swift_parameters(node)
        metadata["dead_code_root_kinds"] = ["swift.initializer"]
        return Definition(
            "Function", "init", init, node, body, args, metadata=metadata, locals=typed
        )
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node)
    if node.type in ("function_declaration", "protocol_function_declaration"):
        args, typed = _swift_parameters(node)
        roots = ["swift.override"] if "override" in words else []
        if not (name[:1].isalpha() or name[:1] == "_"):
            roots.append("swift.operator")  # static func ==: run where == is written
        if roots:
            metadata["dead_code_root_kinds"] = roots
        return Definition(
            "Function", name, name_node, node, body, args, metadata=metadata, locals=typed
        )
    if node.type == "protocol_declaration":
        label = "Interface"
        keyword = "protocol"
    else:
        kind = node.child_by_field_name("declaration_kind")
        keyword = text(kind) if kind is not None else "class"
        label = _SWIFT_KINDS.get(keyword, "Class")
        if keyword == "extension":
            name = _simple_type(name_node) or name
    bases = []
    for child in node.named_children:
        if child.type != "inheritance_specifier":
            continue
        base = _simple_type(child.child_by_field_name("inherits_from"))
        if base:
            first = keyword == "class" and not bases
            bases.append((base, "extends" if first else "implements"))
    return Definition(label, name, name_node, node, body, bases=tuple(bases), metadata=metadata)


def _swift_call(node: Node) -> Call | None:
    if node.named_child_count < 2:
        return None
    callee, suffix = node.named_children[0], node.named_children[1]
    if suffix.type != "call_suffix":
        return None
    arguments = next((c for c in suffix.named_children if c.type == "value_arguments"), None)
    count = arguments.named_child_count if arguments is not None else 0
    if callee.type == "simple_identifier":
        name = text(callee)
        return Call(name, name, None, "call", count)
    if callee.type == "navigation_expression":
        target = callee.child_by_field_name("target")
        navigation = callee.child_by_field_name("suffix")
        field = navigation.child_by_field_name("suffix") if navigation is not None else None
        if target is None or field is None or field.type != "simple_identifier":
            return None
        owner = text(target).rstrip("?!")
        return Call(text(field), f"{owner}.{text(field)}", owner, "method_call", count)
    return None


def _swift_imports(node: Node) -> list[ImportRow]:
    module = next((c for c in node.named_children if c.type == "identifier"), None)
    if module is None:
        return []
    return [ImportRow(text(module), None, None, "import", line_of(node))]


def _swift_assign(node: Node) -> tuple[str, str] | None:
    pattern = node.child_by_field_name("name")
    bound = pattern.child_by_field_name("bound_identifier") if pattern is not None else None
    if bound is None:
        return None
    annotation = next((c for c in node.named_children if c.type == "type_annotation"), None)
    if annotation is not None:
        declared = _simple_type(
            next((c for c in annotation.named_children if c.type in _TYPE_KINDS), None)
        )
        if declared:
            return text(bound), declared
    value = node.child_by_field_name("value")
    if value is not None and value.type == "call_expression" and value.named_child_count:
        callee = text(value.named_children[0])
        if callee[:1].isupper() and callee.isidentifier():
            return text(bound), callee
    return None


SWIFT = LanguageSpec(
    key="swift",
    parameters_shadow_calls=True,
    load=lambda: importlib.import_module("tree_sitter_swift").language(),
    definitions=frozenset(
        {
            "class_declaration",
            "protocol_declaration",
            "function_declaration",
            "protocol_function_declaration",
            "init_declaration",
        }
    ),
    define=_swift_define,
    calls=frozenset({"call_expression"}),
    call=_swift_call,
    imports=frozenset({"import_declaration"}),
    import_rows=_swift_imports,
    assignments=frozenset({"property_declaration"}),
    assign=_swift_assign,
    complexity=SWIFT_COMPLEXITY,
    implicit_instance=True,
)
