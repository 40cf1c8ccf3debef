"""Rust extraction: functions, impl blocks, structs, enums, unions, traits, macros, use."""

from __future__ import annotations

from collections.abc import Mapping

import tree_sitter_rust
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.declared_types import (
    called,
    element,
    positions,
    rust_type,
)
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
    if node.type == "struct_item":
        fields = _field_types(node)
        if fields:  # what a call on ``self.field`` runs on
            metadata["attribute_types"] = fields
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
    parameters = node.child_by_field_name("parameters") if label == "Function" else None
    return Definition(
        label,
        text(name_node),
        name_node,
        node,
        node.child_by_field_name("body"),
        args=_params(parameters),
        metadata=metadata,
        locals=_typed_parameters(node, parameters),
    )


def _field_types(node: Node) -> dict[str, str]:
    """A struct's named fields whose declared types name one (not its type parameters)."""
    body = node.child_by_field_name("body")
    if body is None or body.type != "field_declaration_list":
        return {}
    generics = _generics(node)
    fields = {}
    for field in body.named_children:
        name = field.child_by_field_name("name")
        declared = rust_type(text(field.child_by_field_name("type"))) if name else None
        if declared and declared.strip("[]") not in generics:
            fields[text(name)] = declared
    return fields


def _generics(node: Node) -> set[str]:
    """The type parameters a function and its ``impl`` or trait declare (``T`` of ``fn
    f<T: Log>``): no type of the repository's nor a library's."""
    names: set[str] = set()
    current: Node | None = node
    for _ in range(4):  # the function, its declaration list, its impl or trait
        if current is None:
            break
        declared = current.child_by_field_name("type_parameters")
        for parameter in declared.named_children if declared is not None else ():
            named = parameter.child_by_field_name("name")
            names.add(text(named if named is not None else parameter))
        current = current.parent
    return names


def _typed_parameters(node: Node, parameters: Node | None) -> tuple[tuple[str, str], ...]:
    """(parameter, declared type) for each parameter whose type names one."""
    if parameters is None:
        return ()
    typed = []
    generics: set[str] | None = None
    for parameter in parameters.named_children:
        pattern = parameter.child_by_field_name("pattern")
        if parameter.type != "parameter" or pattern is None or pattern.type != "identifier":
            continue
        declared = rust_type(text(parameter.child_by_field_name("type")))
        if declared is None:
            continue
        if generics is None:
            generics = _generics(node)
        if declared.strip("[]") not in generics:
            typed.append((text(pattern), declared))
    return tuple(typed)


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
    if owner is not None and owner.type == "token_tree" and separator.type == ".":
        chained = _token_receiver(name)  # a.b().called(): a method of b()'s result
        if chained is not None:
            return Call(called, f"{chained}.{called}", chained, "method_call", count)
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
    """The names one import node brings in: a ``use``'s, or the module a file's ``mod util;``
    declares (its file ``util.rs`` or ``util/mod.rs``, named ``util``)."""
    if node.type == "mod_item":
        name = node.child_by_field_name("name")
        if name is None or node.child_by_field_name("body") is not None or _inline_depth(node):
            return []
        module = text(name)
        return [ImportRow(f"self::{module}", None, module, "mod", line_of(node))]
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


def value_type(node: Node | None, scope: Mapping[str, str], depth: int = 0) -> str | None:
    """The type of an expression, where it is declared: a typed local, a struct literal, an
    enum variant, an array of them, or a call chain from one (written as
    :mod:`..declared_types` describes)."""
    if node is None or depth > 32:
        return None
    kind = node.type
    if kind == "identifier":
        name = text(node)
        return scope.get(name) or _unit_type(name)
    if kind == "self":
        return "Self"
    if kind in ("reference_expression", "parenthesized_expression", "unary_expression"):
        inner = node.child_by_field_name("value") or (
            node.named_children[-1] if node.named_child_count else None
        )
        if kind == "unary_expression" and inner is not None and inner.type != "identifier":
            return None  # *self, **self: what a pointer-like Self holds is not Self
        return value_type(inner, scope, depth + 1)
    if kind == "struct_expression":
        return _type_name(node.child_by_field_name("name")) or None
    if kind == "scoped_identifier":  # Level::Info: a variant of the enum Level
        path, name = node.child_by_field_name("path"), node.child_by_field_name("name")
        if path is not None and name is not None and text(name)[:1].isupper():
            owner = _type_name(path)
            return owner if owner[:1].isupper() else None
        return None
    if kind == "array_expression":
        first = node.named_children[0] if node.named_child_count else None
        inner = value_type(first, scope, depth + 1)
        return f"[{inner}]" if inner else None
    if kind == "tuple_expression":
        parts = [value_type(child, scope, depth + 1) or "" for child in node.named_children]
        return f"({','.join(parts)})" if any(parts) else None
    if kind == "call_expression":
        return _result_type(node, scope, depth)
    if kind == "field_expression":  # self.stack: the declared type of a field
        owner = value_type(node.child_by_field_name("value"), scope, depth + 1)
        field = node.child_by_field_name("field")
        if not owner or owner[:1] in "[(" or field is None or field.type == "integer_literal":
            return None
        return f"{owner}.{text(field)}"
    if kind == "try_expression":  # made()?: what the Result or Option holds
        inner = (
            value_type(node.named_children[0], scope, depth + 1) if node.named_children else None
        )
        if not inner:
            return None
        return inner[:-1] if inner[-1:] == "?" else f"{inner}.unwrap()" if ")" in inner else None
    if kind == "index_expression":  # items[0]: an element
        collection = node.named_children[0] if node.named_child_count else None
        return element(value_type(collection, scope, depth + 1))
    return None


def _called_function(node: Node) -> Node | None:
    """A call's function, past the turbofish of ``f::<T>(...)``."""
    function = node.child_by_field_name("function")
    if function is not None and function.type == "generic_function":
        function = function.child_by_field_name("function")
    return function


def _result_type(node: Node, scope: Mapping[str, str], depth: int) -> str | None:
    function = _called_function(node)
    if function is None:
        return None
    if function.type == "field_expression":
        owner = value_type(function.child_by_field_name("value"), scope, depth + 1)
        method = text(function.child_by_field_name("field"))
        if not owner:
            return None
        known = called(owner, method)  # a collection's or an option's: known here
        if known is not None:
            return known or None
        return f"{owner}.{method}()"
    if function.type == "scoped_identifier":
        path, name = function.child_by_field_name("path"), function.child_by_field_name("name")
        owner = _type_name(path) if path is not None else ""
        if owner[:1].isupper() and name is not None:
            return f"{owner}.{text(name)}()"
    if function.type == "identifier":  # Wrapper(x): a tuple struct built
        return _unit_type(text(function))
    return None


def _unit_type(name: str) -> str | None:
    """The type a capitalised value names (a unit or tuple struct: ``Filter``, ``Id(3)``);
    None for a constant (``MAX_LEVEL``) or a lower-case name."""
    return name if name[:1].isupper() and not name.isupper() else None


def _token_walk(name: Node) -> tuple[Node, list[str]] | None:
    """Walk a chained call in a macro's token tree leftwards from the called ``name``
    (``a.b(x).c().name()``): the chain's start (a name or ``self``) and the methods called
    on it, nearest first; None when the chain does not start at a name or ``self``."""
    steps: list[str] = []
    separator = name.prev_sibling
    for _ in range(16):
        if separator is None or separator.type != ".":
            return None
        owner = separator.prev_sibling
        if owner is None:
            return None
        if owner.type in ("identifier", "self"):
            return owner, steps
        if owner.type != "token_tree" or not core.starts_with(owner, b"("):
            return None
        method = owner.prev_sibling
        if method is None or method.type != "identifier":
            return None
        steps.append(text(method))
        separator = method.prev_sibling
    return None


def _token_receiver(name: Node) -> str | None:
    """The receiver of a chained call in a token tree (``a.b(x)`` of ``a.b(x).name()``), as
    written; None when the chain does not start at a name or ``self``."""
    walked = _token_walk(name)
    if walked is None:
        return None
    tokens = []
    current = walked[0]
    while current is not None and current != name.prev_sibling:  # at most 48 tokens
        tokens.append(text(current))
        current = current.next_sibling
    return "".join(tokens)


def _token_chain(name: Node, scope: Mapping[str, str]) -> str | None:
    """The receiver type of a call inside a macro's token tree (``a.b().c()`` read from
    tokens, right to left), where its start is a typed local or ``self``."""
    walked = _token_walk(name)
    if walked is None:
        return None
    owner, steps = walked
    start = "Self" if owner.type == "self" else scope.get(text(owner))
    if not start:
        return None
    return start + "".join(f".{step}()" for step in reversed(steps))


def receiver_type(node: Node, scope: Mapping[str, str]) -> str | None:
    """The type of a call's receiver that is an expression, not a typed local."""
    if node.type == "identifier":
        return _token_chain(node, scope)
    function = _called_function(node)
    if function is None:
        return None
    if function.type == "field_expression":
        receiver = function.child_by_field_name("value")
        if receiver is not None and receiver.type in ("identifier", "self"):
            return None  # a local the scope does not type, or self (the resolver's)
        found = value_type(receiver, scope)
        return found if found and found[:1] != "(" else None
    if function.type == "scoped_identifier":  # crate::level::Level::new()
        path = function.child_by_field_name("path")
        if path is not None and path.type == "scoped_identifier":
            owner = _type_name(path)
            return owner if owner[:1].isupper() else None
    return None


def _destructured(pattern: Node | None, declared: str | None) -> list[tuple[str, str]]:
    """(local, type) for each name a pattern binds from a value of the type ``declared``
    ("" for a name whose type is unknown: it no longer has an earlier one)."""
    if pattern is None:
        return []
    kind = pattern.type
    if kind == "identifier":
        return [(text(pattern), declared or "")]
    if kind in ("reference_pattern", "ref_pattern", "mut_pattern"):
        inner = pattern.named_children[-1] if pattern.named_child_count else None
        return _destructured(inner, declared)
    if kind == "tuple_struct_pattern":  # Some(x), Ok(x): an option's or a result's content
        wrapper = text(pattern.child_by_field_name("type"))
        inner = pattern.named_children[-1] if pattern.named_child_count > 1 else None
        if wrapper not in ("Some", "Ok") or not declared or declared[-1:] != "?":
            return _destructured(inner, None) if inner is not None else []
        return _destructured(inner, declared[:-1])
    if kind == "tuple_pattern":
        parts = positions(declared)
        found = []
        for index, child in enumerate(pattern.named_children):
            found += _destructured(child, parts[index] if index < len(parts) else None)
        return found
    return []


def bind(node: Node, scope: Mapping[str, str]) -> list[tuple[str, str]]:
    """The locals a ``let`` (``if let``, ``while let``) or a ``for`` binds, with their types
    where declared."""
    pattern = node.child_by_field_name("pattern")
    value = node.child_by_field_name("value")
    if node.type == "for_expression":
        return _destructured(pattern, element(value_type(value, scope)))
    annotated = node.child_by_field_name("type")
    declared = rust_type(text(annotated)) if annotated is not None else None
    return _destructured(pattern, declared or value_type(value, scope))


SPEC = LanguageSpec(
    key="rust",
    load=tree_sitter_rust.language,
    definitions=frozenset(LABELS),
    define=define,
    calls=frozenset({"call_expression", "macro_invocation", "identifier"}),
    call=call,
    imports=frozenset({"use_declaration", "mod_item"}),
    import_rows=import_rows,
    assignments=frozenset({"let_declaration", "let_condition", "for_expression"}),
    bind=bind,
    receiver_type=receiver_type,
    complexity=COMPLEXITY,
    query_patterns={"identifier": "(token_tree (identifier) @identifier . (token_tree))"},
)
