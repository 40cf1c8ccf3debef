"""Ruby extraction: methods, classes, modules, calls, require and mixins."""

from __future__ import annotations

import tree_sitter_ruby
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors.core import (
    CURRENT_SOURCE,
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


_VISIBILITY = frozenset({"private", "protected", "public"})


def _visibility(method: Node) -> str | None:
    """``private`` or ``protected`` for a method written after a bare ``private`` (until a
    ``public``) or as ``private def name``; None for a public one."""
    holder = method.parent
    if holder is not None and holder.type == "argument_list":  # private def name ... end
        call = holder.parent
        called = call.child_by_field_name("method") if call is not None else None
        word = text(called) if called is not None and call.type == "call" else ""
        return word if word in ("private", "protected") else None
    sibling = method.prev_named_sibling
    while sibling is not None:  # the nearest bare visibility word above it in the body
        if sibling.type == "identifier" and text(sibling) in _VISIBILITY:
            word = text(sibling)
            return None if word == "public" else word
        sibling = sibling.prev_named_sibling
    return None


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
        name = text(name_node)
        if name == "initialize":
            metadata["dead_code_root_kinds"] = ["ruby.constructor"]
        elif not name[:1].isalpha() and name[:1] != "_":  # ==, <=>, [], +, ...
            metadata["dead_code_root_kinds"] = ["ruby.operator"]
        elif name.endswith("="):  # name=: run by ``obj.name = value``
            metadata["dead_code_root_kinds"] = ["ruby.setter"]
        hidden = _visibility(node)
        if hidden:
            metadata["visibility"] = hidden
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


_VALUE_PARENTS = frozenset(
    {
        "body_statement",
        "then",
        "else",
        "do",
        "begin",
        "parenthesized_statements",
        "argument_list",
        "binary",
        "unary",
        "conditional",
        "array",
        "interpolation",
        "return",
        "if_modifier",
        "unless_modifier",
        "while_modifier",
        "until_modifier",
        "if",
        "unless",
        "while",
        "until",
        "elsif",
        "in",
        "element_reference",
    }
)
"""Where a bare name is a value: a method call, unless the method has a local of that name."""
_FIELD_VALUES = {"assignment": "right", "operator_assignment": "right", "call": "receiver"}
_SCOPES = frozenset({"method", "singleton_method", "program", "class", "module"})


class _Locals:
    """The locals a Ruby method (or file) assigns, read once per method: where each name is
    first assigned, so ``total`` after ``total = 1`` is the local, not a call."""

    source: object = None
    scope: tuple[int, int] | None = None
    first: dict[str, int] = {}

    @classmethod
    def assigned_before(cls, scope: Node, name: str, before: int) -> bool:
        key = (scope.start_byte, scope.end_byte)
        if CURRENT_SOURCE.data is not cls.source or key != cls.scope:
            cls.source, cls.scope, cls.first = CURRENT_SOURCE.data, key, _first_assignments(scope)
        return cls.first.get(name, before) < before


def _first_assignments(scope: Node) -> dict[str, int]:
    first: dict[str, int] = {}
    cursor = scope.walk()
    while True:
        node = cursor.node
        kind = node.type
        target = None
        if kind in ("assignment", "operator_assignment"):
            target = node.child_by_field_name("left")
        elif kind in ("exception_variable", "for"):
            target = node.named_children[0] if node.named_child_count else None
            if kind == "for":
                target = node.child_by_field_name("pattern")
        if target is not None and target.type == "identifier":
            first.setdefault(text(target), target.start_byte)
        descend = kind not in ("method", "singleton_method") or node == scope
        if descend and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == scope:
                return first


def _is_local(node: Node, name: str) -> bool:
    """Whether a bare name is a parameter of an enclosing block or method, or a local the
    method assigned before it."""
    scope = node.parent
    while scope is not None and scope.type not in _SCOPES:
        if scope.type in ("block", "do_block", "lambda"):
            parameters = scope.child_by_field_name("parameters")
            if parameters is not None and name in _params(parameters):
                return True
        scope = scope.parent
    if scope is None:
        return False
    if scope.type in ("method", "singleton_method") and name in _params(
        scope.child_by_field_name("parameters")
    ):
        return True
    return _Locals.assigned_before(scope, name, node.start_byte)


def _bare_call(node: Node) -> Call | None:
    """``helper`` alone: a call of the method ``helper`` where it stands as a value and no
    local of the name is in scope (Ruby calls need no parentheses)."""
    parent = node.parent
    if parent is None:
        return None
    field = _FIELD_VALUES.get(parent.type)
    if field is not None:
        if parent.child_by_field_name(field) != node:
            return None
    elif parent.type not in _VALUE_PARENTS:
        return None
    name = text(node)
    if _is_local(node, name):
        return None
    return Call(name, name, None, "call", 0)


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call."""
    if node.type == "identifier":
        return _bare_call(node)
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
    calls=frozenset({"call", "identifier"}),
    call=call,
    imports=frozenset({"call"}),
    import_rows=import_rows,
    assignments=frozenset({"assignment"}),
    assign=assign,
    complexity=COMPLEXITY,
)
