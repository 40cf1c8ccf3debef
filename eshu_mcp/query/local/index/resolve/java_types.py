"""
Receiver types Java declares: a call on a call's result (``a.b().c()``) is typed by the result
type ``b``'s signature states; a member of a type from outside the repository (a JDK
``StringBuilder``'s ``append``, a ``Map.Entry<K, List<V>>``'s ``getValue``) is no repository
class unless a type argument names one (``List<CodeBlock>``'s ``get`` may return one), so a
call on it runs outside. Types are read as :func:`..parse.typenames.generic_type` writes them.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from eshu_mcp.query.local.index.parse.typenames import argument_free_chain, generic_type

if TYPE_CHECKING:
    from eshu_mcp.query.local.index.resolve.bindings import FileBindings
    from eshu_mcp.query.local.index.resolve.calls import Catalog

OUTSIDE = ""
"""The receiver's type is from outside the repository: a call on it runs outside."""
_TYPE_VARIABLE = re.compile(r"[A-Z][A-Z0-9]?\Z")
"""A conventional type variable's name (``T``, ``K``, ``E2``): bound where it is used."""
_OBJECT_RESULTS = frozenset({"toString", "getClass", "hashCode", "equals", "name", "ordinal"})
"""Methods every class (or enum) has from the JDK, whose results are JDK types."""
_NOT_TYPES = frozenset(
    {
        *("public", "protected", "private", "static", "final", "abstract", "synchronized"),
        *("native", "default", "strictfp", "transient", "volatile"),
    }
)
_PRIMITIVES = frozenset(
    {"void", "boolean", "byte", "char", "short", "int", "long", "float", "double"}
)
MAX_STEPS = 12


def strip_arguments(type_name: str | None) -> str | None:
    """``List`` of ``List<CodeBlock>`` (a field chain ``T<X>.f`` -> ``T.f``)."""
    if not type_name or "<" not in type_name:
        return type_name
    return re.sub(r"<[^<>]*>", "", type_name)


def _split(type_text: str) -> tuple[str, tuple[str, ...] | None]:
    """(simple name, type argument names or None when not known) of a stored type."""
    name, bracket, rest = type_text.partition("#")[0].partition("^")[0].partition("<")
    if not bracket:
        return name, ()
    args = tuple(rest.rstrip(">").split(","))
    return name, None if "?" in args else args


@lru_cache(maxsize=8192)
def declared_result(signature: str | None, name: str) -> str | None:
    """The result type a Java method's signature states, as ``generic_type`` writes it;
    ``?`` when it is a type variable (bound where the method is used); None when unknown
    (a constructor, a signature without the name)."""
    if not signature:
        return None
    found = re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", signature)
    if found is None:
        return None
    head = signature[: found.start()].rstrip()
    end = len(head)
    while head[:end].endswith("[]"):
        end -= 2
    if end < len(head):
        return OUTSIDE  # an array: no repository class
    if head.endswith(">"):
        depth, start = 0, end
        for index in range(end - 1, -1, -1):
            depth += (head[index] == ">") - (head[index] == "<")
            if depth == 0:
                start = index
                break
        word = re.search(r"[\w$.]+\s*$", head[:start])
    else:
        word = re.search(r"[\w$.]+$", head)
    if word is None:
        return None
    written = head[word.start() :]
    simple = written.split("<", 1)[0].strip().rsplit(".", 1)[-1]
    if simple in _NOT_TYPES or not simple:
        return None  # a constructor
    if simple in _PRIMITIVES:
        return OUTSIDE
    declared_variables = re.findall(r"[<,]\s*([A-Za-z_$][\w$]*)", head[: word.start()])
    if simple in declared_variables or _TYPE_VARIABLE.match(simple):
        return "?"
    return generic_type(written)


class _Walk:
    """One receiver's chain, step by step, from its first value's type."""

    def __init__(self, catalog: Catalog, bindings: FileBindings, file_id: int) -> None:
        self.catalog = catalog
        self.bindings = bindings
        self.file_id = file_id

    def result(self, owner: str, step: str, static: bool) -> str | None:
        """The type of ``step`` (``f``, ``m()``, ``m(_)``, ``m(->)``) of a value (or with
        ``static``, the class) of the stored type ``owner``; OUTSIDE or None (not known)."""
        name, args = _split(owner)
        call = step.endswith(")")
        member = step.split("(", 1)[0]
        catalog = self.catalog
        if catalog.types.get(name):
            if not call:
                found = catalog.field_type(name, member)
                return found if found is not None else None
            methods = catalog.by_class.get((name, member), [])
            nid = self._class_of(owner, name)
            if nid is not None:  # one of several classes of the name (a nested Builder)
                methods = [m for m in methods if m.parent == nid]
            methods = methods or [catalog.inherited(name, member)]
            if methods[0] is None:
                return OUTSIDE if member in _OBJECT_RESULTS else None
            return self._agreed(methods, member)
        if args is None or any(catalog.types.get(arg) for arg in args):
            return None  # a type argument may be a repository class
        if step.endswith("->)") or (static and step.endswith("_)")):
            return None  # a generic method's result may follow what is passed
        return OUTSIDE

    def _class_of(self, owner: str, name: str) -> int | None:
        """The node of the class a stored type ``owner`` names (``#12``, or ``^Outer``: the
        ``name`` nested in ``Outer``), when it says which; None otherwise."""
        rest, _, nid = owner.partition("#")
        if nid:
            return int(nid)
        outer = rest.partition("^")[2]
        return _nested_in(self.catalog, outer, name) if outer else None

    def _agreed(self, methods: list, member: str) -> str | None:
        """The result type the methods agree on, ``#`` and the class's node number after
        it when several classes have its name (``Builder`` in a method of ``TypeSpec`` is
        ``TypeSpec.Builder``) and the methods' places tell which one."""
        results = {declared_result(m.signature, member) for m in methods}
        if len(results) != 1:
            return None
        result = results.pop()
        if result in (None, "?"):
            return None
        classes = {self._nested(result.split("<", 1)[0], method) for method in methods}
        nid = classes.pop() if len(classes) == 1 else None
        return result if nid is None else f"{result}#{nid}"

    def _nested(self, name: str, method) -> int | None:
        """The node of the class ``name`` means in ``method``, when several classes have
        that name: its own class, one nested in it, the class around it or one nested
        there, or the one class of that name in its file; None when not told apart."""
        catalog = self.catalog
        types = catalog.types.get(name, ())
        if len(types) < 2:
            return None
        owner = catalog.by_id.get(method.parent) if method.parent else None
        around = catalog.by_id.get(owner.parent) if owner is not None and owner.parent else None
        for scope in (owner, around):
            if scope is None:
                continue
            if scope.name == name:
                return scope.nid
            for child in catalog.children.get(scope.nid, ()):
                if child.name == name and child.entity_type != "Function":
                    return child.nid
        local = [t for t in types if t.file_id == method.file_id]
        return local[0].nid if len(local) == 1 else None

    def bare(self, step: str, context: str | None) -> str | None:
        """The type of a bare call ``m()`` in a method of ``context``: its class's (or a
        base's) method's result, or a statically imported method's."""
        member = step.split("(", 1)[0]
        catalog = self.catalog
        if context is not None:
            methods = catalog.by_class.get((context, member)) or [
                catalog.inherited(context, member)
            ]
            if methods[0] is not None:
                return self._agreed(methods, member)
        binding = self.bindings.lookup(self.file_id, member)
        files = binding.file_ids if binding is not None else ()
        files = files or tuple(self.bindings.static_star.get(self.file_id, ()))
        methods = catalog.methods.in_files(member, files)
        return self._agreed(methods, member) if methods else None

    def follow(self, owner: str | None, steps: list[str], static: bool = False) -> str | None:
        """The type the chain of ``steps`` ends at, from a value of the type ``owner``."""
        for step in steps[:MAX_STEPS]:
            if not owner:  # not known, or from outside: what follows is too
                return owner
            owner = self.result(owner, step, static)
            static = False
        return owner if len(steps) <= MAX_STEPS else None


def _root(receiver: str) -> tuple[str | None, str]:
    """(the type ``new T(...)`` builds, the chain after it) or (None, receiver)."""
    if not receiver.startswith("new "):
        return None, receiver
    opening = receiver.find("(")
    if opening < 0:
        return None, receiver
    built = generic_type(receiver[4:opening].strip())
    depth = 0
    for index in range(opening, len(receiver)):
        depth += (receiver[index] == "(") - (receiver[index] == ")")
        if depth == 0:
            rest = receiver[index + 1 :]
            if not rest:
                return built, ""
            return (built, rest[1:]) if rest.startswith(".") else (None, receiver)
    return None, receiver


def receiver_type(
    catalog: Catalog,
    bindings: FileBindings,
    call: tuple,
    inferred: str | None,
    context: str | None,
) -> str | bool | None:
    """
    The type of a Java call's receiver when it is a chain the declarations type
    (``v.get().f``, ``v.f.g``, ``this.f.m()``, ``m().n()``, ``new T().m()``, ``T.m()``, as
    stored: see :func:`receiver_class`), OUTSIDE when that type is from outside the
    repository, None when it cannot be known; False when the receiver is no chain (a name,
    ``this.f``).
    """
    receiver, file_id = call[5], call[1]
    walk = _Walk(catalog, bindings, file_id)
    if inferred is not None:
        depth = 0
        for index, char in enumerate(inferred):  # the local's type, then its chain
            depth += (char == "<") - (char == ">")
            if char == "." and depth == 0:
                return walk.follow(inferred[:index], inferred[index + 1 :].split("."))
        return False
    if "." not in receiver.removeprefix("this.") and "(" not in receiver:
        return False
    built, rest = _root(receiver)
    chain = argument_free_chain(rest) if rest else ""
    if chain is None:
        return None
    steps = chain.split(".") if chain else []
    if built is not None:
        return walk.follow(built, steps)
    head = steps[0]
    if head == "this":
        return walk.follow(context, steps[1:]) if context else None
    if head.endswith(")"):  # m().n(): a method of this class or a static import
        return walk.follow(walk.bare(head, context), steps[1:])
    if head == "super" or not head.isidentifier():
        return None
    field = catalog.field_type(context, head) if context is not None else None
    if field is not None:
        return walk.follow(field, steps[1:])
    if head[:1].isupper() and len(steps) > 1:  # T.m(), T.F.m(): a class's static member
        return walk.follow(head, steps[1:], static=True)
    return None


def receiver_class(
    catalog: Catalog,
    bindings: FileBindings,
    call: tuple,
    inferred: str | None,
    context: str | None,
    member_type,
) -> tuple[str | None, int | None]:
    """
    The simple type name of a Java call's receiver (OUTSIDE: from outside the repository;
    None: not known) and, when several classes have that name, the node number of the one
    it is (a result typed ``Builder`` in a method of ``TypeSpec``; a declared
    ``CodeBlock.Builder``, stored ``Builder^CodeBlock``), or None. ``member_type`` types a
    plain receiver (a name, ``this.f``) as the other languages do.
    """
    found = receiver_type(catalog, bindings, call, inferred, context)
    if found is False:
        found = inferred if inferred is not None else member_type(None)
    if not found:
        return found, None
    name, _, nid = strip_arguments(found).partition("#")
    if nid:
        return name, int(nid)
    name, _, outer = name.partition("^")
    return name, _nested_in(catalog, outer, name) if outer else None


def _nested_in(catalog: Catalog, outer: str, name: str) -> int | None:
    """The node of the class ``name`` nested in a class ``outer``, when several classes
    have the name and exactly one such nested class exists; None otherwise."""
    if len(catalog.types.get(name, ())) < 2:
        return None
    found = [
        child.nid
        for owner in catalog.types.get(outer, ())
        for child in catalog.children.get(owner.nid, ())
        if child.name == name and child.entity_type != "Function"
    ]
    return found[0] if len(found) == 1 else None
