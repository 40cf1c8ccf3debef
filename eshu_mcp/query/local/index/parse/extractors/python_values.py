"""Python values used but not called: attribute reads and writes that may be a property's
use, and references to a function, method or class as a value, with the query patterns that
capture both; and the grammar lookups these and :mod:`.python` share."""

from __future__ import annotations

import re

import tree_sitter_python
from tree_sitter import Language, Node

from eshu_mcp.query.local.index.parse.extractors.core import CURRENT_SOURCE, text

_LANGUAGE = Language(tree_sitter_python.language())
_FIELD = {
    name: _LANGUAGE.field_id_for_name(name)
    for name in (
        "name",
        "body",
        "superclasses",
        "parameters",
        "function",
        "arguments",
        "attribute",
        "object",
        "left",
        "right",
        "type",
        "value",
        "alias",
    )
}
_ATTRIBUTE, _OBJECT = (_FIELD[f] for f in ("attribute", "object"))
_HAS_GAP = re.compile("[\\s#\\\\\ufeff\u2060\u200b]").search
"""Whether an attribute's text may hold something besides object, ``.`` and attribute
(the grammar's extras: whitespace, comments, line continuations, zero-width spaces)."""


def attribute_read(node: Node) -> tuple[str, str, str, str, None] | None:
    """A ``property_read`` of ``x.name`` (see :func:`_attribute_use`): an attribute
    :data:`VALUE_PATTERN` captures anywhere but as an assignment's target."""
    return _attribute_use(node, "property_read")


def attribute_written(node: Node) -> tuple[str, str, str, str, None] | None:
    """A ``property_write`` of ``x.name`` (see :func:`_attribute_use`): an attribute assigned
    (``x.name = v``, ``x.name += v``), which :data:`VALUE_PATTERN` captures apart."""
    return _attribute_use(node, "property_write")


def _attribute_use(node: Node, kind: str) -> tuple[str, str, str, str, None] | None:
    """(name, full, receiver, ``kind``, None) of an attribute ``x.name`` used but not called,
    on a dotted receiver; None for a dunder or upper-case (constant) name, a plain instance
    attribute of the file, or an attribute of a module or class. Resolution keeps the uses
    whose target is a property's getter or setter. Runs for every attribute the query
    captures (never a call's function, a decorator or a ``del``'s target: the query leaves
    those out), so the cheap tests come first."""
    source = CURRENT_SOURCE.ascii  # text() inlined
    full = text(node) if source is None else source[node.start_byte : node.end_byte]
    read = _FILE_READ[0]
    if read[0] is not CURRENT_SOURCE.data:
        read = _read_file()
    _, names, uses = read
    found = uses.get(full, _UNREAD)  # the same text reads the same way all through a file
    if found is _UNREAD:
        if _HAS_GAP(full) is None:
            receiver, name = full.rsplit(".", 1)
            found = uses[full] = _property_candidate(name, receiver, names)
        else:
            name = text(node.child_by_field_id(_ATTRIBUTE))
            receiver = text(node.child_by_field_id(_OBJECT))
            found = _property_candidate(name, receiver, names)
    if found is None:
        return None
    return (found[0], full, found[1], kind, None)


_UNREAD = object()


def _possible_uses(nodes: list[Node]) -> list[Node]:
    """The attribute nodes :func:`_attribute_use` may read as a use: all but those whose text
    (without gaps) it reads as None, which it then notes for the file as it would itself."""
    source = CURRENT_SOURCE.ascii  # text() inlined
    read = _FILE_READ[0]
    if read[0] is not CURRENT_SOURCE.data:
        read = _read_file()
    _, names, uses = read
    kept = []
    for node in nodes:
        full = text(node) if source is None else source[node.start_byte : node.end_byte]
        found = uses.get(full, _UNREAD)
        if found is _UNREAD:
            if _HAS_GAP(full) is not None:  # read from its child nodes, when swept
                kept.append(node)
                continue
            receiver, name = full.rsplit(".", 1)
            found = uses[full] = _property_candidate(name, receiver, names)
        if found is not None:
            kept.append(node)
    return kept


def _property_candidate(
    name: str, receiver: str, names: tuple[frozenset[str], frozenset[str]]
) -> tuple[str, str] | None:
    """(name, receiver) of ``receiver.name`` when it may be an instance's property, from its
    text and the file's ``names`` (:func:`_file_names`) alone; None for a dunder or
    upper-case (constant) name, a plain instance attribute of the file, an attribute of a
    module or class, or a receiver that is no dotted name."""
    if name[:2] == "__" or name.isupper():
        return None
    if name in names[0]:
        return None
    head = receiver.split(".", 1)[0]
    if head in names[1] or (head == receiver and (head == "cls" or head[:1].isupper())):
        return None  # a module's or a class's attribute: no instance's property
    if _DOTTED(receiver) is None:
        return None
    return name, receiver


_SELF_ASSIGNED = re.compile(rb"self\.(\w++)[ \t]*+=[^=]")
"""``self.x =`` (not ``==``). Possessive: what follows a name is no word character, so giving
characters of it back never finds a match, and at each of a file's many ``self.x`` that is
no assignment, backtracking through ``x`` cost about half the scan."""
_DEFINED = re.compile(rb"def[ \t]+(\w+)")
_IMPORTED = re.compile(rb"import[ \t]+(\([^)]*\)|[^\n#;]*)")
_IMPORTED_NAME = re.compile(rb"([\w.]+)(?:\s+as\s+(\w+))?")
_FILE_READ: list = [(None, (frozenset(), frozenset()), {})]
"""(the file :func:`_read_file` last read, its :func:`_file_names`, what
:func:`_attribute_use` read of each attribute text of it), replaced as one value."""


def _read_file() -> tuple:
    """The file being extracted's entry of :data:`_FILE_READ`, made when it is new."""
    data = CURRENT_SOURCE.data
    read = _FILE_READ[0]
    if read[0] is not data:
        read = _FILE_READ[0] = (data, _file_names(data), {})
    return read


def _file_names(data: bytes | None) -> tuple[frozenset[str], frozenset[str]]:
    """Of a file's source: the attributes ``self.x = ...`` assigns that it defines no
    function ``x`` for (plain instance attributes, no property), and the names its imports
    bind (modules, classes, functions: no instance)."""
    found: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    if data is not None:
        assigned = {m.decode() for m in _SELF_ASSIGNED.findall(data)}
        plain = assigned - {m.decode() for m in _DEFINED.findall(data)} if assigned else ()
        imported = set()
        for clause in _IMPORTED.findall(data):
            for written, alias in _IMPORTED_NAME.findall(clause):
                imported.add((alias or written.split(b".", 1)[0]).decode())
        found = (frozenset(plain), frozenset(imported))
    return found


REFERENCE_PLACES = (
    "argument_list",
    "keyword_argument value",
    "assignment right",
    "return_statement",
    "expression_list",
    "decorator",
    "pair value",
    "list",
    "tuple",
    "default_parameter value",
    "lambda body",
    "except_clause",
)
"""Where a function, method or class is used as a value rather than called: passed as an
argument, assigned, returned, used as a decorator, registered in a dict/list/tuple/set,
given as a default, caught. Captured as ``reference`` (one capture name for all forms)."""
ATTRIBUTE_PARENTS = (
    "ERROR",
    "argument_list",
    "as_pattern",
    "as_pattern_target",
    "assert_statement",
    "assignment",
    "attribute",
    "augmented_assignment",
    "await",
    "binary_operator",
    "boolean_operator",
    "chevron",
    "comparison_operator",
    "conditional_expression",
    "default_parameter",
    "dictionary_splat",
    "dictionary_splat_pattern",
    "elif_clause",
    "except_clause",
    "exec_statement",
    "expression_list",
    "expression_statement",
    "for_in_clause",
    "for_statement",
    "format_expression",
    "generator_expression",
    "if_clause",
    "if_statement",
    "interpolation",
    "keyword_argument",
    "lambda",
    "list",
    "list_comprehension",
    "list_pattern",
    "list_splat",
    "list_splat_pattern",
    "match_statement",
    "named_expression",
    "not_operator",
    "pair",
    "parenthesized_expression",
    "pattern_list",
    "print_statement",
    "raise_statement",
    "return_statement",
    "set",
    "set_comprehension",
    "slice",
    "subscript",
    "tuple",
    "tuple_pattern",
    "type",
    "typed_default_parameter",
    "unary_operator",
    "while_statement",
    "with_item",
    "yield",
)
"""Every node the grammar lets hold an attribute, but a call (whose attribute child is its
function), a decorator and a ``del``: where an attribute may be a property's use."""
_ATTRIBUTE_FIELDS = {
    "assignment": ("right",),
    "augmented_assignment": ("right",),
    "pair": ("key", "value"),
    "keyword_argument": ("value",),
    "default_parameter": ("value",),
    "lambda": ("body",),
}
"""The fields an attribute read fills under these parents (the grammar gives it no other;
an assignment's ``left`` is written, :data:`WRITTEN_PLACES`): named, they let one pattern
capture an attribute that is a value reference too (``x = self.f``) under both names."""
WRITTEN_PLACES = ("assignment left", "augmented_assignment left")
"""Where an attribute is assigned (``x.name = v``, ``x.name += v``): ``attribute_write``."""


def _place_pattern(place: str, body: str) -> str:
    """The pattern of ``body`` as a child of ``place`` (``"kind"`` or ``"kind field"``)."""
    kind, _, field = place.partition(" ")
    return f"({kind} {field}: {body})" if field else f"({kind} {body})"


def _value_patterns() -> str:
    """The query text capturing value references (``reference``, see
    :data:`REFERENCE_PLACES`) and attribute uses: ``attribute`` under each of
    :data:`ATTRIBUTE_PARENTS` but as an assignment's target, ``attribute_write`` there. A
    place holding both captures its attribute under both names with one pattern: each
    pattern is a state the query cursor carries through every child of that place."""
    attribute_places = [
        f"{parent} {field}".rstrip()
        for parent in ATTRIBUTE_PARENTS
        for field in _ATTRIBUTE_FIELDS.get(parent, ("",))
    ]
    patterns = [
        _place_pattern(place, "[(identifier) @reference (attribute) @reference @attribute]")
        if place in attribute_places
        else _place_pattern(place, "[(identifier) (attribute)] @reference")
        for place in REFERENCE_PLACES
    ]
    patterns += [
        _place_pattern(place, "(attribute) @attribute")
        for place in attribute_places
        if place not in REFERENCE_PLACES
    ]
    patterns += [_place_pattern(place, "(attribute) @attribute_write") for place in WRITTEN_PLACES]
    return " ".join(patterns)


VALUE_PATTERN = _value_patterns()
_NOT_DEFINITIONS = frozenset(("self", "cls", "_", "__name__", "__file__"))
_DOTTED = re.compile(r"[A-Za-z_][\w.]*\Z").match


def reference(node: Node) -> tuple[str, str | None] | None:
    """(name, receiver) of a value reference: ``cb`` -> (cb, None), ``self._cb`` -> (_cb, self).

    Attributes of anything but a dotted name (``f().x``, ``a[0].x``) are skipped: nothing
    could resolve their receiver.
    """
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs for every captured value
    full = text(node) if source is None else source[node.start_byte : node.end_byte]
    if node.type == "identifier":
        return None if full in _NOT_DEFINITIONS else (full, None)
    return _attribute_reference(node, full)


def _attribute_reference(node: Node, full: str) -> tuple[str, str] | None:
    """(name, receiver) of an attribute node whose source is ``full``; None unless the
    receiver is a dotted name."""
    if _HAS_GAP(full) is None:
        receiver, name = full.rsplit(".", 1)
    else:
        name = text(node.child_by_field_id(_ATTRIBUTE))
        receiver = text(node.child_by_field_id(_OBJECT))
    return (name, receiver) if _DOTTED(receiver) else None


_INSTANCE_NAMES = frozenset(("self", "cls"))


def kept_references(result):
    """The file's reader of the references a resolver could explain from it: a bare name
    the file defines or imports, an attribute of ``self``/``cls``, of a name it defines or
    imports, or of a capitalised (class) name. A file with a ``*`` import keeps every
    reference :func:`reference` reads.

    Made while the file is extracted (the engine asks for it after its sweep), and reads
    that file's source: (node, name, receiver) of each kept node, in the nodes' order."""
    known = {entity["entity_name"] for entity in result.entities}
    for module, name, alias, kind, _ in result.imports:
        if name == "*":
            return _every_reference
        known.add(alias or (name if kind == "from" else module.split(".", 1)[0]))
    bare = known - _NOT_DEFINITIONS
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs for every captured value

    def read(nodes: list[Node]) -> list[tuple[Node, str, str | None]]:
        kept = []
        for node in nodes:
            full = text(node) if source is None else source[node.start_byte : node.end_byte]
            if "." not in full:  # an identifier (an attribute has its dot): most references
                if full in bare:
                    kept.append((node, full, None))
                continue
            found = _attribute_reference(node, full)
            if found is None:
                continue
            name, receiver = found
            if (
                receiver in _INSTANCE_NAMES
                or receiver.split(".", 1)[0] in known
                or receiver.rsplit(".", 1)[-1][:1].isupper()
            ):
                kept.append((node, name, receiver))
        return kept

    return read


def _every_reference(nodes: list[Node]) -> list[tuple[Node, str, str | None]]:
    """(node, name, receiver) of each node :func:`reference` reads."""
    kept = []
    for node in nodes:
        found = reference(node)
        if found is not None:
            kept.append((node, *found))
    return kept
