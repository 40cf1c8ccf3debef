"""Lua and shell extraction: functions (Lua's ``M.f``/``M:f`` as the table's), calls,
``require``/``source`` imports and McCabe complexity."""

from __future__ import annotations

import importlib

from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors.core import (
    ALIAS,
    CURRENT_SOURCE,
    Call,
    ComplexityTable,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)

# Lua ------------------------------------------------------------------------------------

LUA_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {
            "if_statement",
            "elseif_statement",
            "for_statement",
            "while_statement",
            "repeat_statement",
            "binary_expression",
        }
    ),
    nested=frozenset({"function_definition"}),
    boolean_ops={},
)


def _lua_params(node: Node) -> tuple[str, ...]:
    parameters = node.child_by_field_name("parameters")
    if parameters is None:
        return ()
    return tuple(text(c) for c in parameters.named_children if c.type == "identifier")


def _lua_define(node: Node) -> Definition | None:
    body = node.child_by_field_name("body")
    if node.type == "function_definition":  # local f = function(...) ... end
        values = node.parent
        assignment = values.parent if values is not None else None
        if assignment is None or assignment.type != "assignment_statement":
            return None
        targets = assignment.named_children[0]
        if targets.type != "variable_list" or targets.named_child_count != 1:
            return None
        name_node = targets.named_children[0]
    else:
        name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    owner = None
    if name_node.type in ("dot_index_expression", "method_index_expression"):
        table = name_node.child_by_field_name("table")
        field = name_node.child_by_field_name(
            "field" if name_node.type == "dot_index_expression" else "method"
        )
        if table is None or field is None:
            return None
        owner, name_node = text(table), field
    elif name_node.type == "bracket_index_expression":  # tests["adds"] = function() ...
        key = name_node.child_by_field_name("field")
        content = key.child_by_field_name("content") if key is not None else None
        if key is None or key.type != "string" or content is None:
            return None
        table = name_node.child_by_field_name("table")
        metadata = {"table": text(table)} if table is not None else {}
        return Definition(
            "Function", text(content), content, node, body, _lua_params(node), metadata=metadata
        )
    elif name_node.type != "identifier":
        return None
    declared = node if node.type == "function_declaration" else node.parent.parent.parent
    is_local = (
        declared is not None and declared.child_count and declared.children[0].type == "local"
    )
    metadata: dict = {"visibility": "local"} if is_local else {}
    if owner is not None and name_node.parent.type == "dot_index_expression":
        # ``function M.f``: a module table's function, called as ``util.f`` where
        # ``local util = require(...)`` names that module; ``M:f`` is a method of M
        metadata["table"] = owner
        owner = None
    return Definition(
        "Function",
        text(name_node),
        name_node,
        node,
        body,
        _lua_params(node),
        class_context=owner,
        metadata=metadata,
    )


def _required(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    if name is None or name.type != "identifier" or text(name) != "require":
        return None
    arguments = node.child_by_field_name("arguments")
    strings = [c for c in arguments.named_children if c.type == "string"] if arguments else []
    if not strings:
        return None
    content = strings[0].child_by_field_name("content")
    return text(content) if content is not None else None


class _FileTables:
    """The tables a Lua file declares at its top level (``local M = {}``), read once per file:
    ``M.f()`` there calls the file's own ``function M.f``."""

    source: object = None
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, node: Node) -> frozenset[str]:
        source = CURRENT_SOURCE.data
        if source is not cls.source or source is None:
            root = node
            while root.parent is not None:
                root = root.parent
            cls.source, cls.names = source, frozenset(_declared_tables(root))
        return cls.names


def _declared_tables(root: Node):
    for statement in root.named_children:
        assignment = statement
        if statement.type == "variable_declaration" and statement.named_child_count:
            assignment = statement.named_children[0]
        if assignment.type != "assignment_statement" or assignment.named_child_count != 2:
            continue
        targets, values = assignment.named_children
        if (
            targets.named_child_count == 1
            and values.named_child_count == 1
            and values.named_children[0].type == "table_constructor"
        ):
            yield text(targets.named_children[0])


def _lua_call(node: Node) -> Call | None:
    if _required(node) is not None:
        return None
    name = node.child_by_field_name("name")
    arguments = node.child_by_field_name("arguments")
    count = arguments.named_child_count if arguments is not None else 0
    if name is None:
        return None
    if name.type == "identifier":
        called = text(name)
        return Call(called, called, None, "call", count)
    if name.type in ("dot_index_expression", "method_index_expression"):
        table = name.child_by_field_name("table")
        field = name.child_by_field_name(
            "field" if name.type == "dot_index_expression" else "method"
        )
        if table is None or field is None:
            return None
        owner = text(table)
        full = f"{owner}.{text(field)}"
        if name.type == "dot_index_expression" and owner in _FileTables.of(node):
            return Call(text(field), full, None, "call", count)  # the file's own function
        return Call(text(field), full, owner, "method_call", count)
    return None


def _lua_imports(node: Node) -> list[ImportRow]:
    module = _required(node)
    if module is None:
        return []
    values = node.parent
    assignment = values.parent if values is not None else None
    if assignment is not None and assignment.type == "assignment_statement":
        targets = assignment.named_children[0]
        if targets.type == "variable_list" and targets.named_child_count == 1:
            alias = text(targets.named_children[0])
            return [ImportRow(module, None, alias, "require", line_of(node))]
    return [ImportRow(module, "*", None, "require", line_of(node))]


def _lua_local(node: Node) -> tuple[str, str] | None:
    """A ``local x = ...`` of one name, as a local of no known type."""
    assignment = node.named_children[0] if node.named_child_count else None
    if assignment is None or assignment.type != "assignment_statement":
        return None
    targets = assignment.named_children[0]
    if targets.type != "variable_list" or targets.named_child_count != 1:
        return None
    target = targets.named_children[0]
    return (text(target), ALIAS) if target.type == "identifier" else None


LUA = LanguageSpec(
    key="lua",
    parameters_shadow_calls=True,
    load=lambda: importlib.import_module("tree_sitter_lua").language(),
    definitions=frozenset({"function_declaration", "function_definition"}),
    define=_lua_define,
    calls=frozenset({"function_call"}),
    call=_lua_call,
    imports=frozenset({"function_call"}),
    import_rows=_lua_imports,
    assignments=frozenset({"variable_declaration"}),
    assign=_lua_local,
    complexity=LUA_COMPLEXITY,
    query_patterns={
        "binary_expression": '[(binary_expression "and") (binary_expression "or")]'
        " @binary_expression"
    },
)

# Shell ----------------------------------------------------------------------------------

SHELL_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        {
            "if_statement",
            "elif_clause",
            "for_statement",
            "c_style_for_statement",
            "while_statement",
            "case_item",
            "list",
        }
    ),
    nested=frozenset({"subshell"}),
    boolean_ops={},
)
_SOURCES = frozenset({"source", "."})


def _shell_define(node: Node) -> Definition | None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    return Definition(
        "Function", text(name_node), name_node, node, node.child_by_field_name("body")
    )


def _command_name(node: Node) -> str | None:
    name = node.child_by_field_name("name")
    if name is None or name.named_child_count != 1 or name.named_children[0].type != "word":
        return None
    return text(name)


def _shell_call(node: Node) -> Call | None:
    name = _command_name(node)
    if name is None or name in _SOURCES:
        return None
    count = len(node.children_by_field_name("argument"))
    return Call(name, name, None, "call", count)


def _shell_imports(node: Node) -> list[ImportRow]:
    if _command_name(node) not in _SOURCES:
        return []
    arguments = node.children_by_field_name("argument")
    if not arguments:
        return []
    path = text(arguments[0]).strip("'\"")
    if "$" in path:
        return []  # a path only known when the script runs
    return [ImportRow(path, "*", None, "source", line_of(node))]


SHELL = LanguageSpec(
    key="shell",
    load=lambda: importlib.import_module("tree_sitter_bash").language(),
    definitions=frozenset({"function_definition"}),
    define=_shell_define,
    calls=frozenset({"command"}),
    call=_shell_call,
    imports=frozenset({"command"}),
    import_rows=_shell_imports,
    complexity=SHELL_COMPLEXITY,
    query_patterns={"list": '[(list "&&") (list "||")] @list'},
)
