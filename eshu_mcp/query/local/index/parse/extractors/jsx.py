"""JSX on top of the JavaScript and TSX extractors: ``<LineItem n={1} />`` uses (calls) the
component ``LineItem``, and ``const Panel = forwardRef(function (props, ref) {...})`` (or
``memo``, ``observer``...) defines the component ``Panel``."""

from __future__ import annotations

import attrs
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors import ecmascript
from eshu_mcp.query.local.index.parse.extractors.core import Call, Definition, LanguageSpec, text

WRAPPERS = frozenset({"forwardRef", "memo", "observer", "lazy", "styled", "withRouter"})
"""Functions that take a component and return one to stand for it."""
ELEMENTS = frozenset({"jsx_opening_element", "jsx_self_closing_element"})


def _wrapped(value: Node) -> Node | None:
    """The component function a wrapper call is given (``memo(forwardRef(fn))`` too)."""
    while value is not None and value.type == "call_expression":
        function = value.child_by_field_name("function")
        if function is None or text(function).rsplit(".", 1)[-1] not in WRAPPERS:
            return None
        arguments = value.child_by_field_name("arguments")
        value = arguments.named_children[0] if arguments and arguments.named_child_count else None
    return value if value is not None and value.type in ecmascript.FUNCTION_VALUES else None


def define(node: Node) -> Definition | None:
    """A definition as JavaScript/TSX reads it, or a wrapped component it left out."""
    found = ecmascript.define(node)
    if found is not None or node.type != "variable_declarator":
        return found
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name_node is None or name_node.type != "identifier" or value is None:
        return None
    component = _wrapped(value)
    if component is None:
        return None
    parameters = component.child_by_field_name("parameters")
    args = tuple(text(p) for p in parameters.named_children) if parameters is not None else ()
    wrapper = text(value.child_by_field_name("function")).rsplit(".", 1)[-1]
    declaration = node.parent
    exported = (
        declaration is not None
        and declaration.parent is not None
        and (declaration.parent.type == "export_statement")
    )
    return Definition(
        "Function",
        text(name_node),
        name_node,
        node,
        component.child_by_field_name("body"),
        args=args,
        metadata={"exported": exported, "semantic_kind": "component", "wrapper": wrapper},
    )


def call(node: Node) -> Call | None:
    """A call as JavaScript/TSX reads it, or a JSX element naming a component."""
    if node.type not in ELEMENTS:
        return ecmascript.call(node)
    name = node.child_by_field_name("name")
    if name is None:
        return None
    written = text(name)
    if name.type == "identifier":
        if not written[:1].isupper():  # <div>: an element of the page, not a component
            return None
        return Call(written, written, None, "call", None)
    if name.type in ("member_expression", "nested_identifier"):
        owner, _, member = written.rpartition(".")
        return Call(member, written, owner, "method_call", None)
    return None


def _with_jsx(spec: LanguageSpec) -> LanguageSpec:
    return attrs.evolve(spec, define=define, call=call, calls=spec.calls | ELEMENTS)


JAVASCRIPT = _with_jsx(ecmascript.JAVASCRIPT)
TSX = _with_jsx(ecmascript.TSX)
