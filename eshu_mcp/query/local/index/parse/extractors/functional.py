"""Elixir and Haskell extraction: modules, functions, calls, imports, behaviours and type
class instances, and McCabe complexity."""

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

# Elixir ---------------------------------------------------------------------------------
# Everything is a ``call`` node: ``def f(x) do ... end`` is ``def`` called with ``f(x)``.

_MODULE_DEFINERS = frozenset({"defmodule", "defprotocol", "defimpl"})
_FUNCTION_DEFINERS = frozenset(
    {"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate"}
)
_TEST_BLOCKS = frozenset({"test", "setup", "setup_all"})
_IMPORTERS = frozenset({"alias", "import", "require", "use"})
_SPECIAL_FORMS = frozenset(
    {"if", "unless", "case", "cond", "with", "for", "fn", "receive", "try", "quote"}
    | {"unquote", "super", "defstruct", "defexception", "defoverridable", "__MODULE__"}
)
_BRANCHING_FORMS = ("if", "unless")

ELIXIR_COMPLEXITY = ComplexityTable(
    branches=frozenset({"stab_clause", "identifier"}),
    nested=frozenset({"anonymous_function"}),
    boolean_ops={"binary_operator": frozenset({"and", "or", "&&", "||"})},
)


def _target(node: Node) -> str:
    target = node.child_by_field_name("target")
    return text(target) if target is not None and target.type == "identifier" else ""


def _arguments(node: Node) -> list[Node]:
    arguments = next((c for c in node.named_children if c.type == "arguments"), None)
    return arguments.named_children if arguments is not None else []


def _head(definition: Node) -> Node | None:
    """The ``f(x)`` of ``def f(x) when guard``: the defined call (or bare name)."""
    arguments = _arguments(definition)
    head = arguments[0] if arguments else None
    if head is not None and head.type == "binary_operator":
        head = head.child_by_field_name("left")
    return head


def _elixir_define(node: Node) -> Definition | None:
    definer = _target(node)
    if definer in _FUNCTION_DEFINERS:
        head = _head(node)
        if head is None:
            return None
        if head.type == "call":
            name_node = head.child_by_field_name("target")
            args = tuple(text(a) for a in _arguments(head) if a.type == "identifier")
        elif head.type == "identifier":
            name_node, args = head, ()
        else:
            return None
        if name_node is None or name_node.type != "identifier":
            return None
        metadata = {"visibility": "private"} if definer.endswith("p") else {}
        body = next((c for c in node.named_children if c.type == "do_block"), None)
        return Definition(
            "Function", text(name_node), name_node, node, body, args, metadata=metadata
        )
    if definer in _TEST_BLOCKS:  # ExUnit: ``test "name" do ... end`` runs as a function
        body = next((c for c in node.named_children if c.type == "do_block"), None)
        arguments = _arguments(node)
        if body is None:
            return None
        title = arguments[0] if arguments and arguments[0].type == "string" else None
        name_node = title if title is not None else node.child_by_field_name("target")
        name = f"{definer} {text(title).strip(chr(34))}" if title is not None else definer
        metadata = {"dead_code_root_kinds": ["elixir.test"]}
        return Definition("Function", name, name_node, node, body, metadata=metadata)
    if definer not in _MODULE_DEFINERS:
        return None
    arguments = _arguments(node)
    if not arguments or arguments[0].type != "alias":
        return None
    full = text(arguments[0])
    body = next((c for c in node.named_children if c.type == "do_block"), None)
    bases = []
    for statement in body.named_children if body is not None else ():
        if statement.type == "call" and _target(statement) == "use":
            used = _arguments(statement)
            if used and used[0].type == "alias":
                bases.append((text(used[0]).rsplit(".", 1)[-1], "includes"))
        elif statement.type == "unary_operator":  # @behaviour Mod
            inner = statement.child_by_field_name("operand")
            if inner is not None and inner.type == "call" and _target(inner) == "behaviour":
                used = _arguments(inner)
                if used and used[0].type == "alias":
                    bases.append((text(used[0]).rsplit(".", 1)[-1], "implements"))
    label = "Interface" if definer == "defprotocol" else "Module"
    return Definition(
        label,
        full.rsplit(".", 1)[-1],
        arguments[0],
        node,
        body,
        bases=tuple(bases),
        metadata={"module": full},
    )


def _is_definition_head(node: Node) -> bool:
    parent = node.parent
    if parent is not None and parent.type == "binary_operator":  # def f(x) when ...
        parent = parent.parent
    if parent is None or parent.type != "arguments" or parent.parent is None:
        return False
    return _target(parent.parent) in _FUNCTION_DEFINERS


def _elixir_call(node: Node) -> Call | None:
    target = node.child_by_field_name("target")
    if target is None:
        return None
    count = len(_arguments(node))
    if target.type == "identifier":
        name = text(target)
        if (
            name in _FUNCTION_DEFINERS
            or name in _MODULE_DEFINERS
            or name in _IMPORTERS
            or name in _SPECIAL_FORMS
            or _is_definition_head(node)
            or (node.parent is not None and node.parent.type == "unary_operator")
        ):
            return None
        return Call(name, name, None, "call", count)
    if target.type == "dot":
        left = target.child_by_field_name("left")
        right = target.child_by_field_name("right")
        if left is None or right is None or right.type != "identifier":
            return None
        if left.type != "alias" and not any(c.type == "arguments" for c in node.children):
            return None  # ``cart.total``: a map's field, not a call
        owner = text(left)
        full = f"{owner}.{text(right)}"
        if left.type == "alias":  # ``MyApp.Repo.get``: the module as ``alias`` names it
            owner = owner.rsplit(".", 1)[-1]
        return Call(text(right), full, owner, "method_call", count)
    return None


def _elixir_imports(node: Node) -> list[ImportRow]:
    how = _target(node)
    if how not in _IMPORTERS:
        return []
    arguments = _arguments(node)
    if not arguments or arguments[0].type != "alias":
        return []
    module = text(arguments[0])
    alias = None
    for argument in arguments[1:]:
        if argument.type == "keywords":
            for pair in argument.named_children:
                key = pair.child_by_field_name("key")
                value = pair.child_by_field_name("value")
                if key is not None and text(key).strip() == "as:" and value is not None:
                    alias = text(value)
    name = "*" if how == "import" else None
    return [ImportRow(module, name, alias, how, line_of(node))]


ELIXIR = LanguageSpec(
    key="elixir",
    load=lambda: importlib.import_module("tree_sitter_elixir").language(),
    definitions=frozenset({"call"}),
    define=_elixir_define,
    calls=frozenset({"call"}),
    call=_elixir_call,
    imports=frozenset({"call"}),
    import_rows=_elixir_imports,
    complexity=ELIXIR_COMPLEXITY,
    query_patterns={
        "identifier": '(call target: (identifier) @identifier (#any-of? @identifier "if" "unless"))'
    },
)

# Haskell --------------------------------------------------------------------------------

HASKELL_COMPLEXITY = ComplexityTable(
    branches=frozenset({"alternative", "conditional", "guards"}),
    nested=frozenset({"lambda"}),
    boolean_ops={"infix": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"alternative"}),
)
_HASKELL_LABELS = {
    "function": "Function",
    "bind": "Function",
    "data_type": "Struct",
    "newtype": "Struct",
    "class": "Interface",
    "instance": "ImplBlock",
    "type_synonym": "TypeAlias",
}


def _haskell_exports(node: Node) -> frozenset[str] | None:
    """The names a top-level definition's module exports (None: every name, a module
    without an export list, or a definition that is not top-level); nothing for ``Main``
    or a file without a module header."""
    declarations = node.parent
    root = declarations.parent if declarations is not None else None
    if declarations is None or declarations.type != "declarations" or root is None:
        return None
    header = next((c for c in root.named_children if c.type == "header"), None)
    module = header.child_by_field_name("module") if header is not None else None
    if module is None or text(module) == "Main":
        return frozenset()
    exports = header.child_by_field_name("exports")
    if exports is None:
        return None
    names = set()
    for export in exports.named_children:
        named = export.child_by_field_name("variable") or export.child_by_field_name("type")
        if named is not None:
            names.add(text(named).rsplit(".", 1)[-1])
    return frozenset(names)


def _haskell_define(node: Node) -> Definition | None:
    definition = _haskell_definition(node)
    if definition is None or definition.label == "ImplBlock":
        return definition
    exported = _haskell_exports(node)
    if exported is None or definition.name in exported:
        return definition
    return definition._replace(metadata={**definition.metadata, "visibility": "private"})


def _haskell_definition(node: Node) -> Definition | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    label = _HASKELL_LABELS[node.type]
    name = text(name_node)
    if label == "Function":
        previous = node.prev_named_sibling
        if previous is not None and previous.type in ("function", "bind"):
            earlier = previous.child_by_field_name("name")
            if earlier is not None and text(earlier) == name:
                return None  # a further equation of the function the first one defines
        patterns = node.child_by_field_name("patterns")
        args = tuple(
            text(p) for p in (patterns.named_children if patterns else ()) if p.type == "variable"
        )
        metadata = {"dead_code_root_kinds": ["haskell.main"]} if name == "main" else {}
        return Definition("Function", name, name_node, node, None, args, metadata=metadata)
    if label == "ImplBlock":  # instance Priced Cart: Cart's methods, implementing Priced
        patterns = node.child_by_field_name("patterns")
        typed = patterns.named_children[0] if patterns and patterns.named_child_count else None
        if typed is None:
            return None
        return Definition(
            label, text(typed).split(" ", 1)[0], typed, node, None, bases=((name, "implements"),)
        )
    return Definition(label, name, name_node, node, None)


def _haskell_call(node: Node) -> Call | None:
    if node.type == "infix":  # ``f $ x``: f applied to x
        operator = node.child_by_field_name("operator")
        if operator is None or text(operator) != "$":
            return None
        function = node.child_by_field_name("left_operand")
    else:
        function = node.child_by_field_name("function")
    if function is None:
        return None
    count = 1
    if function.type == "variable":
        name = text(function)
        return Call(name, name, None, "call", count)
    if function.type == "qualified":
        module = function.child_by_field_name("module")
        name_node = function.child_by_field_name("id")
        if module is None or name_node is None or name_node.type != "variable":
            return None
        owner = text(module).rstrip(".")
        return Call(text(name_node), f"{owner}.{text(name_node)}", owner, "method_call", count)
    return None


def _haskell_imports(node: Node) -> list[ImportRow]:
    module_node = node.child_by_field_name("module")
    if module_node is None:
        return []
    module = text(module_node)
    alias_node = node.child_by_field_name("alias")
    alias = text(alias_node) if alias_node is not None else None
    line = line_of(node)
    names = node.child_by_field_name("names")
    qualified = any(c.type == "qualified" for c in node.children)
    if names is not None and not qualified and not any(c.type == "hiding" for c in node.children):
        return [
            ImportRow(module, text(item).split("(", 1)[0].strip(), None, "import", line)
            for item in names.named_children
        ]
    if qualified or alias:
        return [ImportRow(module, None, alias or module, "import", line)]
    return [ImportRow(module, "*", None, "import", line)]


HASKELL = LanguageSpec(
    key="haskell",
    parameters_shadow_calls=True,
    load=lambda: importlib.import_module("tree_sitter_haskell").language(),
    definitions=frozenset(_HASKELL_LABELS),
    define=_haskell_define,
    calls=frozenset({"apply", "infix"}),
    call=_haskell_call,
    imports=frozenset({"import"}),
    import_rows=_haskell_imports,
    complexity=HASKELL_COMPLEXITY,
    query_patterns={
        "infix": '(infix operator: (operator) @op (#any-of? @op "&&" "||" "$")) @infix',
        "apply": "(apply function: [(variable) (qualified)]) @apply",
    },
)
