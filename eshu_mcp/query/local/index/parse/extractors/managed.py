"""Java and C# extraction: classes, interfaces, enums, records, methods, constructors."""

from __future__ import annotations

import tree_sitter_c_sharp
import tree_sitter_java
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
from eshu_mcp.query.local.index.parse.typenames import generic_type

JAVA_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        [
            "if_statement",
            "for_statement",
            "enhanced_for_statement",
            "while_statement",
            "do_statement",
            "switch_label",
            "catch_clause",
            "ternary_expression",
        ]
    ),
    nested=frozenset({"method_declaration", "constructor_declaration", "lambda_expression"}),
    boolean_ops={"binary_expression": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"switch_label"}),
)
CSHARP_COMPLEXITY = ComplexityTable(
    branches=frozenset(
        [
            "if_statement",
            "for_statement",
            "foreach_statement",
            "while_statement",
            "do_statement",
            "switch_section",
            "catch_clause",
            "conditional_expression",
        ]
    ),
    nested=frozenset(
        {
            "method_declaration",
            "constructor_declaration",
            "local_function_statement",
            "lambda_expression",
        }
    ),
    boolean_ops={"binary_expression": frozenset({"&&", "||"})},
    catch_all_kinds=frozenset({"switch_section"}),
)
JAVA_LABELS = {
    "method_declaration": "Function",
    "constructor_declaration": "Function",
    "class_declaration": "Class",
    "interface_declaration": "Interface",
    "enum_declaration": "Enum",
    "record_declaration": "Record",
    "annotation_type_declaration": "Annotation",
}
CSHARP_LABELS = {
    "method_declaration": "Function",
    "constructor_declaration": "Function",
    "local_function_statement": "Function",
    "class_declaration": "Class",
    "interface_declaration": "Interface",
    "struct_declaration": "Struct",
    "enum_declaration": "Enum",
    "record_declaration": "Record",
}


def _simple(type_text: str) -> str:
    return type_text.split("<", 1)[0].rsplit(".", 1)[-1].strip()


def _params(node: Node | None) -> tuple[str, ...]:
    if node is None:
        return ()
    names = []
    for param in node.named_children:
        name = param.child_by_field_name("name")
        if name is not None:
            names.append(text(name))
    return tuple(names)


def _typed_params(node: Node | None) -> tuple[tuple[str, str], ...]:
    """Parameter names with the (simple) type each is declared with."""
    found = []
    for param in node.named_children if node is not None else ():
        name = param.child_by_field_name("name")
        type_node = param.child_by_field_name("type")
        if name is not None and type_node is not None:
            declared = _simple(text(type_node))
            if declared.isidentifier() and declared != "var":
                found.append((text(name), declared))
    return tuple(found)


def _java_typed_params(node: Node | None) -> tuple[tuple[str, str], ...]:
    """Parameter names with their declared types, type arguments kept (as
    :func:`.typenames.generic_type` writes them); a parameter of a method's bounded type
    variable (``<A extends Appendable> void f(A out)``) has the bound's type."""
    found = []
    bounds = _type_bounds(node.parent) if node is not None and node.parent is not None else {}
    for param in node.named_children if node is not None else ():
        name = param.child_by_field_name("name")
        type_node = param.child_by_field_name("type")
        if name is not None and type_node is not None:
            declared = generic_type(text(type_node))
            declared = bounds.get(declared, declared)
            if _simple(declared).partition("^")[0].isidentifier() and declared != "var":
                found.append((text(name), declared))
    return tuple(found)


def _type_bounds(method: Node) -> dict[str, str]:
    """A method's type variables that have a bound, each to its (first) bound's type."""
    parameters = next((c for c in method.named_children if c.type == "type_parameters"), None)
    bounds: dict[str, str] = {}
    for parameter in parameters.named_children if parameters is not None else ():
        name = next((c for c in parameter.named_children if c.type == "type_identifier"), None)
        bound = next((c for c in parameter.named_children if c.type == "type_bound"), None)
        first = bound.named_children[0] if bound is not None and bound.named_child_count else None
        if name is not None and first is not None:
            bounds[text(name)] = generic_type(text(first))
    return bounds


def _modifiers(node: Node) -> list[str]:
    found = []
    for child in node.children:
        if child.type in ("modifiers", "modifier"):
            found.extend(text(child).split())
    return found


def _java_bases(node: Node) -> tuple[tuple[str, str], ...]:
    bases = []
    superclass = node.child_by_field_name("superclass")
    if superclass is not None:
        bases.extend((_simple(text(t)), "extends") for t in superclass.named_children)
    interfaces = node.child_by_field_name("interfaces")
    for child in [interfaces] if interfaces is not None else []:
        for type_list in child.named_children:
            bases.extend((_simple(text(t)), "implements") for t in type_list.named_children)
    for child in node.named_children:
        if child.type == "extends_interfaces":
            for type_list in child.named_children:
                bases.extend((_simple(text(t)), "extends") for t in type_list.named_children)
    return tuple(bases)


def _csharp_bases(node: Node) -> tuple[tuple[str, str], ...]:
    bases = []
    for child in node.named_children:
        if child.type != "base_list":
            continue
        for index, base in enumerate(child.named_children):
            name = _simple(text(base))
            looks_interface = len(name) > 1 and name[0] == "I" and name[1].isupper()
            kind = "implements" if looks_interface or index > 0 else "extends"
            bases.append((name, kind))
    return tuple(bases)


def _define(labels: dict[str, str], bases_of, language: str, typed_params=_typed_params):
    def define(node: Node) -> Definition | None:
        """Read a definition node (name, span, args, bases, metadata); None to skip it."""
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        label = labels[node.type]
        name = text(name_node)
        modifiers = _modifiers(node)
        metadata: dict = {}
        if modifiers:
            metadata["modifiers"] = modifiers
        annotations = [m for m in modifiers if m.startswith(("@", "["))]
        if label == "Function":
            roots = []
            if name == "main" and "static" in modifiers:
                roots.append(f"{language}.main_method")
            if "override" in modifiers or "@Override" in modifiers:
                roots.append(f"{language}.override")
            if any(a.lstrip("@[").startswith(("Test", "Fact", "Theory")) for a in annotations):
                roots.append(f"{language}.test_method")
            if node.type == "constructor_declaration":
                roots.append(f"{language}.constructor")
            if roots:
                metadata["dead_code_root_kinds"] = roots
            return Definition(
                label,
                name,
                name_node,
                node,
                node.child_by_field_name("body"),
                args=_params(node.child_by_field_name("parameters")),
                metadata=metadata,
                locals=typed_params(node.child_by_field_name("parameters")),
            )
        return Definition(
            label,
            name,
            name_node,
            node,
            node.child_by_field_name("body"),
            bases=bases_of(node),
            metadata=metadata,
        )

    return define


def java_call(node: Node) -> Call | None:
    """Read a Java invocation or ``new`` expression's callee."""
    count = core.argument_count(node)
    if node.type == "object_creation_expression":
        type_node = node.child_by_field_name("type")
        full = text(type_node)
        return Call(_simple(full), full, None, "constructor_call", count)
    name = node.child_by_field_name("name")
    if name is None:
        return None
    receiver = node.child_by_field_name("object")
    if receiver is None:
        return Call(text(name), text(name), None, "call", count)
    full = f"{text(receiver)}.{text(name)}"
    return Call(text(name), full, text(receiver), "method_call", count)


def csharp_call(node: Node) -> Call | None:
    """Read a C# invocation or ``new`` expression's callee."""
    count = core.argument_count(node)
    if node.type == "object_creation_expression":
        full = text(node.child_by_field_name("type"))
        return Call(_simple(full), full, None, "constructor_call", count)
    function = node.child_by_field_name("function")
    if function is None:
        return None
    if function.type in ("identifier", "generic_name"):
        name = _simple(text(function))
        return Call(name, name, None, "call", count)
    if function.type == "member_access_expression":
        name = function.child_by_field_name("name")
        receiver = function.child_by_field_name("expression")
        return Call(_simple(text(name)), text(function), text(receiver), "method_call", count)
    return None


def java_imports(node: Node) -> list[ImportRow]:
    """The name one Java import brings in (``*`` for on-demand imports)."""
    path = next(
        (c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None
    )
    if path is None:
        return []
    full = text(path)
    # ``import static a.b.C.m`` / ``a.b.C.*``: a class's static members, by the class's path
    kind = "static" if any(c.type == "static" for c in node.children) else "import"
    if any(c.type == "asterisk" for c in node.named_children):
        return [ImportRow(full, "*", None, kind, line_of(node))]
    module, _, name = full.rpartition(".")
    return [ImportRow(module or full, name, None, kind, line_of(node))]


def csharp_imports(node: Node) -> list[ImportRow]:
    """The namespace (and alias) one ``using`` directive brings in."""
    alias_node = node.child_by_field_name("name")
    target = next(
        (
            c
            for c in node.named_children
            if c.type in ("qualified_name", "identifier")
            and (alias_node is None or c.start_byte != alias_node.start_byte)
        ),
        None,
    )
    if target is None:
        return []
    alias = text(alias_node) if alias_node is not None else None
    return [ImportRow(text(target), None, alias, "using", line_of(node))]


def java_assign(node: Node) -> tuple[str, str] | None:
    """A typed local or field (``Cls v = ...`` or ``var v = new Cls()``), a loop variable
    (``for (Cls v : items)``) or a resource (``try (Cls v = ...)``), for type inference, type
    arguments kept (:func:`.typenames.generic_type`); ``this.v = new Cls()`` types ``this.v``."""
    if node.type == "assignment_expression":
        found = _this_assigned(node, "field_access", "object", "field", "this")
        if found is None:
            return None
        built = node.child_by_field_name("right").child_by_field_name("type")
        return found[0], generic_type(text(built))
    type_node = node.child_by_field_name("type")
    if node.type in ("enhanced_for_statement", "resource"):
        declarator = node
    else:
        declarator = node.child_by_field_name("declarator")
    if type_node is None or declarator is None:
        return None
    name = declarator.child_by_field_name("name")
    type_name = generic_type(text(type_node))
    if type_name == "var":
        value = declarator.child_by_field_name("value")
        if value is None or value.type != "object_creation_expression":
            return None
        type_name = generic_type(text(value.child_by_field_name("type")))
    return (text(name), type_name) if name is not None else None


def _this_assigned(node: Node, access: str, receiver: str, member: str, this: str):
    """(``this.v``, ``Cls``) for ``this.v = new Cls()``."""
    left = node.child_by_field_name("left")
    right = node.child_by_field_name("right")
    if left is None or right is None or left.type != access:
        return None
    if right.type != "object_creation_expression":
        return None
    owner = left.child_by_field_name(receiver)
    field = left.child_by_field_name(member)
    if owner is None or field is None or text(owner) != this:
        return None
    return f"this.{text(field)}", _simple(text(right.child_by_field_name("type")))


def csharp_assign(node: Node) -> tuple[str, str] | None:
    """A typed local or field (``Cls v = ...`` or ``var v = new Cls()``), for type inference;
    ``this.v = new Cls()`` types the field ``this.v``."""
    if node.type == "assignment_expression":
        return _this_assigned(node, "member_access_expression", "expression", "name", "this")
    if node.type == "property_declaration":
        name = node.child_by_field_name("name")
        type_node = node.child_by_field_name("type")
        if name is None or type_node is None:
            return None
        return text(name), _simple(text(type_node))
    declaration = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    if declaration is None:
        return None
    type_node = declaration.child_by_field_name("type")
    declarator = next(
        (c for c in declaration.named_children if c.type == "variable_declarator"), None
    )
    if type_node is None or declarator is None:
        return None
    name = declarator.child_by_field_name("name")
    type_name = _simple(text(type_node))
    if type_name == "var":
        value = next(
            (c for c in declarator.named_children if c.type == "object_creation_expression"),
            None,
        )
        if value is None:
            return None
        type_name = _simple(text(value.child_by_field_name("type")))
    return (text(name), type_name) if name is not None else None


JAVA = LanguageSpec(
    key="java",
    load=tree_sitter_java.language,
    definitions=frozenset(JAVA_LABELS),
    define=_define(JAVA_LABELS, _java_bases, "java", _java_typed_params),
    calls=frozenset({"method_invocation", "object_creation_expression"}),
    call=java_call,
    imports=frozenset({"import_declaration"}),
    import_rows=java_imports,
    assignments=frozenset(
        {
            "local_variable_declaration",
            "field_declaration",
            "assignment_expression",
            "enhanced_for_statement",
            "resource",
        }
    ),
    assign=java_assign,
    instance_prefix="this.",
    implicit_instance=True,
    typed_members=True,
    typed_chains=True,
    complexity=JAVA_COMPLEXITY,
)
CSHARP = LanguageSpec(
    key="c_sharp",
    load=tree_sitter_c_sharp.language,
    definitions=frozenset(CSHARP_LABELS),
    define=_define(CSHARP_LABELS, _csharp_bases, "c_sharp"),
    calls=frozenset({"invocation_expression", "object_creation_expression"}),
    call=csharp_call,
    imports=frozenset({"using_directive"}),
    import_rows=csharp_imports,
    assignments=frozenset(
        {
            "local_declaration_statement",
            "field_declaration",
            "property_declaration",
            "assignment_expression",
        }
    ),
    assign=csharp_assign,
    instance_prefix="this.",
    implicit_instance=True,
    typed_members=True,
    complexity=CSHARP_COMPLEXITY,
)
