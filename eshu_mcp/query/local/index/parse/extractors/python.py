"""Python extraction: functions (methods included), classes, calls, imports, bases."""

from __future__ import annotations

import re

import tree_sitter_python
from tree_sitter import Node, Query, QueryCursor

from eshu_mcp.query.local.index.parse.extractors.core import (
    ALIAS,
    CURRENT_SOURCE,
    DOCSTRING_CAP,
    ComplexityTable,
    Definition,
    ImportRow,
    LanguageSpec,
    line_of,
    text,
)
from eshu_mcp.query.local.index.parse.extractors.python_values import (
    _ATTRIBUTE,
    _FIELD,
    _HAS_GAP,
    _LANGUAGE,
    _OBJECT,
    VALUE_PATTERN,
    _possible_uses,
    attribute_read,
    attribute_written,
    kept_references,
    reference,
)
from eshu_mcp.query.local.index.parse.typenames import annotation_type, call_chain, is_dotted

COMPLEXITY = ComplexityTable(
    branches=frozenset(
        [
            "if_statement",
            "elif_clause",
            "for_statement",
            "while_statement",
            "except_clause",
            "case_clause",
            "conditional_expression",
        ]
    ),
    nested=frozenset({"class_definition", "function_definition", "lambda"}),
    boolean_ops={"boolean_operator": frozenset({"and", "or"})},
    catch_all_kinds=frozenset({"case_clause"}),
)

ROOT_DECORATORS = {
    "property": "python.property",
    "staticmethod": "python.staticmethod",
    "classmethod": "python.classmethod",
    "dataclass": "python.dataclass",
    "route": "python.http_route",
    "get": "python.http_route",
    "post": "python.http_route",
    "put": "python.http_route",
    "delete": "python.http_route",
    "patch": "python.http_route",
    "command": "python.cli_command",
    "task": "python.celery_task",
    "fixture": "python.pytest_fixture",
    "overload": "python.overload",
}


_NAME, _BODY, _SUPERCLASSES, _PARAMETERS = (
    _FIELD[f] for f in ("name", "body", "superclasses", "parameters")
)
_FUNCTION, _ARGUMENTS = (_FIELD[f] for f in ("function", "arguments"))
_LEFT, _RIGHT, _TYPE, _VALUE = (_FIELD[f] for f in ("left", "right", "type", "value"))
_ALIAS = _FIELD["alias"]


def _only_kind(name: str) -> int:
    """The number of the grammar's one node kind called ``name`` (a grammar upgrade that
    gave the name a second kind would make comparing numbers miss nodes: refused)."""
    kinds = [k for k in range(_LANGUAGE.node_kind_count) if _LANGUAGE.node_kind_for_id(k) == name]
    if len(kinds) != 1:
        raise RuntimeError(f"the Python grammar has {len(kinds)} node kinds named {name!r}")
    return kinds[0]


_KIND = {
    name: _only_kind(name)
    for name in (
        "attribute",
        "identifier",
        "call",
        "assignment",
        "expression_statement",
        "string",
        "string_content",
        "class_definition",
        "function_definition",
        "return_statement",
        "comment",
        "pass_statement",
        "none",
        "typed_parameter",
        "typed_default_parameter",
    )
}
"""Node kinds compared by number where it runs per node (``Node.type`` builds a ``str``);
each of these names is one kind of the grammar."""
_ATTRIBUTE_KIND, _IDENTIFIER_KIND = _KIND["attribute"], _KIND["identifier"]
_CALL_KIND, _ASSIGNMENT_KIND = _KIND["call"], _KIND["assignment"]
_STATEMENT_KIND, _STRING_KIND, _CONTENT_KIND = (
    _KIND[k] for k in ("expression_statement", "string", "string_content")
)
_CLASS_KIND, _RETURN_KIND, _NONE_KIND = (
    _KIND[k] for k in ("class_definition", "return_statement", "none")
)
_TYPED_PARAMETERS = frozenset(_KIND[k] for k in ("typed_parameter", "typed_default_parameter"))


def _decorators(span: Node) -> list[str]:
    if span.type != "decorated_definition":
        return []
    return [
        text(child).lstrip("@").strip()
        for child in span.named_children
        if child.type == "decorator"
    ]


def _docstring(body: Node | None) -> str | None:
    """The docstring of a body (or a module): its first statement's string."""
    return _read_docstring(body)[0]


def _read_docstring(body: Node | None) -> tuple[str | None, Node | None]:
    """:func:`_docstring`, and the statement it is read from (None without one)."""
    if body is None or not body.named_child_count:
        return None, None
    first = body.named_child(0)
    if first.kind_id != _STATEMENT_KIND or first.named_child_count != 1:
        return None, None
    literal = first.named_child(0)
    if literal.kind_id != _STRING_KIND:
        return None, None
    if literal.named_child_count == 3:  # start, one part, end: the usual docstring
        part = literal.named_child(1)
        content = text(part) if part.kind_id == _CONTENT_KIND else ""
    else:
        content = "".join(
            text(part) for part in literal.named_children if part.kind_id == _CONTENT_KIND
        )
    content = content.strip()[:DOCSTRING_CAP]
    return (content, first) if content else (None, None)


def _args(params: Node | None) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """Parameter names, and the class each annotated parameter is declared to be."""
    if params is None or not params.named_child_count:
        return (), ()
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs for every parameter
    names = []
    typed = []
    for param in params.named_children:
        if param.kind_id == _IDENTIFIER_KIND:  # most parameters: ``self``, ``x``
            names.append(
                text(param) if source is None else source[param.start_byte : param.end_byte]
            )
            continue
        kind = param.kind_id
        name = param.child_by_field_id(_NAME)
        if name is None and param.named_child_count:  # typed_parameter, *args: no name field
            name = param.named_child(0)  # the first identifier child, when it is one
            if name.kind_id != _IDENTIFIER_KIND:
                named = param.named_children
                name = next((c for c in named if c.kind_id == _IDENTIFIER_KIND), None)
        if name is not None:
            names.append(text(name) if source is None else source[name.start_byte : name.end_byte])
            if kind in _TYPED_PARAMETERS:
                declared = annotation_type(text(param.child_by_field_id(_TYPE)))
                if declared is not None:
                    typed.append((names[-1], declared))
    return tuple(names), tuple(typed)


def _implemented(decorators) -> list[str]:
    """The interfaces a zope ``@implementer(IA, mod.IB)`` decorator declares."""
    found: list[str] = []
    for decorator in decorators:
        head, _, rest = decorator.partition("(")
        if head.strip().rsplit(".", 1)[-1] != "implementer" or not rest.endswith(")"):
            continue
        for argument in rest[:-1].split(","):
            written = "".join(argument.split())
            if written and is_dotted(written):
                found.append(written)
    return found


def _base(node: Node) -> str | None:
    """A base class as a dotted name (``protocol.Protocol``; ``Deferred`` for ``Deferred[T]``)."""
    if node.type == "subscript":
        node = node.child_by_field_id(_VALUE)
        if node is None:
            return None
    if node.type not in ("identifier", "attribute"):
        return None
    written = "".join(text(node).split())
    return written if is_dotted(written) else None


def _root_kinds(name: str, decorators: list[str]) -> list[str]:
    kinds = []
    if name.startswith("__") and name.endswith("__"):
        kinds.append("python.dunder_method")
    for decorator in decorators:
        head = decorator.split("(", 1)[0]
        last = head.rsplit(".", 1)[-1]
        if last in ROOT_DECORATORS:
            kinds.append(ROOT_DECORATORS[last])
        if last.endswith("setter") or last.endswith("deleter"):
            kinds.append("python.property")
    return sorted(set(kinds))


def define(node: Node) -> Definition | None:
    """Read a definition node (name, span, args, bases, metadata); None to skip it."""
    name_node = node.child_by_field_id(_NAME)
    if name_node is None:
        return None
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs for every definition
    name = text(name_node) if source is None else source[name_node.start_byte : name_node.end_byte]
    metadata: dict = {}
    data = CURRENT_SOURCE.data
    start = node.start_byte
    decorated = _DECORATED[0]
    # Node.parent walks down from the root: read only for a definition captured as decorated
    if decorated[0] is not data or data is None or start in decorated[1]:
        parent = node.parent
    else:
        parent = None
    if parent is not None and parent.type == "decorated_definition":
        span = parent
        decorators = _decorators(span)
        if decorators:
            metadata["decorators"] = decorators
        roots = _root_kinds(name, decorators)
    else:
        span = node
        roots = ["python.dunder_method"] if name[:2] == "__" and name[-2:] == "__" else None
    if roots:
        metadata["dead_code_root_kinds"] = roots
    body = node.child_by_field_id(_BODY)
    docstring, documented = _read_docstring(body)
    if docstring:
        metadata["docstring"] = docstring
    if node.kind_id == _CLASS_KIND:
        bases = []
        superclasses = node.child_by_field_id(_SUPERCLASSES)
        for base in superclasses.named_children if superclasses is not None else ():
            written = _base(base)
            if written is not None:
                bases.append((written, "extends"))
        bases += [(name, "implements") for name in _implemented(metadata.get("decorators", ()))]
        return Definition(
            "Class", name, name_node, span, body, bases=tuple(bases), metadata=metadata
        )
    if data is not None:  # core.starts_with inlined
        is_async = data.startswith(b"async", start, node.end_byte)
    else:
        is_async = node.text.startswith(b"async")
    if is_async:
        metadata["async"] = True
    if name in _ENTERS and body is not None and _returns_only_self(node, body):
        metadata["returns"] = "Self"  # with X() as x: x is the X
    elif body is not None and not is_async:  # a coroutine's result is no built object
        built = _returns_built(body, metadata.get("decorators", ()), documented)
        if built is not None:
            metadata["returns"] = built  # user = self._loggedInUser(); user.write(...)
    args, typed = _args(node.child_by_field_id(_PARAMETERS))
    return Definition(
        "Function", name, name_node, span, body, args=args, metadata=metadata, locals=typed
    )


_DECORATED: list = [(None, frozenset())]
"""(the source whose captures :func:`captures` last read, the start bytes of its decorated
definitions), replaced as one value."""
DECORATED_PATTERN = "(decorated_definition definition: (_) @decorated)"
"""The definitions a decorator wraps, captured as ``decorated`` (no kind the engine reads)."""


def captures(query: Query, root: Node, source: bytes) -> dict[str, list[Node]]:
    """The file's captures by kind, noting where its decorated definitions start, so that
    :func:`define` reads the parent of those alone, and without the attribute uses whose
    text alone says they are no property's (two in three: never sorted, swept nor read)."""
    captured = QueryCursor(query).captures(root)
    decorated = captured.get("decorated")
    starts = frozenset(node.start_byte for node in decorated) if decorated else frozenset()
    _DECORATED[0] = (source, starts)
    for kind in ("attribute", "attribute_write"):
        nodes = captured.get(kind)
        if nodes:
            captured[kind] = _possible_uses(nodes)
    return captured


_ENTERS = frozenset({"__enter__", "__aenter__"})
_NESTED_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})


def _returns_only_self(node: Node, body: Node) -> bool:
    """Whether a function without a return annotation returns ``self`` at every ``return``
    (and has one): what a context manager's ``__enter__`` usually does."""
    if node.child_by_field_name("return_type") is not None:
        return False
    found = False
    stack = list(body.named_children)
    while stack:
        item = stack.pop()
        if item.type in _NESTED_SCOPES:
            continue
        if item.type == "return_statement":
            value = item.named_child(0) if item.named_child_count == 1 else None
            if value is None or value.type != "identifier" or text(value) != "self":
                return False
            found = True
            continue
        stack.extend(item.named_children)
    return found


def _returns_built(body: Node, decorators: list[str], documented: Node | None) -> str | None:
    """What a function's ``return`` gives when one return gives a value and any other gives
    None: the call ``callee()`` of ``return callee(...)``, or of ``return v`` where a
    statement of the body bound ``v = callee(...)`` and nothing else in the function assigns
    ``v`` (its class is found at resolution: a class built, or what the callee returns; it
    stands in for a return annotation that names no class, like a type variable). None
    otherwise: more values, a generator, a coroutine, a decorator that may wrap the result.
    ``documented`` is the statement :func:`_read_docstring` read in ``body``, if any; the
    caller leaves out a coroutine."""
    data = CURRENT_SOURCE.data
    if data is None or not body.named_child_count:
        return None
    if decorators and any(_WRAPS(d) is None for d in decorators):
        return None
    start = body.start_byte if documented is None else documented.end_byte
    end = body.end_byte
    if data.find(b"return", start, end) < 0:  # most functions: no call of _words
        return None
    count = _words(data, b"return", start, end, _RETURNS_READ)
    if count == 1:
        returns = [body.named_child(body.named_child_count - 1)]
        if returns[0].kind_id != _RETURN_KIND:
            return None
    elif 1 < count <= _RETURNS_READ:
        returns = _return_statements(body)
    else:
        return None
    if data.find(b"yield", start, end) >= 0 and _words(data, b"yield", start, end, 0):
        return None
    values = [r.named_child(0) for r in returns if r.named_child_count == 1]
    values = [v for v in values if v.kind_id != _NONE_KIND]
    if len(values) != 1:
        return None
    value = values[0]
    if value.kind_id == _IDENTIFIER_KIND:
        name = text(value)
        assigned = [
            statement.named_child(0)
            for statement in body.named_children
            if statement.kind_id == _STATEMENT_KIND
            and statement.named_child_count == 1
            and statement.named_child(0).kind_id == _ASSIGNMENT_KIND
            and text(statement.named_child(0).child_by_field_id(_LEFT)) == name
        ]
        if (
            len(assigned) != 1
            or _bindings(data, name.encode(), body.start_byte, body.end_byte) != 1
        ):
            return None
        value = assigned[0].child_by_field_id(_RIGHT)
        if value is None or assigned[0].child_by_field_id(_TYPE) is not None:
            return None
    if value.kind_id != _CALL_KIND:
        return None
    function = value.child_by_field_id(_FUNCTION)
    if function is None or (
        function.kind_id != _IDENTIFIER_KIND and function.kind_id != _ATTRIBUTE_KIND
    ):
        return None
    callee = text(function)
    if is_dotted(callee):
        return callee + "()"
    chain = call_chain(callee + "()")  # return super().build(addr)
    return chain if chain is not None and "[" not in chain else None


_BINDING_TAIL = re.compile(rb"\s*(?::[^=\n]*)?(?:[-+*/%&|^@]|<<|>>|//|\*\*)?=(?!=)")
"""What follows a name bound by an assignment: ``=``, ``: T =``, ``+=``, ``//=``..."""


def _bindings(data: bytes, name: bytes, start: int, end: int) -> int:
    """How many times (up to two) ``data[start:end]`` binds ``name`` (``name =``, ``name: T
    =``, ``name += ``...) where a word boundary precedes it, as the regular expression
    ``\\bname`` + :data:`_BINDING_TAIL` would find them, without compiling one per name."""
    count = 0
    name_is_word = _is_word(name[0])
    position = start
    while count < 2:
        found = data.find(name, position, end)
        if found < 0:
            break
        before = data[found - 1] if found > 0 else None
        bound = before is not None and _is_word(before)
        match = _BINDING_TAIL.match(data, found + len(name), end) if bound != name_is_word else None
        if match is None:
            position = found + 1
        else:
            count += 1
            position = match.end()
    return count


def _is_word(byte: int) -> bool:
    """A byte that ``\\b`` in a bytes pattern counts as part of a word (ASCII only)."""
    return byte == 95 or 48 <= byte <= 57 or 65 <= byte <= 90 or 97 <= byte <= 122


def _words(data: bytes, word: bytes, start: int, end: int, most: int) -> int:
    """How many times (up to ``most`` + 1) ``data[start:end]`` holds ``word`` as a whole
    word, as the regular expression ``\\bword\\b`` searched from ``start`` to ``end`` would
    find it (``end`` counts as the end of the text), several times faster than one.
    ``word`` is made of word characters, so no whole-word occurrence starts inside another
    occurrence (a word character precedes it): the search goes on after each one."""
    count = 0
    size = len(word)
    found = data.find(word, start, end)
    while found >= 0:
        after = found + size
        if (found == 0 or not _is_word(data[found - 1])) and (
            after >= end or not _is_word(data[after])
        ):
            count += 1
            if count > most:
                break
        found = data.find(word, after, end)
    return count


_RETURNS_READ = 6
"""The most ``return`` statements :func:`_returns_built` reads of one function."""
_WRAPS = re.compile(
    r"(?:[\w.]*\.)?(?:property|cached_property|staticmethod|classmethod|override)\Z"
).match
"""Decorators that hand the function's result back as it is."""


def _return_statements(body: Node) -> list[Node]:
    """The ``return`` statements of a function body, outside nested functions and classes."""
    found = []
    stack = list(body.named_children)
    while stack:
        item = stack.pop()
        kind = item.kind_id
        if kind == _RETURN_KIND:
            found.append(item)
        elif kind not in _UNSEARCHED:
            stack.extend(item.named_children)
    return found


_UNSEARCHED = frozenset(
    kind
    for name in (
        "function_definition",
        "class_definition",
        "lambda",
        "expression_statement",
        "string",
        "comment",
        "pass_statement",
    )
    for kind in range(_LANGUAGE.node_kind_count)
    if _LANGUAGE.node_kind_for_id(kind) == name
)
"""Nested scopes, whose ``return`` statements are theirs, and nodes no ``return`` statement
is inside."""


def call(node: Node) -> tuple[str, str, str | None, str, int | None] | None:
    """Read a call node's callee as written; None when it is not a named call.

    Returns a bare tuple of :class:`Call`'s fields: one is built for every call in the file.
    (An attribute read or assigned, not called, is read by :func:`attribute_read` and
    :func:`attribute_written`.)
    """
    function = node.child_by_field_id(_FUNCTION)
    if function is None:
        return None
    kind = function.kind_id
    if kind != _IDENTIFIER_KIND and kind != _ATTRIBUTE_KIND:
        return None
    arguments = node.child_by_field_id(_ARGUMENTS)
    count = arguments.named_child_count if arguments is not None else None
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs once per call in the file
    full = text(function) if source is None else source[function.start_byte : function.end_byte]
    if kind == _IDENTIFIER_KIND:
        return (full, full, None, "constructor_call" if full[:1].isupper() else "call", count)
    known = _CALLEES.get(full)  # self.assertEqual: a file calls the same callees again
    if known is not None:
        return (known[0], full, known[1], known[2], count)
    if _HAS_GAP(full) is None:
        # no space, comment or continuation between object, dot and attribute (the
        # common case): the attribute is the identifier after the last dot
        receiver, name = full.rsplit(".", 1)
        kind = "constructor_call" if name[:1].isupper() else "method_call"
        if len(_CALLEES) >= _CALLEES_KEPT:
            _CALLEES.clear()
        _CALLEES[full] = (name, receiver, kind)
        return (name, full, receiver, kind, count)
    name = text(function.child_by_field_id(_ATTRIBUTE))
    receiver = text(function.child_by_field_id(_OBJECT))
    kind = "constructor_call" if name[:1].isupper() else "method_call"
    return (name, full, receiver, kind, count)


_CALLEES: dict[str, tuple[str, str, str]] = {}
"""(name, receiver, kind) of a method call's callee text without gaps (a function of the
text alone), as :func:`call` read it."""
_CALLEES_KEPT = 8192
"""The most callee texts :data:`_CALLEES` keeps (emptied when full)."""


def import_rows(node: Node) -> list[ImportRow]:
    """The names one import node brings in."""
    line = line_of(node)
    rows = []
    if node.type == "import_statement":
        for item in node.named_children:
            if item.type == "dotted_name":
                rows.append(ImportRow(text(item), None, None, "import", line))
            elif item.type == "aliased_import":
                module = text(item.child_by_field_name("name"))
                alias = text(item.child_by_field_name("alias"))
                rows.append(ImportRow(module, None, alias, "import", line))
        return rows
    module_node = node.child_by_field_name("module_name")
    module = text(module_node)
    for item in node.named_children:
        if item is module_node or item.start_byte < module_node.end_byte:
            continue
        if item.type == "dotted_name":
            rows.append(ImportRow(module, text(item), None, "from", line))
        elif item.type == "aliased_import":
            imported = text(item.child_by_field_name("name"))
            alias = text(item.child_by_field_name("alias"))
            rows.append(ImportRow(module, imported, alias, "from", line))
        elif item.type == "wildcard_import":
            rows.append(ImportRow(module, "*", None, "from", line))
    return rows


def assign(node: Node) -> tuple[str, str] | None:
    """
    A name (or ``self.attr``) bound to a type: ``v = Cls()`` / ``v = f()`` give ``Cls()`` /
    ``f()`` (the callee's class or return type, found at resolution), ``v: Cls = ...`` gives
    ``Cls``.
    """
    if node.kind_id != _ASSIGNMENT_KIND and node.type == "as_pattern":
        return _bound_by_as(node)
    left = node.child_by_field_id(_LEFT)
    if left is None:
        return None
    left_kind = left.kind_id
    if left_kind != _IDENTIFIER_KIND and left_kind != _ATTRIBUTE_KIND:
        return None
    source = CURRENT_SOURCE.ascii  # text() inlined: this runs for every captured assignment
    target = text(left) if source is None else source[left.start_byte : left.end_byte]
    if left_kind == _ATTRIBUTE_KIND and not (target.startswith("self.") and target.count(".") == 1):
        return None
    right = node.child_by_field_id(_RIGHT)
    # ``v = x`` has three children; only ``v: T`` or ``v: T = x`` (or extras) may have a type
    declared = node.child_by_field_id(_TYPE) if right is None or node.child_count > 3 else None
    if declared is not None:
        written = text(declared)
        found = annotation_type(written)
        if found is not None:
            return target, found
        holds = _HOLDS_CLASS(written)
        if holds is not None:  # klass: type[Proto] | None: self.klass() builds a Proto
            return target, f"type[{holds[1]}]"
        if right is None or (
            right.kind_id != _IDENTIFIER_KIND and right.kind_id != _ATTRIBUTE_KIND
        ):
            return None  # x: Any = f(): the annotation says not to narrow
    if right is None:  # or an annotation naming no class (Callable[..., P] = Echo): the value
        return None
    right_kind = right.kind_id
    if right_kind == _CALL_KIND:
        function = right.child_by_field_id(_FUNCTION)
        if function is None:
            return None
        kind = function.kind_id
        if kind != _IDENTIFIER_KIND and kind != _ATTRIBUTE_KIND:
            return None
        callee = (
            text(function) if source is None else source[function.start_byte : function.end_byte]
        )
        if is_dotted(callee):
            return target, callee + "()"
        chain = call_chain(callee + "()")  # v = Factory().build(): what build returns
        if chain is None or "[" in chain or chain.startswith("super("):
            return None
        return target, chain
    if right_kind != _IDENTIFIER_KIND and right_kind != _ATTRIBUTE_KIND:
        return target, ALIAS  # rebound to something untyped
    # an alias: the engine looks the name up
    value = text(right) if source is None else source[right.start_byte : right.end_byte]
    last = value.rsplit(".", 1)[-1]
    if last[:1].isupper() and not last.isupper() and value[:5] != "self." and is_dotted(value):
        return target, f"type[{value}]"  # protocol = Echo: self.protocol() builds an Echo
    if right_kind == _IDENTIFIER_KIND or (value.startswith("self.") and value.count(".") == 1):
        return target, ALIAS + value
    if value.startswith("cls.") and value.count(".") == 1:
        # ``adjust = cls.adjust`` in a classmethod: the class's member, as ``self.`` names it
        return target, ALIAS + "self." + value[4:]
    return target, ALIAS


_HOLDS_CLASS = re.compile(
    r"(?:typing\.)?[Tt]ype\[\s*([A-Za-z_][\w.]*)\s*\](?:\s*\|\s*None)?\Z"
).match
"""An annotation of a name that holds a class (``type[C]``, ``type[C] | None``)."""


def _bound_by_as(node: Node) -> tuple[str, str] | None:
    """``with X(...) as x`` (what ``X().__enter__()`` returns) and ``except E as e``."""
    alias = node.child_by_field_id(_ALIAS)
    name = alias.named_child(0) if alias is not None and alias.named_child_count else None
    value = node.named_child(0)
    if name is None or name.type != "identifier" or value is None:
        return None
    if node.parent is not None and node.parent.type == "except_clause":
        written = text(value)
        return (text(name), written) if is_dotted(written) else (text(name), ALIAS)
    if value.type == "call":
        function = value.child_by_field_id(_FUNCTION)
        callee = text(function) if function is not None else ""
        if is_dotted(callee):
            return text(name), callee + "().__enter__()"
    return text(name), ALIAS


ASSIGNMENT_PATTERN = "(assignment left: [(identifier) (attribute)]) @assignment"
"""Assignments to a name or ``self.attr``: they bind a type, an alias, or forget one."""


SPEC = LanguageSpec(
    key="python",
    load=tree_sitter_python.language,
    definitions=frozenset({"function_definition", "class_definition"}),
    define=define,
    calls=frozenset({"call", "attribute", "attribute_write"}),
    call=call,
    call_readers={"attribute": attribute_read, "attribute_write": attribute_written},
    imports=frozenset({"import_statement", "import_from_statement"}),
    import_rows=import_rows,
    assignments=frozenset({"assignment", "as_pattern"}),
    assign=assign,
    complexity=COMPLEXITY,
    docstring=lambda found: found.metadata.get("docstring"),
    module_docstring=_docstring,
    references=frozenset({"reference"}),
    reference=reference,
    reference_reader=kept_references,
    captures=captures,
    query_patterns={
        "class_definition": f"(class_definition) @class_definition {DECORATED_PATTERN}",
        "assignment": ASSIGNMENT_PATTERN,
        "as_pattern": "(as_pattern alias: (as_pattern_target (identifier))) @as_pattern",
        "reference": VALUE_PATTERN,
        "attribute": "",  # captured by VALUE_PATTERN
        "attribute_write": "",  # and so is this
    },
    instance_prefix="self.",
    attribute_paths=True,
)
