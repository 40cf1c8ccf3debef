"""Ruby extraction: methods, classes, modules, calls, require and mixins."""

from __future__ import annotations

import tree_sitter_ruby
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

COMPLEXITY = ComplexityTable(
    branches=frozenset(
        ["if", "elsif", "unless", "while", "until", "for", "when", "rescue", "conditional"]
    ),
    nested=frozenset({"method", "singleton_method", "lambda"}),
    boolean_ops={"binary": frozenset({"&&", "||", "and", "or"})},
)
REQUIRES = frozenset({"require", "require_relative", "load"})
MIXINS = frozenset({"include", "extend", "prepend"})
LABELS = {
    "method": "Function",
    "singleton_method": "Function",
    "class": "Class",
    "module": "Module",
}


def _params(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    names = []
    for param in node.named_children:
        if param.type == "identifier":
            names.append(text(param))
        else:
            name = param.child_by_field_name("name")
            if name is not None:
                names.append(text(name))
    return tuple(names)


def _mixins(body: Node | None) -> list[tuple[str, str]]:
    found = []
    for statement in body.named_children if body is not None else ():
        if statement.type != "call" or statement.child_by_field_name("receiver") is not None:
            continue
        method = statement.child_by_field_name("method")
        if method is None or text(method) not in MIXINS:
            continue
        arguments = statement.child_by_field_name("arguments")
        for argument in arguments.named_children if arguments is not None else ():
            if argument.type in ("constant", "scope_resolution"):
                found.append((text(argument).rsplit("::", 1)[-1], "includes"))
    return found


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    label = LABELS[node.type]
    body = node.child_by_field_name("body")
    if label == "Function":
        metadata: dict = {}
        if node.type == "singleton_method":
            metadata["singleton"] = True
        if text(name_node) == "initialize":
            metadata["dead_code_root_kinds"] = ["ruby.constructor"]
        return Definition(
            label,
            text(name_node),
            name_node,
            node,
            body,
            args=_params(node.child_by_field_name("parameters")),
            metadata=metadata,
        )
    bases = []
    superclass = node.child_by_field_name("superclass")
    if superclass is not None and superclass.named_child_count:
        bases.append((text(superclass.named_children[0]).rsplit("::", 1)[-1], "extends"))
    bases.extend(_mixins(body))
    name = text(name_node).rsplit("::", 1)[-1]
    return Definition(label, name, name_node, node, body, bases=tuple(bases))


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    method = node.child_by_field_name("method")
    if method is None:
        return None
    name = text(method)
    receiver = node.child_by_field_name("receiver")
    arguments = node.child_by_field_name("arguments")
    count = arguments.named_child_count if arguments is not None else 0
    if receiver is None:
        if name in REQUIRES or name in MIXINS:
            return None
        return Call(name, name, None, "call", count)
    receiver_text = text(receiver)
    if name == "new":
        type_name = receiver_text.rsplit("::", 1)[-1]
        return Call(type_name, f"{receiver_text}.new", None, "constructor_call", count)
    return Call(name, f"{receiver_text}.{name}", receiver_text, "method_call", count)


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    method = node.child_by_field_name("method")
    if method is None or node.child_by_field_name("receiver") is not None:
        return []
    name = text(method)
    if name not in REQUIRES:
        return []
    arguments = node.child_by_field_name("arguments")
    strings = [a for a in arguments.named_children if a.type == "string"] if arguments else []
    if not strings:
        return []
    module = "".join(text(c) for c in strings[0].named_children if c.type == "string_content")
    return [ImportRow(module, None, None, name, line_of(node))]


def assign(node: Node) -> tuple[str, str] | None:
    """A local bound to a constructed type (``v = Cls()``), for type-inferred calls."""
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None or left.type != "identifier" or right.type != "call":
        return None
    method = right.child_by_field_name("method")
    receiver = right.child_by_field_name("receiver")
    if method is None or receiver is None or text(method) != "new":
        return None
    return text(left), text(receiver).rsplit("::", 1)[-1]


SPEC = LanguageSpec(
    key="ruby",
    load=tree_sitter_ruby.language,
    definitions=frozenset(LABELS),
    define=define,
    calls=frozenset({"call"}),
    call=call,
    imports=frozenset({"call"}),
    import_rows=import_rows,
    assignments=frozenset({"assignment"}),
    assign=assign,
    complexity=COMPLEXITY,
)
