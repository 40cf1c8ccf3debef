"""
Call resolution tiers (local-backend §5.5) over name lookups of one repository's entities:
same_file -> import_binding -> type_inferred -> scope_unique_name -> repo_unique_name, with
unresolved calls explained as builtin, external, ambiguous:<n> or no_definition. Python calls
resolve by receiver type instead (``receivers.py``); this module keeps the catalog they share.
In Go, TypeScript/JavaScript, Java and C# a method call is linked to one definition only
through its receiver's declared or constructed type (or ``this``/``super``, an import); on a
receiver of unknown type it is ambiguous between the methods of that name in the language,
never a pick by file or directory proximity.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable

from attrs import define

from eshu_mcp.query.local.index.parse.extractors.core import ALIAS
from eshu_mcp.query.local.index.parse.registry import LANGUAGES, family_of, keys_with
from eshu_mcp.query.local.index.resolve.bindings import GO_OUTSIDE_DOT_IMPORT, FileBindings
from eshu_mcp.query.local.index.resolve.builtins import is_builtin, runs_outside
from eshu_mcp.query.local.index.resolve.declared_receivers import declared_receiver
from eshu_mcp.query.local.index.resolve.java_types import receiver_class
from eshu_mcp.query.local.index.resolve.typed_receivers import (
    AMBIGUOUS_CAP,
    DISPATCHED,
    RECEIVER_TYPED,
    RESULT_TYPED,
    dispatched,
    library_receiver,
    member_type,
    untyped_method,
)
from eshu_mcp.query.local.index.store.codes import CALL_KINDS

OVERLOADING_LANGUAGES = keys_with(overloading=True)
"""Languages whose methods may share a name and differ by their parameters."""
TYPE_LABELS = frozenset(
    {"Class", "Struct", "Interface", "Trait", "Enum", "Record", "Union", "Module", "TypeAlias"}
)
CALLABLE_TYPES = frozenset({"Class", "Struct", "Record"})
SELF_RECEIVERS = frozenset({"self", "this", "cls", "$this", "static", "Self", "@"})
SUPER_RECEIVERS = frozenset({"super()", "super", "parent", "base"})
CONSTRUCTIONS = frozenset({CALL_KINDS["constructor_call"], CALL_KINDS["new_expression"]})
"""Stored call kinds that construct an instance."""
INHERITANCE_DEPTH = 8
CONSTRUCTOR_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
"""Languages whose ``new C()`` runs the class's method named ``constructor``."""
EXTENDED = {
    language.key: re.compile(language.extension_receiver)
    for language in LANGUAGES
    if language.extension_receiver
}
"""Per language, how a function's signature names the type it extends (see the registry)."""
GUESSED = frozenset({"scope_unique_name", "repo_unique_name"})
"""How a call resolves by its name alone, without an import, a type or a scope to say so."""
IMPLICIT_THIS_LANGUAGES = keys_with(implicit_this=True)
DISPATCHED_LANGUAGES = keys_with(dispatched=True)
"""Implicit-this languages whose bare calls resolve through the class and its bases."""
DECLARED_RECEIVERS = {
    language.key: language.declared_receivers == "strict"
    for language in LANGUAGES
    if language.declared_receivers
}
"""Languages resolving by name whose receivers' declared types decide the method (see the
registry), each to whether every type the repository lacks is outside it."""
STATIC_IMPORTS = keys_with(static_imports=True)
"""Languages whose imports bring a class's static methods in (``import static a.b.C.m``)."""
DECLARED_RESULTS = keys_with(declared_results=True)
"""Languages whose method signatures state a result type, typing calls on call results."""
PACKAGE_QUALIFIED = frozenset(language.key for language in LANGUAGES if language.imports == "go")
"""Languages whose ``pkg.F()`` names an imported package's function, never a method."""


@define
class Entity:
    """What resolution needs of one entity; ``nid`` and ``parent`` are node numbers."""

    nid: int
    file_id: int
    entity_type: str
    name: str
    class_context: str | None
    parent: int | None
    language: str | None
    line: int
    signature: str | None = None  # Python functions with a return annotation; Go/TS functions
    attributes: dict[str, str] | None = None  # classes: field (self.<attr>) -> declared type
    receiver: str | None = None  # Go methods: the receiver's name (``mx`` in ``func (mx *Mux)``)
    arity: int | None = None  # Java, C#, C++ functions: parameters (overloads differ by them)
    variadic: bool = False  # ... and whether the last one takes any number of arguments
    accessor: str | None = None  # Python properties: "get" or "set" (from the decorators)


_ACCESSOR = re.compile(r"@(?:[\w.]*\.)?(?:(cached_property|property|getter)|(setter))\b")
PROPERTY_KINDS = frozenset({"property_read", "property_write"})
"""Call kinds of an attribute read or assigned: a use of a property's getter or setter."""


_JS_ACCESSOR = re.compile(
    r"(?:(?:public|private|protected|static|override|readonly)\s+)*(get|set)\s+[\w$]+\s*\("
)


def accessor_of(signature: str | None, language: str = "python") -> str | None:
    """``get`` for a ``@property`` (or ``@x.getter``, ``@cached_property``), ``set`` for an
    ``@x.setter``, from a Python definition's header, or for a JavaScript/TypeScript
    ``get x()``/``set x(v)``; None for anything else."""
    if not signature:
        return None
    if language != "python":
        found = _JS_ACCESSOR.match(signature)
        return found[1] if found else None
    if signature[:1] != "@":
        return None
    decorators = signature[: signature.find(" def ")] if " def " in signature else signature
    for found in _ACCESSOR.finditer(decorators):
        return "set" if found[2] else "get"
    return None


NOTHING: list[Entity] = []
NO_VIEW: tuple[dict, dict] = ({}, {})


_GO_RECEIVER = re.compile(r"func\s*\(\s*(\w+)\s")


def _go_receiver(signature: str) -> str | None:
    """``mx`` of ``func (mx *Mux) routeHTTP(...)``; None for an unnamed receiver."""
    found = _GO_RECEIVER.match(signature)
    return found[1] if found is not None and found[1] != "_" else None


class Pool:
    """
    Candidates by name, with (file, name) and (directory, name) views built on first use:
    an incremental run asks about a few hundred names, not all of them.
    """

    def __init__(self, dirs: dict[int, str]) -> None:
        self.dirs = dirs
        self.by_name: dict[str, list[Entity]] = defaultdict(list)
        self._views: dict[str, tuple[dict[int, list[Entity]], dict[str | None, list[Entity]]]] = {}

    def add(self, entity: Entity) -> None:
        self.by_name[entity.name].append(entity)
        if self._views:  # none while a catalog is read back
            self._views.pop(entity.name, None)

    def _view(self, name: str) -> tuple[dict[int, list[Entity]], dict[str | None, list[Entity]]]:
        view = self._views.get(name)
        if view is None:
            members = self.by_name.get(name)
            if not members:
                return NO_VIEW
            files: dict[int, list[Entity]] = {}
            dirs: dict[str | None, list[Entity]] = {}
            for entity in members:
                files.setdefault(entity.file_id, []).append(entity)
                dirs.setdefault(self.dirs.get(entity.file_id), []).append(entity)
            view = self._views[name] = (files, dirs)
        return view

    def in_file(self, name: str, file_id: int) -> list[Entity]:
        """The candidates named ``name`` defined in one file."""
        return self._view(name)[0].get(file_id, NOTHING)

    def in_dir(self, name: str, directory: str | None) -> list[Entity]:
        """The candidates named ``name`` defined directly in one directory."""
        return self._view(name)[1].get(directory, NOTHING)

    def in_files(self, name: str, file_ids) -> list[Entity]:
        """The candidates named ``name`` defined in any of the given files."""
        files = self._view(name)[0]
        found: list[Entity] = []
        for file_id in file_ids:
            found.extend(files.get(file_id, ()))
        return found


class IndexedPool(Pool):
    """A pool that indexes (file, name) and (directory, name) as entities are added: dearer
    to fill, cheaper to ask. For a first build, which fills it while files are written and
    then asks about every call."""

    def __init__(self, dirs: dict[int, str]) -> None:
        super().__init__(dirs)
        self.by_file: dict[tuple[int, str], list[Entity]] = defaultdict(list)
        self.by_dir: dict[tuple[str | None, str], list[Entity]] = defaultdict(list)

    def add(self, entity: Entity) -> None:
        self.by_name[entity.name].append(entity)
        self.by_file[(entity.file_id, entity.name)].append(entity)
        self.by_dir[(self.dirs.get(entity.file_id), entity.name)].append(entity)

    def in_file(self, name: str, file_id: int) -> list[Entity]:
        return self.by_file.get((file_id, name), NOTHING)

    def in_dir(self, name: str, directory: str | None) -> list[Entity]:
        return self.by_dir.get((directory, name), NOTHING)

    def in_files(self, name: str, file_ids) -> list[Entity]:
        found: list[Entity] = []
        for file_id in file_ids:
            found.extend(self.by_file.get((file_id, name), ()))
        return found


class Catalog:
    """Name lookups over one repository's entities (added in (file_id, nid) order)."""

    def __init__(
        self,
        rows: list,
        dirs: dict[int, str],
        bases: list[tuple[str, str]] = (),
        *,
        indexed: bool = False,
    ) -> None:
        pool = IndexedPool if indexed else Pool
        self.bases_of: dict[str, list[str]] = defaultdict(list)
        self._below: dict[str, list[str]] | None = None  # base name -> derived type names
        self.by_id: dict[int, Entity] = {}
        self.callables = pool(dirs)  # functions outside types, and constructible types
        self.methods = pool(dirs)  # functions with a class context
        self.constructible = pool(dirs)  # Class / Struct / Record
        self.by_class: dict[tuple[str, str], list[Entity]] = defaultdict(list)
        self.types: dict[str, list[Entity]] = defaultdict(list)
        self.children: dict[int, list[Entity]] = defaultdict(list)
        self.dirs = dirs
        self.accessors: set[str] = set()  # names of Python property getters and setters
        for class_name, base_name in bases:
            self.add_base(class_name, base_name)
        for row in rows:
            self.add(row)

    def add_base(self, class_name: str, base_name: str) -> None:
        """Record that a type named ``class_name`` names ``base_name`` as a base."""
        if base_name != class_name:
            self.bases_of[class_name].append(base_name)
            self._below = None

    def overrides_below(self, class_name: str, name: str, family: str) -> list[Entity]:
        """The methods ``name`` that types deriving from ``class_name`` (by base names,
        breadth first) define in one language family; at most one more than the cap."""
        below = self._below
        if below is None:
            below = self._below = defaultdict(list)
            for child, bases in self.bases_of.items():
                for base in bases:
                    below[base].append(child)
        found: dict[int, Entity] = {}
        seen = {class_name}
        frontier = below.get(class_name, [])
        for _ in range(INHERITANCE_DEPTH):
            following: list[str] = []
            for child in frontier:
                if child in seen:
                    continue
                seen.add(child)
                for method in self.by_class.get((child, name), ()):
                    if RECEIVER_TYPED.get(method.language) == family:
                        found[method.nid] = method
                following.extend(below.get(child, ()))
            if not following or len(found) > AMBIGUOUS_CAP:
                break
            frontier = following
        return list(found.values())

    def add(self, row: tuple) -> None:
        """Add one entity: (nid, file_id, type, name, class_context, parent, language, line,
        signature, attribute types as JSON, parameter count)."""
        size = len(row)
        if size > 9:
            self.add_entity(*row[:10], row[10] if size > 10 else None, size > 10)
        elif size == 9:
            self.add_entity(*row, None, None, False)
        else:
            nid, file_id, entity_type, name, class_context, parent, language, line = row
            self._place(
                Entity(nid, file_id, entity_type, name, class_context, parent, language, line),
                None,
            )

    def add_entity(
        self,
        nid: int,
        file_id: int,
        entity_type: str,
        name: str,
        class_context: str | None,
        parent: int | None,
        language: str | None,
        line: int,
        signature: str | None,
        attributes: str | None,
        arg_count: int | None = None,
        counted: bool = True,
    ) -> None:
        """:meth:`add` of a whole row, its fields given one by one (``counted``: the row
        has a parameter count column)."""
        entity = Entity(nid, file_id, entity_type, name, class_context, parent, language, line)
        if counted and arg_count is not None and language in OVERLOADING_LANGUAGES:
            entity.arity = arg_count
            entity.variadic = bool(signature) and ("..." in signature or "params " in signature)
        python = language == "python"
        if (  # a Python accessor's header starts with its decorators
            class_context
            and signature
            and (signature[0] == "@" if python else language in CONSTRUCTOR_LANGUAGES)
        ):
            entity.accessor = accessor_of(signature, language)
            if entity.accessor is not None:
                self.accessors.add(name)
        if python or language in RECEIVER_TYPED:
            # Python: a return annotation; Go, TypeScript: a function's result (v := F())
            if signature and (
                "->" in signature if python else language in RESULT_TYPED and not class_context
            ):
                entity.signature = signature
            elif class_context and language == "go" and signature:
                entity.receiver = _go_receiver(signature)
            elif signature and language in DECLARED_RESULTS:  # Java: the result before the name
                entity.signature = signature
            if attributes:
                entity.attributes = json.loads(attributes)
        elif language in DECLARED_RECEIVERS:
            if class_context:
                entity.signature = signature  # a method's declared result types a chain's call
            if attributes:
                entity.attributes = json.loads(attributes)  # a type's fields' declared types
        self._place(entity, signature)

    def _place(self, entity: Entity, signature: str | None) -> None:
        """File an entity under its node, parent, name and kind."""
        self.by_id[entity.nid] = entity
        if entity.parent:
            self.children[entity.parent].append(entity)
        entity_type, name = entity.entity_type, entity.name
        if entity_type == "Function":
            class_context = entity.class_context
            if class_context:
                self.methods.add(entity)
                self.by_class[(class_context, name)].append(entity)
            else:
                self.callables.add(entity)
            extends = EXTENDED.get(entity.language) if signature else None
            extended = extends.search(signature) if extends is not None else None
            if extended is not None:  # an extension method: a method of the type it extends
                self.by_class[(extended.group(1), name)].append(entity)
        elif entity_type in TYPE_LABELS:
            self.types[name].append(entity)
            if entity_type in CALLABLE_TYPES:
                self.callables.add(entity)
                self.constructible.add(entity)

    def constructor_of(self, klass: Entity) -> list[Entity]:
        """The ``constructor`` that ``new C()`` runs (JavaScript/TypeScript): the class's own
        or its nearest ancestor's; nothing in other languages."""
        if klass.language not in CONSTRUCTOR_LANGUAGES:
            return []
        own = [
            m for m in self.by_class.get((klass.name, "constructor"), ()) if m.parent == klass.nid
        ]
        if own:
            return own[:1]
        inherited = self.inherited(klass.name, "constructor")
        return [inherited] if inherited is not None and inherited.language == klass.language else []

    def types_in(self, name: str, file_ids: tuple[int, ...]) -> list[Entity]:
        """The types named ``name`` defined in any of the given files."""
        return [e for e in self.types.get(name, ()) if e.file_id in file_ids]

    def inherited(self, class_name: str, name: str) -> Entity | None:
        """The method ``name`` of the nearest ancestor (by base names, breadth first)."""
        seen = {class_name}
        frontier = list(self.bases_of.get(class_name, ()))
        for _ in range(INHERITANCE_DEPTH):
            following: list[str] = []
            for base in frontier:
                if base in seen:
                    continue
                seen.add(base)
                methods = self.by_class.get((base, name))
                if methods:
                    return methods[0]
                following.extend(self.bases_of.get(base, ()))
            if not following:
                return None
            frontier = following
        return None

    def field_type(self, class_name: str, field: str) -> str | None:
        """The declared type of a field of the types named ``class_name`` or their bases
        (Go: embedded structs), when they agree; None when none declares it."""
        seen: set[str] = set()
        frontier = [class_name]
        for _ in range(INHERITANCE_DEPTH):
            found = {
                e.attributes[field]
                for name in frontier
                for e in self.types.get(name, ())
                if e.attributes and field in e.attributes
            }
            if found:
                return found.pop() if len(found) == 1 else None
            seen.update(frontier)
            frontier = [
                base
                for name in frontier
                for base in self.bases_of.get(name, ())
                if base not in seen
            ]
            if not frontier:
                return None
        return None


REEXPORT_HOPS = 4
"""Barrel files followed at most from an import to the definition (JavaScript/TypeScript)."""


def reexported(
    defined: Callable[[str, tuple[int, ...]], list[Entity]],
    bindings: FileBindings,
    name: str,
    file_ids: tuple[int, ...],
    hops: int = REEXPORT_HOPS,
) -> list[Entity]:
    """
    ``defined(name, file_ids)``, or, when these files define no ``name``, the definitions
    of the files they hand it on from: ``export {a as name} from './x'`` and ``export *
    from './y'`` (an ``index.ts`` barrel), at most ``hops`` deep.
    """
    found = defined(name, file_ids)
    if found or hops <= 0:
        return found
    for file_id in file_ids:
        binding = bindings.lookup(file_id, name)
        if binding is not None and binding.file_ids and binding.symbol is not None:
            found = reexported(defined, bindings, binding.symbol, binding.file_ids, hops - 1)
        elif bindings.star.get(file_id):
            star = tuple(bindings.star[file_id])
            found = _exported(reexported(defined, bindings, name, star, hops - 1))
        if found:
            return found
    return []


def _exported(found: list[Entity]) -> list[Entity]:
    """Of the definitions ``export *`` reached in several files, those declared ``export``
    (a TypeScript function's kept signature says so; a file's private helper of the same name
    is not handed on); all of them when none is known to be."""
    if len(found) < 2:
        return found
    return [e for e in found if e.signature and e.signature.startswith("export ")] or found


def _imported_type(catalog: Catalog, bindings: FileBindings, file_id: int, name: str) -> str:
    """The name of the class an imported type name stands for (``new HonoBase()`` of
    ``export {Hono as HonoBase}``: ``Hono``); ``name`` when no import renames one."""
    binding = bindings.lookup(file_id, name)
    if binding is None or not binding.file_ids:
        return name
    found = reexported(catalog.types_in, bindings, binding.symbol or name, binding.file_ids)
    return found[0].name if found else name


def pick(pool: Pool, name: str, file_id: int, extra: list[Entity] | tuple = ()):
    """Scope tiers over a candidate pool: same file, same directory, whole repository."""
    same = pool.in_file(name, file_id)
    if same:
        return same[0], "same_file", None
    local = [e for e in extra if e.file_id == file_id]
    if local:
        return local[0], "same_file", None
    directory = pool.dirs.get(file_id)
    scoped = pool.in_dir(name, directory)
    if extra:
        scoped = scoped + [e for e in extra if pool.dirs.get(e.file_id) == directory]
    if len(scoped) == 1:
        return scoped[0], "scope_unique_name", None
    everywhere = pool.by_name.get(name, [])
    total = len(everywhere) + len(extra)
    if total == 1:
        return (everywhere or list(extra))[0], "repo_unique_name", None
    if total == 0:
        return None, None, "no_definition"
    return None, None, f"ambiguous:{total}"


def fitting(methods: list[Entity], arity: int | None) -> list[Entity]:
    """The overloads a call of ``arity`` arguments can run (all of them when none fits, or
    when parameter counts are not known)."""
    if len(methods) < 2 or arity is None or methods[0].arity is None:
        return methods
    fit = [
        m
        for m in methods
        if m.arity == arity or (m.variadic and m.arity is not None and arity >= m.arity - 1)
    ]
    return fit or methods


def one_of(methods: list[Entity], arity: int | None, how: str) -> tuple:
    """The method a call runs, as ``how``; or, among overloads of the same parameter count
    (which the arguments' types decide), all of them as ambiguous."""
    fit = fitting(methods, arity)
    if len(fit) > 1 and fit[0].arity is not None:
        if len(fit) > AMBIGUOUS_CAP:
            return [fit[0]], "ambiguous", len(fit)
        return fit, "ambiguous"
    return fit[0], how


def resolve_call(call, catalog: Catalog, bindings: FileBindings, language_of: dict):
    """Return (target entity, method) or (None, unresolved reason)."""
    _cid, file_id, caller_id, name, _full, receiver, inferred, kind, arity, _line = call
    if inferred is not None and inferred[:1] == ALIAS:
        if receiver is not None:  # a receiver bound to a function: no type of its own
            inferred = None
            call = (_cid, file_id, caller_id, name, _full, receiver, None, kind, arity, _line)
        else:  # f() of const f = obj.m (or = g): a call of what it is bound to
            receiver, _, name = inferred[1:].rpartition(".")
            receiver, inferred = receiver or None, None
            call = (_cid, file_id, caller_id, name, _full, receiver, None, kind, arity, _line)
    caller = catalog.by_id.get(caller_id) if caller_id else None
    context = caller.class_context if caller is not None else None
    language = language_of.get(file_id)
    implicit_this = bool(context) and language in IMPLICIT_THIS_LANGUAGES
    if receiver is None:
        same = catalog.callables.in_file(name, file_id)
        if not same and implicit_this:
            same = [e for e in catalog.by_class.get((context, name), ()) if e.file_id == file_id]
        if same:
            return one_of(same, arity, "same_file")
        if implicit_this and language in DISPATCHED_LANGUAGES:  # a method of this class's
            own = catalog.by_class.get((context, name)) or [catalog.inherited(context, name)]
            if own[0] is not None:
                return one_of(own, arity, "type_inferred")
    elif receiver in SELF_RECEIVERS and context:
        methods = catalog.by_class.get((context, name), [])
        if methods:
            local = [e for e in methods if e.file_id == file_id]
            return one_of(local or methods, arity, "same_file" if local else "type_inferred")
        inherited = catalog.inherited(context, name)
        if inherited is not None:
            return inherited, "type_inferred"
    elif receiver in SUPER_RECEIVERS and context:
        inherited = catalog.inherited(context, name)
        if inherited is not None:
            return inherited, "type_inferred"
    binding = bindings.lookup(file_id, receiver if receiver is not None else name)
    if binding is not None:
        if not binding.file_ids:
            return None, "external"
        if receiver is None:
            pool = reexported(
                catalog.callables.in_files, bindings, binding.symbol or name, binding.file_ids
            )
        elif binding.symbol is None:
            pool = reexported(catalog.callables.in_files, bindings, name, binding.file_ids)
        else:
            pool = catalog.by_class.get((binding.symbol, name), [])
        if not pool and receiver is None and language in STATIC_IMPORTS:
            pool = catalog.methods.in_files(binding.symbol or name, binding.file_ids)
            if pool:  # ``import static a.b.C.m``: C's method m, by the arguments
                return one_of(pool, arity, "import_binding")
        if pool:
            return pool[0], "import_binding"
        if receiver is not None and inferred is None and language in PACKAGE_QUALIFIED:
            return None, "no_definition"  # the repository's package lacks it: no method's
    elif receiver is not None and language in PACKAGE_QUALIFIED:
        package = bindings.lookup(file_id, receiver.split(".", 1)[0])
        if package is not None and not package.file_ids:  # ``http.DefaultClient.Do()``,
            return None, "external"  # ``time.Now().Unix()``: an outside package's value
    elif receiver is None and bindings.star.get(file_id):
        pool = catalog.callables.in_files(name, bindings.star[file_id])
        if pool:
            return pool[0], "import_binding"
    if receiver is None and language in STATIC_IMPORTS and bindings.static_star.get(file_id):
        pool = catalog.methods.in_files(name, bindings.static_star[file_id])
        if pool:  # ``import static a.b.C.*``
            return one_of(pool, arity, "import_binding")
    family = RECEIVER_TYPED.get(language)
    owner_nid = None
    if family is not None and receiver is not None:
        implicit = language in IMPLICIT_THIS_LANGUAGES
        if language in DECLARED_RESULTS:  # a.b().c(): b's declared result (Java)
            inferred, owner_nid = receiver_class(
                catalog,
                bindings,
                call,
                inferred,
                context,
                lambda typed: member_type(catalog, bindings, call, typed, context, implicit),
            )
        else:
            inferred = member_type(catalog, bindings, call, inferred, context, implicit)
        if inferred == "":
            return None, "external"
        if inferred and not catalog.types.get(inferred):
            inferred = _imported_type(catalog, bindings, file_id, inferred)
    elif inferred is not None and receiver is not None and language in DECLARED_RECEIVERS:
        inferred = declared_receiver(catalog, inferred, context, DECLARED_RECEIVERS[language])
        if inferred == "":
            return None, "external"
    type_name = inferred
    if type_name is None and receiver and receiver[:1].isupper() and receiver.isidentifier():
        type_name = receiver
    if type_name:
        # a value of a declared type may be of a type deriving from it (not in Go)
        dispatch = inferred is not None and family in DISPATCHED and kind not in CONSTRUCTIONS
        methods = catalog.by_class.get((type_name, name), [])
        if owner_nid is not None:
            methods = [m for m in methods if m.parent == owner_nid]
        if methods:
            local = [e for e in methods if e.file_id == file_id]
            found = one_of(local or methods, arity, "type_inferred")
            if dispatch and not isinstance(found[0], list):
                return dispatched(catalog, type_name, name, found[0], family, arity)
            return found
        if family is not None and kind not in CONSTRUCTIONS:
            inherited = catalog.inherited(type_name, name)
            if dispatch and (inherited is not None or catalog.types.get(inferred)):
                found = dispatched(catalog, type_name, name, inherited, family)
                if found[0] is not None:
                    return found
            elif inherited is not None:
                return inherited, "type_inferred"
            if inferred is not None and len(inferred) > 1 and not catalog.types.get(inferred):
                return None, "external"  # a declared type the repository does not define
        elif inferred is not None and language in DECLARED_RECEIVERS:
            inherited = catalog.inherited(type_name, name)  # a base's, or a trait's default
            if inherited is not None:
                return inherited, "type_inferred"
    if family is not None and receiver is not None and kind not in CONSTRUCTIONS:
        if inferred is None and library_receiver(catalog, receiver, family):
            return None, "external"
        return untyped_method(catalog, name, family, language)
    if kind in CONSTRUCTIONS:
        found, method, reason = pick(catalog.constructible, name, file_id)
    elif receiver is None:
        extra = catalog.by_class.get((context, name), ()) if implicit_this else ()
        found, method, reason = pick(catalog.callables, name, file_id, extra)
        if method not in ("same_file", "scope_unique_name") and is_builtin(language, name):
            # a builtin's name that the file neither defines nor imports is the builtin
            # (``fetch()`` in a module, whatever functions named fetch tests define)
            return None, "builtin"
        if (
            method not in ("same_file", "scope_unique_name")
            and language in PACKAGE_QUALIFIED
            and bindings.lookup(file_id, GO_OUTSIDE_DOT_IMPORT) is not None
        ):
            return None, "external"  # ``. "strings"``: not another package's function
    else:
        if runs_outside(language, receiver) and not catalog.types.get(receiver.split(".")[0]):
            return None, "external"  # ``Keyword.get``: the standard library's, not a method
        found, method, reason = pick(catalog.methods, name, file_id)
    if found is not None:
        if method not in GUESSED or family_of(found.language) == family_of(language):
            return found, method
        reason = "no_definition"  # a shell command is no Python function
    if reason == "no_definition":
        if is_builtin(language, name):
            return None, "builtin"
        if runs_outside(language, receiver, name):
            return None, "external"
    return None, reason
