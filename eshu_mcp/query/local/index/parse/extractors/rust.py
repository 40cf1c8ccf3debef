"""Rust extraction: functions, impl blocks, structs, enums, unions, traits, macros, use."""

from __future__ import annotations

import tree_sitter_rust
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
        ["if_expression", "for_expression", "while_expression", "loop_expression", "match_arm"]
    ),
    nested=frozenset({"function_item", "closure_expression"}),
    boolean_ops={"binary_expression": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"match_arm"}),
)
LABELS = {
    "function_item": "Function",
    "struct_item": "Struct",
    "enum_item": "Enum",
    "union_item": "Union",
    "trait_item": "Trait",
    "impl_item": "ImplBlock",
    "type_item": "TypeAlias",
    "mod_item": "Module",
    "macro_definition": "Macro",
}


def _type_name(node: Node | None) -> str:
    raw = text(node)
    return raw.split("<", 1)[0].rsplit("::", 1)[-1].strip()


def _attributes(node: Node) -> list[str]:
    found = []
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item":
        found.append(text(prev))
        prev = prev.prev_named_sibling
    return found


def _params(node: Node | None) -> tuple[str, ...]:
    names = []
    for param in node.named_children if node is not None else ():
        if param.type == "self_parameter":
            names.append("self")
        else:
            pattern = param.child_by_field_name("pattern")
            if pattern is not None:
                names.append(text(pattern))
    return tuple(names)


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    label = LABELS[node.type]
    public = any(c.type == "visibility_modifier" for c in node.children)
    metadata: dict = {"visibility": "pub" if public else "private"}
    if node.type == "impl_item":
        type_node = node.child_by_field_name("type")
        if type_node is None:
            return None
        trait = node.child_by_field_name("trait")
        bases = ((_type_name(trait), "trait_impl"),) if trait is not None else ()
        if trait is not None:
            metadata["trait"] = _type_name(trait)
        return Definition(
            label,
            _type_name(type_node),
            type_node,
            node,
            node.child_by_field_name("body"),
            bases=bases,
            metadata=metadata,
        )
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    if node.type == "mod_item" and node.child_by_field_name("body") is None:
        return None
    roots = []
    attributes = _attributes(node)
    if public:
        roots.append("rust.public_api")
    if any("test" in a for a in attributes):
        roots.append("rust.test")
    if label == "Function" and text(name_node) == "main":
        roots.append("rust.entrypoint")
    if roots:
        metadata["dead_code_root_kinds"] = roots
    if attributes:
        metadata["attributes"] = attributes
    parent = node.parent.parent if node.parent is not None else None
    if label == "Function" and parent is not None and parent.type == "impl_item":
        metadata["impl_context"] = _type_name(parent.child_by_field_name("type"))
        trait = parent.child_by_field_name("trait")
        if trait is not None:
            roots.append("rust.trait_impl_method")
            metadata["dead_code_root_kinds"] = roots
    return Definition(
        label,
        text(name_node),
        name_node,
        node,
        node.child_by_field_name("body"),
        args=_params(node.child_by_field_name("parameters")) if label == "Function" else (),
        metadata=metadata,
    )


FIELD_ACCESS = core.MemberAccess("field_expression", "field", "value")


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    if node.type == "identifier":
        return _token_tree_call(node)
    if node.type == "macro_invocation":
        macro = node.child_by_field_name("macro")
        full = text(macro)
        return Call(full.rsplit("::", 1)[-1], full, None, "macro", None)
    function = node.child_by_field_name("function")
    count = core.argument_count(node)
    if function is None:
        return None
    if function.type == "generic_function":
        function = function.child_by_field_name("function") or function
    plain = core.plain_or_method_call(function, count, FIELD_ACCESS)
    if plain is not None:
        return plain
    if function.type == "scoped_identifier":
        name = function.child_by_field_name("name")
        path = function.child_by_field_name("path")
        scope = text(path) if path is not None else None
        return Call(text(name), text(function), scope, "call", count)
    return None


def _token_tree_call(name: Node) -> Call | None:
    """A call inside a macro's arguments (``assert_eq!(total(x), 3)``), which the grammar
    leaves as tokens: a name directly followed by a parenthesised token tree, with ``a.`` or
    ``path::`` before it for a method or a path call."""
    arguments = name.next_sibling
    if arguments is None or not core.starts_with(arguments, b"("):
        return None
    count = sum(1 for child in arguments.children if child.type == ",") + (
        1 if arguments.named_child_count else 0
    )
    called = text(name)
    separator = name.prev_sibling
    owner = separator.prev_sibling if separator is not None else None
    if separator is None or owner is None or owner.type not in ("identifier", "self"):
        return Call(called, called, None, "call", count)
    if separator.type == ".":
        return Call(called, f"{text(owner)}.{called}", text(owner), "method_call", count)
    if separator.type == "::":
        return Call(called, f"{text(owner)}::{called}", text(owner), "call", count)
    return Call(called, called, None, "call", count)


def _use_paths(node: Node, prefix: str) -> list[tuple[str, str | None]]:
    kind = node.type
    if kind in ("identifier", "scoped_identifier", "crate", "self", "super"):
        return [(f"{prefix}{text(node)}", None)]
    if kind == "use_as_clause":
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        return [(f"{prefix}{text(path)}", text(alias))]
    if kind == "use_wildcard":
        return [(f"{prefix}{text(node)}", None)]
    if kind == "scoped_use_list":
        path = node.child_by_field_name("path")
        inner = node.child_by_field_name("list")
        base = f"{prefix}{text(path)}::" if path is not None else prefix
        return _use_paths(inner, base) if inner is not None else []
    if kind == "use_list":
        found = []
        for child in node.named_children:
            found.extend(_use_paths(child, prefix))
        return found
    return []


def _inline_depth(node: Node) -> int:
    """How many inline ``mod name { ... }`` blocks enclose a node."""
    depth = 0
    parent = node.parent
    while parent is not None:
        if parent.type == "mod_item":
            depth += 1
        parent = parent.parent
    return depth


def _within_file(path: str, depth: int) -> str:
    """A ``use`` path written in an inline module, with the ``self``/``super`` steps that stay
    inside the file as ``self`` (this file): ``super::Level`` in ``mod tests`` is the file's
    own ``Level``."""
    parts = path.split("::")
    steps = 0
    while steps < len(parts) and parts[steps] in ("self", "super"):
        steps += 1
    climbs = parts[:steps].count("super")
    if not steps or climbs > depth:
        return path  # the crate, or a module the file's parent holds
    return "::".join(["self", *parts[steps:]])


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    argument = node.child_by_field_name("argument")
    if argument is None:
        return []
    rows = []
    depth = _inline_depth(node)
    for path, alias in _use_paths(argument, ""):
        if depth:
            path = _within_file(path, depth)
        module, _, name = path.rpartition("::")
        rows.append(
            ImportRow(module or path, name if module else None, alias, "use", line_of(node))
        )
    return rows


def assign(node: Node) -> tuple[str, str] | None:
    """A local bound to a constructed type (``v = Cls()``), for type-inferred calls."""
    pattern = node.child_by_field_name("pattern")
    value = node.child_by_field_name("value")
    if pattern is None or value is None or pattern.type != "identifier":
        return None
    if value.type == "struct_expression":
        return text(pattern), _type_name(value.child_by_field_name("name"))
    if value.type == "call_expression":
        function = value.child_by_field_name("function")
        if function is not None and function.type == "scoped_identifier":
            path = function.child_by_field_name("path")
            if path is not None and text(path)[:1].isupper():
                return text(pattern), _type_name(path)
    if value.type == "scoped_identifier":  # let v = Level::Info: a variant of the enum Level
        path = value.child_by_field_name("path")
        name = value.child_by_field_name("name")
        variant = path is not None and name is not None and text(name)[:1].isupper()
        if variant and text(path)[:1].isupper():
            return text(pattern), _type_name(path)
    return None


SPEC = LanguageSpec(
    key="rust",
    load=tree_sitter_rust.language,
    definitions=frozenset(LABELS),
    define=define,
    calls=frozenset({"call_expression", "macro_invocation", "identifier"}),
    call=call,
    imports=frozenset({"use_declaration"}),
    import_rows=import_rows,
    assignments=frozenset({"let_declaration"}),
    assign=assign,
    complexity=COMPLEXITY,
    query_patterns={"identifier": "(token_tree (identifier) @identifier . (token_tree))"},
)
