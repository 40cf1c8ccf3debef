"""JavaScript, TypeScript and TSX extraction (no complexity: Eshu emits none for them)."""

from __future__ import annotations

import tree_sitter_javascript
import tree_sitter_typescript
from tree_sitter import Node

from eshu_mcp.query.local.index.parse.extractors import core
from eshu_mcp.query.local.index.parse.extractors.core import (
    ALIAS,
    Call,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)

FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
LABELS = {
    "function_declaration": "Function",
    "generator_function_declaration": "Function",
    "method_definition": "Function",
    "class_declaration": "Class",
    "abstract_class_declaration": "Class",
    "interface_declaration": "Interface",
    "enum_declaration": "Enum",
    "type_alias_declaration": "TypeAlias",
}


def _params(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    names = []
    for param in node.named_children:
        if param.type == "identifier":
            names.append(text(param))
        elif param.type in ("required_parameter", "optional_parameter"):
            pattern = param.child_by_field_name("pattern")
            names.append(text(pattern))
        elif param.type == "assignment_pattern":
            names.append(text(param.child_by_field_name("left")))
        elif param.type in ("rest_pattern", "object_pattern", "array_pattern"):
            names.append(text(param))
    return tuple(names)


def annotated(annotation: Node | None) -> str | None:
    """The named type a TypeScript annotation states (``: Foo<T> | null`` -> ``Foo``)."""
    if annotation is None or not annotation.named_child_count:
        return None
    parts = [
        part.strip()
        for part in text(annotation.named_children[0]).split("|")
        if part.strip() not in ("null", "undefined", "")
    ]
    if len(parts) != 1:
        return None
    name = parts[0].split("<", 1)[0].rsplit(".", 1)[-1]
    return name if name.isidentifier() else None


def _typed_params(node: Node | None) -> tuple[tuple[str, str], ...]:
    """Parameter names with the type each is annotated with."""
    found = []
    for param in node.named_children if node is not None else ():
        if param.type in ("required_parameter", "optional_parameter"):
            pattern = param.child_by_field_name("pattern")
            declared = annotated(param.child_by_field_name("type"))
            if declared is not None and pattern is not None and pattern.type == "identifier":
                found.append((text(pattern), declared))
                if any(c.type in ("accessibility_modifier", "readonly") for c in param.children):
                    found.append((f"this.{text(pattern)}", declared))  # a parameter property
    return tuple(found)


def _bases(node: Node) -> tuple[tuple[str, str], ...]:
    bases = []
    for child in node.named_children:
        if child.type == "class_heritage":
            for clause in child.named_children:
                if clause.type == "extends_clause":
                    value = clause.child_by_field_name("value")
                    bases.append((text(value).rsplit(".", 1)[-1], "extends"))
                elif clause.type == "implements_clause":
                    bases.extend(
                        (text(t).split("<", 1)[0].rsplit(".", 1)[-1], "implements")
                        for t in clause.named_children
                    )
                elif clause.type in ("identifier", "member_expression"):
                    bases.append((text(clause).rsplit(".", 1)[-1], "extends"))
        elif child.type == "extends_type_clause":
            bases.extend(
                (text(t).split("<", 1)[0].rsplit(".", 1)[-1], "extends")
                for t in child.named_children
            )
    return tuple(bases)


def _exported(node: Node) -> bool:
    parent = node.parent
    while parent is not None and parent.type in ("lexical_declaration", "variable_declaration"):
        parent = parent.parent
    return parent is not None and parent.type == "export_statement"


_EXPORT_OBJECTS = frozenset({"exports", "module.exports"})


_CHAIN_LIMIT = 8
"""Assignments ``a.x = b.y = ... = function`` followed at most, to the function."""


def _property_function(node: Node) -> Definition | None:
    """
    A function stored on an object property: ``Cls.prototype.m = function () {}`` (a method
    of ``Cls``), ``exports.f = ...``, ``app.handle = function handle() {}``. Callers reach it
    through the property, so it is named by the property; being reachable through an object,
    it is never reported dead. ``this.m = ...`` is left to the constructor that runs it.
    """
    left = node.child_by_field_name("left")
    value = node.child_by_field_name("right")
    if left is None or left.type != "member_expression" or value is None:
        return None
    # ``res.set = res.header = function header() {}``: every name in the chain is the function.
    for _ in range(_CHAIN_LIMIT):
        if value is None or value.type != "assignment_expression":
            break
        value = value.child_by_field_name("right")
    if value is None or value.type not in FUNCTION_VALUES:
        return None
    owner = left.child_by_field_name("object")
    name_node = left.child_by_field_name("property")
    if owner is None or name_node is None or name_node.type != "property_identifier":
        return None
    owner_text = text(owner)
    class_context = None
    if owner_text == "module" and text(name_node) == "exports":  # module.exports = function
        name_node = value.child_by_field_name("name") or _declared_name(node)
        if name_node is None:
            return None
    elif owner.type == "member_expression" and owner_text.endswith(".prototype"):
        class_context = owner_text[: -len(".prototype")].rsplit(".", 1)[-1]
    elif owner.type == "identifier" and owner_text != "exports":
        class_context = owner_text  # an object of functions: ``this`` is that object
    elif owner_text not in _EXPORT_OBJECTS:
        return None
    metadata: dict = {
        "semantic_kind": value.type,
        "assigned_to": text(left),
        "dead_code_root_kinds": ["javascript.property_function"],
    }
    if owner_text in _EXPORT_OBJECTS or owner_text == "module":
        metadata["exported"] = True
    return _function_value(name_node, node, value, metadata, class_context)


def _declared_name(node: Node) -> Node | None:
    """The variable a chain of assignments initialises (``var a = b.c = value`` -> ``a``)."""
    parent = node.parent
    while parent is not None and parent.type == "assignment_expression":
        parent = parent.parent
    if parent is None or parent.type != "variable_declarator":
        return None
    name = parent.child_by_field_name("name")
    return name if name is not None and name.type == "identifier" else None


_FIELD_NAMES = frozenset({"property_identifier", "private_property_identifier"})


def _field_function(node: Node) -> Definition | None:
    """
    A class field holding a function: ``fetch = (request) => this.#dispatch(request)`` (Hono's
    entry point), React's ``onClick = () => {...}``. Callers reach it as ``app.fetch()``, so
    it is a method of its class, named by the field.
    """
    value = node.child_by_field_name("value")
    name_node = node.child_by_field_name("name") or node.child_by_field_name("property")
    if value is None or value.type not in FUNCTION_VALUES or name_node is None:
        return None
    if name_node.type not in _FIELD_NAMES:
        return None
    return _function_value(
        name_node, node, value, {"semantic_kind": value.type, "class_field": True}
    )


def _function_value(
    name_node: Node, span: Node, value: Node, metadata: dict, class_context: str | None = None
) -> Definition:
    """A function written as a value (``name = (args) => body``), named by ``name_node``."""
    parameters = value.child_by_field_name("parameters")
    return Definition(
        "Function",
        text(name_node),
        name_node,
        span,
        value.child_by_field_name("body"),
        args=_params(parameters),
        class_context=class_context,
        metadata=metadata,
        locals=_typed_params(parameters),
    )


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    if node.type == "assignment_expression":
        return _property_function(node)
    if node.type in ("field_definition", "public_field_definition"):
        return _field_function(node)
    if node.type == "variable_declarator":
        value = node.child_by_field_name("value")
        name_node = node.child_by_field_name("name")
        if value is None or value.type not in FUNCTION_VALUES or name_node is None:
            return None
        if name_node.type != "identifier":
            return None
        metadata = {"exported": _exported(node), "semantic_kind": value.type}
        return _function_value(name_node, node, value, metadata)
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    label = LABELS[node.type]
    span = (
        node.parent if node.parent is not None and node.parent.type == "export_statement" else node
    )
    metadata: dict = {"exported": span is not node}
    if node.type == "method_definition":
        metadata = {}
        if text(name_node) == "constructor":
            metadata["dead_code_root_kinds"] = ["javascript.constructor"]
    if node.children and node.children[0].type == "async":
        metadata["async"] = True
    return Definition(
        label,
        text(name_node),
        name_node,
        span,
        node.child_by_field_name("body"),
        args=_params(node.child_by_field_name("parameters")) if label == "Function" else (),
        bases=_bases(node) if label in ("Class", "Interface") else (),
        metadata=metadata,
        locals=_typed_params(node.child_by_field_name("parameters")) if label == "Function" else (),
    )


def call(node: Node) -> Call | None:
    """Read a call node's callee as written; None when it is not a named call. A member
    read or assigned (not called) is a ``property_read``/``property_write`` of that name:
    resolution keeps those whose target is a ``get``/``set`` accessor."""
    if node.type == "member_expression":
        return _member_use(node)
    if node.type == "new_expression":
        constructor = node.child_by_field_name("constructor")
        count = core.argument_count(node)
        if constructor is None:
            return None
        full = text(constructor)
        return Call(full.rsplit(".", 1)[-1], full, None, "new_expression", count)
    function = node.child_by_field_name("function")
    count = core.argument_count(node)
    if function is None:
        return None
    if function.type == "unary_expression":  # ``!isRule<T>(v)``: the grammar reads ``!isRule``
        function = function.child_by_field_name("argument")
        if function is None:
            return None
    if function.type == "identifier":
        name = text(function)
        if name == "require":
            return None
        return Call(name, name, None, "call", count)
    if function.type == "member_expression":
        prop = function.child_by_field_name("property")
        obj = function.child_by_field_name("object")
        if prop is None or obj is None:
            return None
        invoker = text(prop)
        if invoker in _INVOKERS and obj.type in ("identifier", "member_expression"):
            # apply's arguments are one array: how many is not written
            return _invoked(obj, count if invoker == "call" else None)
        return Call(text(prop), text(function), text(obj), "method_call", count)
    return None


_INVOKERS = frozenset({"call", "apply"})
_RECEIVERS = frozenset({"identifier", "this", "member_expression"})
_NOT_READ = frozenset({"call_expression", "update_expression", "unary_expression"})
"""Parents of a member that is called (its function), incremented or deleted."""


def _member_use(node: Node) -> Call | None:
    """``x.name`` read, or assigned (``x.name = v``, ``x.name += v``), on a receiver that is a
    name, ``this`` or a member chain; None for a called member or an optional chain."""
    prop = node.child_by_field_name("property")
    obj = node.child_by_field_name("object")
    if prop is None or obj is None or prop.type != "property_identifier":
        return None
    if obj.type not in _RECEIVERS:
        return None
    parent = node.parent
    kind = "property_read"
    if parent is not None:
        parent_kind = parent.type
        if parent_kind.startswith("jsx_"):
            return None  # <Icons.Star/> names a component: a use the JSX reader records
        if parent.start_byte == node.start_byte:
            if parent_kind in _NOT_READ:
                return None
            if parent_kind in ("assignment_expression", "augmented_assignment_expression"):
                kind = "property_write"
    name = text(prop)
    if name.isupper():
        return None  # a constant
    return Call(name, text(node), text(obj), kind, None)


def _invoked(function: Node, count: int | None) -> Call | None:
    """``fn.call(thisArg, ...)`` and ``this.handle.apply(this, args)`` call ``fn`` and
    ``this.handle``: the call is read as a call of the function itself."""
    count = None if count is None else max(count - 1, 0)
    if function.type == "identifier":
        name = text(function)
        return Call(name, name, None, "call", count)
    prop = function.child_by_field_name("property")
    obj = function.child_by_field_name("object")
    if prop is None or obj is None or prop.type != "property_identifier":
        return None
    return Call(text(prop), text(function), text(obj), "method_call", count)


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in (a re-export, ``export {a as b} from './x'``,
    brings them in to hand them on: import type ``reexport``)."""
    line = line_of(node)
    if node.type == "export_statement":
        return _reexports(node, line)
    if node.type == "call_expression":
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        if function is None or text(function) != "require" or arguments is None:
            return []
        strings = [a for a in arguments.named_children if a.type == "string"]
        if not strings:
            return []
        module = text(strings[0]).strip("'\"`")
        binding = None
        parent = node.parent
        if parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
            if target is not None and target.type == "identifier":
                binding = text(target)
        return [ImportRow(module, None, binding, "require", line)]
    module = _source_module(node)
    if module is None:
        return []
    rows = []
    for clause in node.named_children:
        if clause.type != "import_clause":
            continue
        for item in clause.named_children:
            if item.type == "identifier":
                rows.append(ImportRow(module, "default", text(item), "import", line))
            elif item.type == "namespace_import":
                alias = text(item.named_children[0]) if item.named_child_count else None
                rows.append(ImportRow(module, "*", alias, "import", line))
            elif item.type == "named_imports":
                for spec in item.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = text(spec.child_by_field_name("name"))
                    alias_node = spec.child_by_field_name("alias")
                    alias = text(alias_node) if alias_node is not None else None
                    rows.append(ImportRow(module, name, alias, "import", line))
    return rows or [ImportRow(module, None, None, "import", line)]


def _source_module(node: Node) -> str | None:
    """The module an ``import ... from`` or ``export ... from`` statement names."""
    source = node.child_by_field_name("source")
    return None if source is None else text(source).strip("'\"`")


def _reexports(node: Node, line: int) -> list[ImportRow]:
    """``export {a, b as c} from './x'``, ``export * from './y'``, ``export * as ns from``:
    what a barrel file hands on. An export with no ``from`` imports nothing, but one that
    renames (``export {Hono as HonoBase}``) hands on a name of its own file: a row of module
    ``""`` (the file itself), so an import of ``HonoBase`` reaches ``Hono``."""
    module = _source_module(node)
    if module is None:
        return _renamed_exports(node, line)
    rows = []
    for clause in node.named_children:
        if clause.type == "export_clause":
            for spec in clause.named_children:
                name = spec.child_by_field_name("name")
                if spec.type != "export_specifier" or name is None:
                    continue
                alias = spec.child_by_field_name("alias")
                rows.append(
                    ImportRow(
                        module,
                        text(name),
                        None if alias is None else text(alias),
                        "reexport",
                        line,
                    )
                )
        elif clause.type == "namespace_export" and clause.named_child_count:
            rows.append(ImportRow(module, "*", text(clause.named_children[-1]), "reexport", line))
    return rows or [ImportRow(module, "*", None, "reexport", line)]


def _renamed_exports(node: Node, line: int) -> list[ImportRow]:
    """``export {a as b}`` (no ``from``): ``a`` of this file handed on as ``b``."""
    rows = []
    for clause in node.named_children:
        if clause.type != "export_clause":
            continue
        for spec in clause.named_children:
            name = spec.child_by_field_name("name")
            alias = spec.child_by_field_name("alias")
            if spec.type != "export_specifier" or name is None or alias is None:
                continue
            if name.type == "identifier" and text(alias) not in (text(name), "default"):
                rows.append(ImportRow("", text(name), text(alias), "reexport", line))
    return rows


def assign(node: Node) -> tuple[str, str] | None:
    """A local or field bound to a declared or constructed type (``const v: Cls``, ``v = new
    Cls()``, class fields, ``this.v = new Cls()``), for type-inferred calls."""
    if node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        if left is None or left.type != "member_expression":
            return None
        owner = left.child_by_field_name("object")
        field = left.child_by_field_name("property")
        if owner is None or owner.type != "this" or field is None:
            return None
        built = _constructed(node.child_by_field_name("right"))
        return (f"this.{text(field)}", built) if built is not None else None
    name = node.child_by_field_name("name") or node.child_by_field_name("property")
    if name is None or name.type not in ("identifier", "property_identifier"):
        return None
    declared = annotated(node.child_by_field_name("type"))
    if declared is None:
        value = node.child_by_field_name("value")
        declared = _constructed(value)
        if declared is None and value is not None and value.type == "call_expression":
            declared = _called(value.child_by_field_name("function"))
        if declared is None and node.type == "variable_declarator":
            declared = _this_class(value) if value is not None and value.type == "this" else None
            declared = declared or _aliased(value)
    return (text(name), declared) if declared is not None else None


_OWN_THIS = frozenset({"function_expression", "function", "function_declaration"})
_CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})


def _this_class(node: Node) -> str | None:
    """The class ``this`` is an instance of where ``node`` stands (``let command = this`` in
    a method, an arrow inside it, or ``Cls.prototype.m = function () {...}``); None inside a
    plain function, which has a ``this`` of its own."""
    parent = node.parent
    while parent is not None:
        kind = parent.type
        if kind in _CLASSES:
            name = parent.child_by_field_name("name")
            return text(name) if name is not None else None
        if kind in _OWN_THIS:
            target = parent.parent
            if target is None or target.type != "assignment_expression":
                return None
            owner = target.child_by_field_name("left")
            owner = None if owner is None else owner.child_by_field_name("object")
            if owner is None or not text(owner).endswith(".prototype"):
                return None
            return text(owner)[: -len(".prototype")].rsplit(".", 1)[-1] or None
        parent = parent.parent
    return None


def _aliased(value: Node | None) -> str | None:
    """``@g`` or ``@obj.m`` for ``const f = g`` / ``const f = obj.m`` (``this.m`` too): a
    local bound to a function or method, whose bare calls call it."""
    if value is None:
        return None
    if value.type == "identifier":
        return ALIAS + text(value)
    if value.type != "member_expression":
        return None
    owner = value.child_by_field_name("object")
    field = value.child_by_field_name("property")
    if owner is None or field is None or field.type != "property_identifier":
        return None
    if owner.type not in ("identifier", "this"):
        return None
    return f"{ALIAS}{text(owner)}.{text(field)}"


def _called(function: Node | None) -> str | None:
    """``make()`` or ``ns.make()`` for a call whose declared result types a local."""
    if function is None:
        return None
    if function.type == "member_expression":
        owner = function.child_by_field_name("object")
        if owner is None or owner.type != "identifier":
            return None
    elif function.type != "identifier":
        return None
    return text(function) + "()"


def _constructed(value: Node | None) -> str | None:
    """The class a ``new Cls(...)`` expression constructs."""
    if value is None or value.type != "new_expression":
        return None
    constructor = value.child_by_field_name("constructor")
    return None if constructor is None else text(constructor).rsplit(".", 1)[-1]


MEMBER = core.MemberAccess("member_expression", "property", "object")
_REFERENCE_PARENTS = (
    "arguments",
    "pair value",
    "variable_declarator value",
    "assignment_expression right",
    "return_statement",
    "array",
    "parenthesized_expression",
    "ternary_expression consequence",
    "ternary_expression alternative",
)
_VALUES = "[(identifier) (member_expression)]"


def reference_pattern(jsx: bool) -> str:
    """Functions used as values: passed, assigned, returned, listed, given as JSX props."""
    parents = _REFERENCE_PARENTS + (("jsx_expression",) if jsx else ())
    return core.reference_patterns(parents, _VALUES) + (
        " (object (shorthand_property_identifier) @reference)"
    )


def reference(node: Node) -> tuple[str, str | None] | None:
    """(name, receiver) of a function or method reference (``onDone``, ``this.onDone``)."""
    if node.type == "shorthand_property_identifier":
        return text(node), None
    return core.value_reference(node, MEMBER)


def _spec(key: str, load, extra: frozenset[str], field: str) -> LanguageSpec:
    return LanguageSpec(
        key=key,
        load=load,
        definitions=frozenset(
            {
                "function_declaration",
                "generator_function_declaration",
                "method_definition",
                "class_declaration",
                "variable_declarator",
                "assignment_expression",
                field,
            }
        )
        | extra,
        define=define,
        calls=frozenset({"call_expression", "new_expression", "member_expression"}),
        call=call,
        imports=frozenset({"import_statement", "call_expression", "export_statement"}),
        import_rows=import_rows,
        assignments=frozenset({"variable_declarator", "assignment_expression", field}),
        assign=assign,
        instance_prefix="this.",
        typed_members=True,
        function_aliases=True,
        references=frozenset({"reference"}),
        reference=reference,
        query_patterns={"reference": reference_pattern(jsx=key != "typescript")},
    )


TS_EXTRA = frozenset(
    {
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
    }
)
JAVASCRIPT = _spec("javascript", tree_sitter_javascript.language, frozenset(), "field_definition")
TYPESCRIPT = _spec(
    "typescript",
    tree_sitter_typescript.language_typescript,
    TS_EXTRA,
    "public_field_definition",
)
TSX = _spec("tsx", tree_sitter_typescript.language_tsx, TS_EXTRA, "public_field_definition")
