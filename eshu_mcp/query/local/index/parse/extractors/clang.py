"""C and C++ extraction: functions, methods, classes, structs, unions, enums, includes."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping

import tree_sitter_c
import tree_sitter_cpp
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.declared_types import cpp_type
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

C_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        [
            "if_statement",
            "for_statement",
            "while_statement",
            "do_statement",
            "case_statement",
            "conditional_expression",
        ]
    ),
    nested=frozenset({"function_definition"}),
    boolean_ops={"binary_expression": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"case_statement"}),
)
CPP_COMPLEXITY = ComplexityTable(
    branches=C_COMPLEXITY.branches | {"for_range_loop", "catch_clause"},
    nested=frozenset({"function_definition", "lambda_expression"}),
    boolean_ops=C_COMPLEXITY.boolean_ops,
    catch_all_kinds=frozenset({"case_statement"}),
)
TYPE_LABELS = {
    "struct_specifier": "Struct",
    "union_specifier": "Union",
    "enum_specifier": "Enum",
    "class_specifier": "Class",
}
NAME_KINDS = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name"}
)


def _function_declarator(node: Node) -> Node | None:
    current = node.child_by_field_name("declarator")
    while current is not None and current.type != "function_declarator":
        current = current.child_by_field_name("declarator")
    return current


def _params(declarator: Node) -> tuple[str, ...]:
    params = declarator.child_by_field_name("parameters")
    names = []
    for param in params.named_children if params is not None else ():
        inner = param.child_by_field_name("declarator")
        while inner is not None and inner.type not in NAME_KINDS:
            inner = inner.child_by_field_name("declarator")
        if inner is not None:
            names.append(text(inner))
    return tuple(names)


_EXPORT_MACRO = re.compile(
    rb"\b(?:class|struct)\s+([A-Z][A-Z0-9_]*[A-Z0-9])\s+(?=[A-Za-z_]\w*\s*(?:final\b|[:{]))"
)
"""An all-capitals word between ``class`` and the class's name: a macro that expands to an
export attribute (``class TINYXML2_LIB XMLElement : public XMLNode``), which the grammar,
seeing no preprocessor, reads as the class's name and the rest as a function."""


def unexported(source: bytes) -> bytes:
    """``source`` with each class's export macro blanked out (offsets unchanged)."""
    if b"class " not in source and b"struct " not in source:
        return source
    return _EXPORT_MACRO.sub(_blank_macro, source)


def _blank_macro(match: re.Match) -> bytes:
    start, end = match.span(1)
    whole = match.group(0)
    offset = match.start(0)
    return whole[: start - offset] + b" " * (end - start) + whole[end - offset :]


_HOLDERS = frozenset({"make_shared", "make_unique"})
"""Library functions whose result holds (and calls through to) their template argument."""


def _declared_name(declarator: Node | None, local: bool) -> str | None:
    """The name a declarator declares (through ``&``, ``*``, ``= value``); a local's
    ``T x(args)`` reads as a function declarator, which elsewhere is a prototype."""
    for _ in range(8):
        if declarator is None:
            return None
        if declarator.type in ("identifier", "field_identifier"):
            return text(declarator)
        if declarator.type == "function_declarator" and not local:
            return None
        if declarator.type in ("reference_declarator", "pointer_declarator"):
            declarator = declarator.child_by_field_name("declarator") or (
                declarator.named_children[-1] if declarator.named_child_count else None
            )
        elif declarator.type in ("init_declarator", "function_declarator"):
            declarator = declarator.child_by_field_name("declarator")
        else:
            return None
    return None


def _built_type(value: Node | None) -> str | None:
    """The class an ``auto`` local is built as: ``T(...)``, ``T{...}``, ``new T``,
    ``std::make_unique<T>(...)``; a lower-case callee is a function, whose result is unknown."""
    if value is None:
        return None
    if value.type == "new_expression":
        return cpp_type(text(value.child_by_field_name("type")))
    if value.type == "compound_literal_expression":
        return cpp_type(text(value.child_by_field_name("type")))
    if value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    if function is not None and function.type == "qualified_identifier":
        inner = function.child_by_field_name("name")
        if inner is not None and inner.type == "template_function":
            function = inner
    if function is not None and function.type == "template_function":
        name = text(function.child_by_field_name("name"))
        arguments = function.child_by_field_name("arguments")
        if name in _HOLDERS and arguments is not None and arguments.named_child_count:
            return cpp_type(text(arguments.named_children[0]))
        return None
    built = cpp_type(text(function)) if function is not None else None
    return built if built and built.rsplit("::", 1)[-1][:1].isupper() else None


def _parameter_types(declarator: Node) -> tuple[tuple[str, str], ...]:
    """(parameter, declared class) for each parameter of a class type."""
    params = declarator.child_by_field_name("parameters")
    typed = []
    for param in params.named_children if params is not None else ():
        type_node = param.child_by_field_name("type")
        if type_node is None or type_node.type == "primitive_type":
            continue  # no methods to call
        declared = cpp_type(text(type_node))
        name = _declared_name(param.child_by_field_name("declarator"), False) if declared else None
        if declared and name:
            typed.append((name, declared))
    return tuple(typed)


def bind(node: Node, scope: Mapping[str, str]) -> list[tuple[str, str]]:
    """The locals a declaration (or a range ``for``) declares, with their declared classes
    ("" where unknown: a name declared again loses its earlier type)."""
    local = node.parent is not None and node.parent.type != "translation_unit"
    type_node = node.child_by_field_name("type")
    declared = None
    if type_node is not None and type_node.type not in (
        "placeholder_type_specifier",
        "primitive_type",
    ):
        declared = cpp_type(text(type_node))
    found = []
    for index, child in enumerate(node.children):
        field = node.field_name_for_child(index)
        if field != "declarator":
            continue
        name = _declared_name(child, local)
        if name is None:
            continue
        value = child.child_by_field_name("value") if child.type == "init_declarator" else None
        found.append((name, declared or _built_type(value) or ""))
    return found


def _member_roots(name_node: Node, declarator: Node) -> list[str]:
    """Why a function runs without a visible call: a destructor runs when its object dies, an
    operator where its operator is written, an override where its base is called."""
    roots = []
    if name_node.type == "destructor_name":
        roots.append("cpp.destructor")
    elif name_node.type == "operator_name":
        roots.append("cpp.operator")
    if any(c.type == "virtual_specifier" for c in declarator.children):
        roots.append("cpp.override")  # override or final
    return roots


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    if node.type == "function_definition":
        declarator = _function_declarator(node)
        if declarator is None:
            return None
        name_node = declarator.child_by_field_name("declarator")
        if name_node is None or name_node.type not in NAME_KINDS:
            return None
        class_context = None
        if name_node.type == "qualified_identifier":
            scope = name_node.child_by_field_name("scope")
            class_context = text(scope).rsplit("::", 1)[-1] if scope is not None else None
            inner = name_node.child_by_field_name("name")
            while inner is not None and inner.type == "qualified_identifier":
                inner = inner.child_by_field_name("name")
            name_node = inner if inner is not None else name_node
        metadata: dict = {}
        roots = _member_roots(name_node, declarator)
        if text(name_node) == "main":
            roots.append("c.entrypoint")
        if roots:  # run by the language, not by a call the index can see
            metadata["dead_code_root_kinds"] = roots
        if any(c.type == "storage_class_specifier" and text(c) == "static" for c in node.children):
            metadata["visibility"] = "static"
        return Definition(
            "Function",
            text(name_node),
            name_node,
            node,
            node.child_by_field_name("body"),
            args=_params(declarator),
            class_context=class_context,
            metadata=metadata,
            locals=_parameter_types(declarator),
        )
    if node.type == "type_definition":
        declarator = node.child_by_field_name("declarator")
        if declarator is None or declarator.type != "type_identifier":
            return None
        return Definition("Typedef", text(declarator), declarator, node)
    name_node = node.child_by_field_name("name")
    body = node.child_by_field_name("body")
    if name_node is None or body is None:
        return None
    bases = []
    for child in node.named_children:
        if child.type == "base_class_clause":
            bases.extend(
                (text(b).split("<", 1)[0].rsplit("::", 1)[-1], "extends")
                for b in child.named_children
                if b.type in ("type_identifier", "qualified_identifier", "template_type")
            )
    fields = _field_types(body) if node.type in ("class_specifier", "struct_specifier") else {}
    return Definition(
        TYPE_LABELS[node.type],
        text(name_node),
        name_node,
        node,
        body,
        bases=tuple(bases),
        metadata={"attribute_types": fields} if fields else {},
    )


def _field_types(body: Node) -> dict[str, str]:
    """A class's data members whose declared types are classes (``std::string m_name;``)."""
    fields = {}
    for member in body.named_children:
        if member.type != "field_declaration":
            continue
        type_node = member.child_by_field_name("type")
        first = member.child_by_field_name("declarator")
        if type_node is None or type_node.type == "primitive_type" or first is None:
            continue
        if first.type == "function_declarator":  # a method's declaration
            continue
        declared = cpp_type(text(type_node))
        if declared is None:
            continue
        for index, child in enumerate(member.children):
            if member.field_name_for_child(index) == "declarator":
                name = _declared_name(child, False)
                if name is not None:
                    fields[name] = declared
    return fields


def _in_method(node: Node) -> bool:
    """Whether a node is in a member function (defined in its class, or as ``C::f``)."""
    current = node.parent
    for _ in range(256):  # bounded: the nesting of one function's body
        if current is None:
            return False
        if current.type == "function_definition":
            holder = current.parent
            if holder is not None and holder.type == "template_declaration":
                holder = holder.parent
            if holder is not None and holder.type == "field_declaration_list":
                return True
            declarator = _function_declarator(current)
            named = declarator.child_by_field_name("declarator") if declarator else None
            return named is not None and named.type == "qualified_identifier"
        current = current.parent
    return False


def receiver_type(node: Node, scope: Mapping[str, str]) -> str | None:
    """A method's own data member as a receiver (``m_name.size()``, ``this->m_name``), which
    the resolver types from its class's declaration; None for a local or anything else."""
    function = node.child_by_field_name("function")
    if function is None or function.type != "field_expression":
        return None
    receiver = function.child_by_field_name("argument")
    if receiver is None:
        return None
    if receiver.type == "identifier":
        name = text(receiver)
        return None if name in scope or not _in_method(node) else f"Self.{name}"
    if receiver.type == "field_expression":
        owner = receiver.child_by_field_name("argument")
        field = receiver.child_by_field_name("field")
        if owner is not None and owner.type == "this" and field is not None:
            return f"Self.{text(field)}"
    return None


FIELD_ACCESS = core.MemberAccess("field_expression", "field", "argument")


_NAMESPACES = threading.local()
"""Per thread: (the root node of the file being read, the namespaces it defines). Holding
the node keeps its tree alive, so an equal root is that same tree."""


def _namespaces(node: Node) -> frozenset[str]:
    """The namespaces the file of ``node`` defines."""
    root = node
    while root.parent is not None:
        root = root.parent
    kept = getattr(_NAMESPACES, "kept", None)
    found = kept[1] if kept is not None and kept[0] == root else None
    if found is None:
        names = set()
        pending = [root]
        while pending:  # every node once: bounded by the tree's size
            current = pending.pop()
            if current.type == "namespace_definition":
                named = current.child_by_field_name("name")
                if named is not None:
                    names.update(text(named).split("::"))
            if current.type in (
                "translation_unit",
                "namespace_definition",
                "declaration_list",
            ) or current.type.startswith("preproc_"):
                pending.extend(current.named_children)
        found = frozenset(names)
        _NAMESPACES.kept = (root, found)
    return found


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    function = node.child_by_field_name("function")
    count = core.argument_count(node)
    if function is None:
        return None
    plain = core.plain_or_method_call(function, count, FIELD_ACCESS)
    if plain is not None:
        return plain
    if function.type == "qualified_identifier":
        full = text(function)
        scope, _, name = full.rpartition("::")
        if scope.rsplit("::", 1)[-1] in _namespaces(node):  # a function of the file's own
            return Call(name, full, None, "call", count)  # namespace, not a method
        return Call(name, full, scope, "call", count)
    if function.type == "template_function":
        name_node = function.child_by_field_name("name")
        name = text(name_node).rsplit("::", 1)[-1]
        return Call(name, text(name_node), None, "call", count)
    return None


def cpp_new(node: Node) -> Call | None:
    """Read a C++ call or ``new`` expression's callee."""
    if node.type != "new_expression":
        return call(node)
    type_node = node.child_by_field_name("type")
    full = text(type_node)
    return Call(full.rsplit("::", 1)[-1], full, None, "new_expression", None)


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    path = node.child_by_field_name("path")
    if path is None:
        return []
    raw = text(path)
    module = raw.strip('"<>')
    kind = "include" if raw.startswith('"') else "include_system"
    return [ImportRow(module, None, None, kind, line_of(node))]


_C_DEFS = frozenset(
    {
        "function_definition",
        "struct_specifier",
        "union_specifier",
        "enum_specifier",
        "type_definition",
    }
)
C = LanguageSpec(
    key="c",
    load=tree_sitter_c.language,
    definitions=_C_DEFS,
    define=define,
    calls=frozenset({"call_expression"}),
    call=call,
    imports=frozenset({"preproc_include"}),
    import_rows=import_rows,
    complexity=C_COMPLEXITY,
)
CPP = LanguageSpec(
    key="cpp",
    load=tree_sitter_cpp.language,
    definitions=_C_DEFS | {"class_specifier"},
    define=define,
    calls=frozenset({"call_expression", "new_expression"}),
    call=cpp_new,
    imports=frozenset({"preproc_include"}),
    import_rows=import_rows,
    complexity=CPP_COMPLEXITY,
    assignments=frozenset({"declaration", "for_range_loop"}),
    bind=bind,
    receiver_type=receiver_type,
    prepare=unexported,
)
