"""Kotlin and Scala extraction: classes, objects, interfaces/traits, functions, calls,
imports, inheritance, typed locals and McCabe complexity."""

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


def _grammar(module: str):
    return lambda: importlib.import_module(module).language()


def _simple_type(node: Node | None) -> str | None:
    """``pkg.Box<T>?`` -> ``Box``: the named type a type node denotes, if any."""
    if node is None:
        return None
    name = text(node).split("<", 1)[0].split("[", 1)[0].rstrip("?").rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def _constructed(name: str) -> str | None:
    """The class a bare call constructs, by the JVM naming convention (``Money(1)``)."""
    last = name.rsplit(".", 1)[-1]
    return last if last[:1].isupper() and last.isidentifier() else None


# Kotlin ---------------------------------------------------------------------------------

KOTLIN_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {
            "if_expression",
            "for_statement",
            "while_statement",
            "do_while_statement",
            "when_entry",
            "catch_block",
            "binary_expression",
        }
    ),
    nested=frozenset({"lambda_literal", "anonymous_function"}),
    boolean_ops={},
    catch_all_kinds=frozenset({"when_entry"}),
)
_KOTLIN_LABELS = {"interface": "Interface", "enum": "Enum", "object": "Class"}


def _kotlin_parameters(node: Node) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    names: list[str] = []
    typed: list[tuple[str, str]] = []
    for child in node.named_children:
        if child.type not in ("function_value_parameters", "class_parameters"):
            continue
        for parameter in child.named_children:
            if parameter.type not in ("parameter", "class_parameter"):
                continue
            name = next((c for c in parameter.named_children if c.type == "identifier"), None)
            if name is None:
                continue
            names.append(text(name))
            kind = _simple_type(
                next((c for c in parameter.named_children if c.type.endswith("_type")), None)
            )
            if kind:
                typed.append((text(name), kind))
    return tuple(names), tuple(typed)


def _kotlin_define(node: Node) -> Definition | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    name = text(name_node)
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    modifier_text = text(modifiers).split() if modifiers is not None else []
    metadata: dict = {}
    roots = [f"kotlin.{word}" for word in ("override", "operator") if word in modifier_text]
    if roots:  # run where the base's method or the operator is
        metadata["dead_code_root_kinds"] = roots
    if "override" in modifier_text:
        metadata["override"] = True
    if "private" in modifier_text or "internal" in modifier_text:
        metadata["visibility"] = "private" if "private" in modifier_text else "internal"
    if node.type == "function_declaration":
        args, typed = _kotlin_parameters(node)
        receiver = None
        for child in node.children:  # ``fun String.slug()``: a type before the name
            if child == name_node:
                break
            if child.type in ("user_type", "nullable_type"):
                receiver = _simple_type(child)
        if receiver:
            metadata["extends_type"] = receiver
        if name == "main" and node.parent is not None and node.parent.type == "source_file":
            metadata.setdefault("dead_code_root_kinds", []).append("kotlin.main")
        body = next((c for c in node.named_children if c.type == "function_body"), None)
        return Definition(
            "Function", name, name_node, node, body, args=args, metadata=metadata, locals=typed
        )
    keyword = next((c.type for c in node.children if not c.is_named), "class")
    if node.type == "object_declaration":
        keyword = "object"
    if "enum" in modifier_text:
        keyword = "enum"
    bases = []
    for child in node.named_children:
        if child.type != "delegation_specifiers":
            continue
        for specifier in child.named_children:
            inner = specifier.named_children[0] if specifier.named_child_count else specifier
            extends = inner.type == "constructor_invocation"
            base = _simple_type(inner.named_children[0] if extends else inner)
            if base:
                bases.append((base, "extends" if extends else "implements"))
    body = next((c for c in node.named_children if c.type.endswith("class_body")), None)
    fields = _kotlin_fields(node, body)
    if fields:  # receiver types of repo.save() in its methods, read at resolution
        metadata["attribute_types"] = fields
    return Definition(
        _KOTLIN_LABELS.get(keyword, "Class"),
        name,
        name_node,
        node,
        body,
        bases=tuple(bases),
        metadata=metadata,
    )


def _kotlin_fields(node: Node, body: Node | None) -> dict[str, str]:
    """A class's properties with their types: ``val``/``var`` constructor parameters and
    typed or constructed property declarations of its body."""
    fields: dict[str, str] = {}
    constructor = next((c for c in node.named_children if c.type == "primary_constructor"), None)
    parameters = constructor.named_children[0] if constructor is not None else None
    for parameter in parameters.named_children if parameters is not None else ():
        words = text(parameter).split(":", 1)[0].split()
        name = next((c for c in parameter.named_children if c.type == "identifier"), None)
        kind = _simple_type(
            next((c for c in parameter.named_children if c.type.endswith("_type")), None)
        )
        if name is not None and kind and ("val" in words or "var" in words):
            fields[text(name)] = kind
    for member in body.named_children if body is not None else ():
        if member.type == "property_declaration":
            bound = _kotlin_assign(member)
            if bound is not None:
                fields[bound[0]] = bound[1]
    return fields


def _kotlin_call(node: Node) -> Call | None:
    callee = node.named_children[0] if node.named_child_count else None
    if callee is None:
        return None
    arguments = next((c for c in node.named_children if c.type == "value_arguments"), None)
    count = arguments.named_child_count if arguments is not None else None
    while callee.type == "unary_expression" and callee.named_child_count == 1:
        callee = callee.named_children[0]  # ``!g(x)`` parses as ``(!g)(x)``
    if callee.type == "identifier":
        name = text(callee)
        return Call(name, name, None, "call", count)
    if callee.type == "navigation_expression" and callee.named_child_count == 2:
        receiver, field = callee.named_children
        if field.type != "identifier":
            return None
        while receiver.type == "unary_expression" and receiver.named_child_count == 1:
            receiver = receiver.named_children[0]  # ``!a.b(x)``: ``b`` of ``a``
        owner = text(receiver).removesuffix("!!").removesuffix("?")
        return Call(text(field), f"{owner}.{text(field)}", owner, "method_call", count)
    return None


def _kotlin_imports(node: Node) -> list[ImportRow]:
    path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    if path is None:
        return []
    dotted = text(path)
    alias = next((text(c) for c in node.named_children if c.type == "identifier"), None)
    if text(node).rstrip().endswith("*"):
        return [ImportRow(dotted, "*", None, "import", line_of(node))]
    module, _, name = dotted.rpartition(".")
    return [ImportRow(module, name, alias, "import", line_of(node))]


def _kotlin_assign(node: Node) -> tuple[str, str] | None:
    declared = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    if declared is None or not declared.named_child_count:
        return None
    target = text(declared.named_children[0])
    typed = _simple_type(declared.named_children[1]) if declared.named_child_count > 1 else None
    if typed:
        return target, typed
    value = node.named_children[-1]
    if value.type == "call_expression" and value.named_child_count:
        constructed = _constructed(text(value.named_children[0]))
        if constructed:
            return target, constructed
    return None


KOTLIN = LanguageSpec(
    key="kotlin",
    parameters_shadow_calls=True,
    load=_grammar("tree_sitter_kotlin"),
    definitions=frozenset({"class_declaration", "object_declaration", "function_declaration"}),
    define=_kotlin_define,
    calls=frozenset({"call_expression"}),
    call=_kotlin_call,
    imports=frozenset({"import"}),
    import_rows=_kotlin_imports,
    assignments=frozenset({"property_declaration"}),
    assign=_kotlin_assign,
    complexity=KOTLIN_COMPLEXITY,
    implicit_instance=True,
    query_patterns={
        "binary_expression": '[(binary_expression "&&") (binary_expression "||")]'
        " @binary_expression"
    },
)


# Scala ----------------------------------------------------------------------------------

SCALA_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {"if_expression", "while_expression", "for_expression", "case_clause", "catch_clause"}
    ),
    nested=frozenset({"lambda_expression"}),
    boolean_ops={"infix_expression": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"case_clause"}),
)
_SCALA_LABELS = {
    "class_definition": "Class",
    "object_definition": "Class",
    "trait_definition": "Trait",
    "enum_definition": "Enum",
    "function_definition": "Function",
    "function_declaration": "Function",
}


def _scala_parameters(node: Node) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    names: list[str] = []
    typed: list[tuple[str, str]] = []
    for group in node.children_by_field_name("parameters"):
        for parameter in group.named_children:
            name = parameter.child_by_field_name("name")
            if name is None:
                continue
            names.append(text(name))
            kind = _simple_type(parameter.child_by_field_name("type"))
            if kind:
                typed.append((text(name), kind))
    return tuple(names), tuple(typed)


def _scala_define(node: Node) -> Definition | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    label = _SCALA_LABELS[node.type]
    name = text(name_node)
    modifiers = next((c for c in node.named_children if c.type == "modifiers"), None)
    words = text(modifiers).split() if modifiers is not None else []
    metadata: dict = {}
    if "override" in words:
        metadata["override"] = True
        metadata["dead_code_root_kinds"] = ["scala.override"]
    if any(word.startswith(("private", "protected")) for word in words):
        metadata["visibility"] = "private"
    body = node.child_by_field_name("body")
    if label == "Function":
        args, typed = _scala_parameters(node)
        if name == "main" and node.parent is not None:
            metadata.setdefault("dead_code_root_kinds", []).append("scala.main")
        return Definition(
            label, name, name_node, node, body, args=args, metadata=metadata, locals=typed
        )
    bases = []
    extends = node.child_by_field_name("extend")
    types = extends.children_by_field_name("type") if extends is not None else []
    for index, base in enumerate(c for c in types if c.is_named):
        simple = _simple_type(base)
        if simple:
            bases.append((simple, "extends" if index == 0 else "implements"))
    return Definition(label, name, name_node, node, body, bases=tuple(bases), metadata=metadata)


def _scala_call(node: Node) -> Call | None:
    if node.type == "instance_expression":
        kind = next((c for c in node.named_children if "type" in c.type), None)
        name = _simple_type(kind)
        if name is None:
            return None
        arguments = node.child_by_field_name("arguments")
        count = arguments.named_child_count if arguments is not None else 0
        return Call(name, f"new {name}", None, "constructor_call", count)
    function = node.child_by_field_name("function")
    arguments = node.child_by_field_name("arguments")
    count = arguments.named_child_count if arguments is not None else None
    if function is not None and function.type == "generic_function":  # f[A](x)
        function = function.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier":
        name = text(function)
        return Call(name, name, None, "call", count)
    if function.type == "field_expression":
        field = function.child_by_field_name("field")
        value = function.child_by_field_name("value")
        if field is None or value is None:
            return None
        return Call(text(field), text(function), text(value), "method_call", count)
    return None


def _scala_imports(node: Node) -> list[ImportRow]:
    path = [text(c) for c in node.children_by_field_name("path") if c.is_named]
    if not path:
        return []
    line = line_of(node)
    selectors = next((c for c in node.named_children if c.type == "namespace_selectors"), None)
    if selectors is not None:
        rows = []
        module = ".".join(path)
        for selector in selectors.named_children:
            if selector.type == "identifier":
                rows.append(ImportRow(module, text(selector), None, "import", line))
            elif selector.type.endswith("renamed_identifier"):
                name = selector.child_by_field_name("name")
                alias = selector.child_by_field_name("alias")
                rows.append(ImportRow(module, text(name), text(alias), "import", line))
            elif selector.type == "namespace_wildcard":
                rows.append(ImportRow(module, "*", None, "import", line))
        return rows
    if any(c.type == "namespace_wildcard" for c in node.named_children):
        return [ImportRow(".".join(path), "*", None, "import", line)]
    return [ImportRow(".".join(path[:-1]), path[-1], None, "import", line)]


def _scala_assign(node: Node) -> tuple[str, str] | None:
    pattern = node.child_by_field_name("pattern")
    if pattern is None or pattern.type != "identifier":
        return None
    declared = _simple_type(node.child_by_field_name("type"))
    if declared:
        return text(pattern), declared
    value = node.child_by_field_name("value")
    if value is None:
        return None
    if value.type == "instance_expression":
        kind = next((c for c in value.named_children if "type" in c.type), None)
        name = _simple_type(kind)
        return (text(pattern), name) if name else None
    if value.type == "call_expression":
        function = value.child_by_field_name("function")
        constructed = _constructed(text(function)) if function is not None else None
        if constructed:
            return text(pattern), constructed
    return None


SCALA = LanguageSpec(
    key="scala",
    parameters_shadow_calls=True,
    load=_grammar("tree_sitter_scala"),
    definitions=frozenset(_SCALA_LABELS),
    define=_scala_define,
    calls=frozenset({"call_expression", "instance_expression"}),
    call=_scala_call,
    imports=frozenset({"import_declaration"}),
    import_rows=_scala_imports,
    assignments=frozenset({"val_definition", "var_definition"}),
    assign=_scala_assign,
    complexity=SCALA_COMPLEXITY,
    implicit_instance=True,
)
