"""
Python call resolution by what the code states: a method call is linked to one definition
only when its receiver's class is known (``self``/``cls``/``super()`` through the resolved
class hierarchy, annotations, ``v = Cls()``, ``v = f()`` with ``f``'s return annotation,
``self.attr`` assigned in the class); class names are resolved through the file's own
definitions and imports, never by a bare name elsewhere. A method call on a receiver of
unknown type is *ambiguous*: it is linked to every method of that name (a short list) or
left unresolved, never to one picked by file or directory proximity.
"""

from __future__ import annotations

from collections import defaultdict

from eshu_mcp.query.local.index.parse.extractors.core import ALIAS
from eshu_mcp.query.local.index.parse.typenames import call_chain, is_dotted, returned_type
from eshu_mcp.query.local.index.resolve.bindings import FileBindings
from eshu_mcp.query.local.index.resolve.builtins import PYTHON_TYPE_METHODS, is_builtin
from eshu_mcp.query.local.index.resolve.calls import Catalog, Entity
from eshu_mcp.query.local.index.resolve.pyclasses import (
    AMBIGUOUS_CAP,
    DISPATCH_CAP,
    EXTERNAL,
    Hierarchy,
)

REEXPORT_HOPS = 4
CALL_DEPTH = 3
INTERFACE_ROOTS = frozenset({"Interface", "Protocol"})
"""Last segments of external bases that make a class a declaration (zope, typing.Protocol)."""
SELF_NAMES = frozenset({"self", "cls"})

SELF_TYPES = frozenset({"Self", "typing_extensions.Self"})
"""Return annotations meaning "an instance of the method's class"."""
CONSTRUCTORS = ("__new__", "__init__", "__post_init__")
"""What calling a class runs of it, in order (``__post_init__``: a dataclass's hook)."""
CALLER_SCOPE = 1
"""A call resolved by its caller's own scopes (it names a definition nested in a function)."""
CLASS_SCOPE = 2
"""A call resolved by its caller's class (``self``, ``super()``, ``self.attr``)."""


def nested_names(by_id: dict[int, Entity], entities) -> dict[int, set[str]]:
    """File id -> the names of ``entities`` defined inside a function (by_id: every entity,
    where their parents are)."""
    nested: dict[int, set[str]] = defaultdict(set)
    for e in entities:
        parent = by_id.get(e.parent) if e.parent else None
        if parent is not None and parent.entity_type == "Function":
            nested[e.file_id].add(e.name)
    return nested


class PythonCalls:
    """Resolves the Python calls of one repository (memoised per process)."""

    def __init__(
        self,
        catalog: Catalog,
        bindings: FileBindings,
        hierarchy: Hierarchy,
        nested: dict[int, set[str]] | None = None,
    ) -> None:
        self.catalog = catalog
        self.bindings = bindings
        self.classes = hierarchy
        self._types: dict[tuple, object] = {}
        self._returns: dict[int, object] = {}
        self._everywhere: dict[object, list[Entity]] = {}
        self._names: dict[tuple[str, int], object] = {}
        self._dotted: dict[tuple[str, int], object] = {}
        self._constructors: dict[int, list[Entity]] = {}
        self._getters: dict[int, dict[str, Entity]] = {}  # class -> its property getters
        # names defined in functions, per file (kept between builds: given, not gathered)
        self.nested = (
            nested_names(catalog.by_id, catalog.by_id.values()) if nested is None else nested
        )

    def scope_rule(self, file_id: int, call_name: str, receiver, inferred) -> int | None:
        """Which part of its caller a call in this file depends on (the same for every
        caller): CALLER_SCOPE (a nested definition's name), CLASS_SCOPE (self, super(),
        self.attr), or None (nothing)."""
        if receiver is None and inferred is not None and inferred[:1] == ALIAS:
            receiver, inferred = inferred[1:].rpartition(".")[0] or None, None
        nested = self.nested.get(file_id)
        if nested and (
            (call_name if receiver is None else _head(receiver)) in nested
            or (inferred is not None and _head(inferred) in nested)
        ):
            return CALLER_SCOPE
        if receiver is None:
            return None
        if (
            receiver in SELF_NAMES
            or receiver.startswith(("self.", "super("))
            or (inferred is not None and inferred.startswith(("self.", "cls.")))
        ):
            return CLASS_SCOPE
        return None

    def scope_of(self, caller: Entity, rule: int | None) -> object:
        """The scope key of a caller under a :meth:`scope_rule`: its node number, its
        class's negated, or None."""
        if rule == CALLER_SCOPE:
            return caller.nid
        if rule == CLASS_SCOPE:
            klass = self.enclosing_class(caller)
            return None if klass is None else -klass.nid
        return None

    # ------------------------------------------------------------------ classes

    # ------------------------------------------------------------------ names

    def enclosing_class(self, entity: Entity | None) -> Entity | None:
        """The class whose ``self`` a function sees (nested functions: their method's)."""
        by_id = self.catalog.by_id
        while entity is not None:
            if entity.entity_type == "Function" and entity.class_context:
                return by_id.get(entity.parent) if entity.parent else None
            entity = by_id.get(entity.parent) if entity.parent else None
        return None

    def _scopes(self, entity: Entity | None) -> list[int | None]:
        """Node numbers of the caller and its enclosing functions, innermost first, then None
        (module level): a class body is no scope for the functions inside it."""
        chain: list[int | None] = []
        by_id = self.catalog.by_id
        while entity is not None:
            if entity.entity_type == "Function":
                chain.append(entity.nid)
            entity = by_id.get(entity.parent) if entity.parent else None
        chain.append(None)
        return chain

    def _in_file(self, candidates: list[Entity], caller: Entity | None) -> Entity | None:
        """The candidate the caller's scopes see first (last definition in a scope wins)."""
        if not candidates:
            return None
        for scope in self._scopes(caller):
            visible = [e for e in candidates if e.parent == scope]
            if visible:
                return max(visible, key=_line)
        return None

    def module_level(self, file_ids, name: str, hops: int = REEXPORT_HOPS):
        """A top-level function or class ``name`` of these files, following re-exports."""
        catalog = self.catalog
        for file_id in file_ids:
            found = [e for e in catalog.callables.in_file(name, file_id) if e.parent is None]
            if found:
                return max(found, key=_line)
        if hops:
            for file_id in file_ids:
                binding = self.bindings.lookup(file_id, name)
                if binding is None:
                    continue
                if not binding.file_ids:
                    return EXTERNAL
                if binding.symbol is not None:
                    return self.module_level(binding.file_ids, binding.symbol, hops - 1)
        return None

    def named(self, name: str, file_id: int, caller: Entity | None):
        """What a bare name means in a file: a definition, EXTERNAL, or None."""
        if name in self.nested.get(file_id, ()):
            return self._named(name, file_id, caller)
        key = (name, file_id)  # no function of the file defines it: the caller cannot matter
        found = self._names.get(key, False)
        if found is False:
            found = self._names[key] = self._named(name, file_id, None)
        return found

    def _named(self, name: str, file_id: int, caller: Entity | None):
        # every Python class is constructible, so callables hold all of them
        found = self._in_file(self.catalog.callables.in_file(name, file_id), caller)
        binding = self.bindings.lookup(file_id, name)
        if found is not None and (found.parent is not None or binding is None):
            return found
        # a module-level definition of an imported name is its fallback (``try: from
        # threading import RLock`` / ``except ImportError: class RLock``): the import wins
        if binding is not None:
            if not binding.file_ids:
                return EXTERNAL
            if binding.symbol is not None:
                imported = self.module_level(binding.file_ids, binding.symbol)
                if imported is not None:
                    return imported
            return found  # a module (None), or an import the index cannot follow
        star = self.bindings.star.get(file_id)
        if star:
            found = self.module_level(star, name, 0)
            if found is not None:
                return found
        if is_builtin("python", name):
            return EXTERNAL
        return None

    def dotted(self, expr: str, file_id: int, caller: Entity | None):
        """What ``a.b.name`` means through the file's imports (module attributes)."""
        if "." not in expr:
            return self.named(expr, file_id, caller)
        nested = self.nested.get(file_id)
        if nested and _head(expr) in nested:
            return self._dotted_name(expr, file_id, caller)
        key = (expr, file_id)  # its head is no nested definition: the caller cannot matter
        found = self._dotted.get(key, False)
        if found is False:
            found = self._dotted[key] = self._dotted_name(expr, file_id, None)
        return found

    def _dotted_name(self, expr: str, file_id: int, caller: Entity | None):
        parts = expr.split(".")
        bound = self.bindings.names.get(file_id) or {}  # lookup's, asked once
        for cut in range(len(parts) - 1, 0, -1):
            binding = bound.get(".".join(parts[:cut])) if bound else None
            if binding is None:
                continue
            if not binding.file_ids:
                return EXTERNAL
            if binding.symbol is None and cut == len(parts) - 1:
                return self.module_level(binding.file_ids, parts[-1])
            return None
        head = self.named(parts[0], file_id, caller)
        if head is EXTERNAL:
            return EXTERNAL
        if isinstance(head, Entity) and head.entity_type != "Function" and len(parts) == 2:
            nested = [e for e in self.catalog.children.get(head.nid, ()) if e.name == parts[1]]
            if nested:
                return max(nested, key=_line)
        return None

    def type_of(self, expr: str, file_id: int, caller: Entity | None, depth: int = 0):
        """The class a type expression (or ``callee()``) denotes; EXTERNAL; or None."""
        klass = None
        if expr.startswith(("self.", "cls.", "super().")):  # also a class's attribute types
            klass = caller if _is_class(caller) else self.enclosing_class(caller)
        if klass is not None:
            key = (expr, file_id, -klass.nid)
        else:
            names = self.nested.get(file_id) if caller is not None else None
            key = (expr, file_id, caller.nid if names and _head(expr) in names else None)
        if key in self._types:
            return self._types[key]
        self._types[key] = None  # recursion through the same expression finds nothing
        if expr.endswith("()"):
            callee = self._callee(expr[:-2], file_id, caller, klass, depth)
            found = self._result_type(callee, depth) if isinstance(callee, Entity) else callee
            if found is EXTERNAL and _is_class(caller):
                found = None  # an attribute a subclass may set: not known to be outside
        elif expr.startswith("self.") and expr.count(".") == 1:  # an attribute's type
            declared = self.attribute_type(caller, expr[5:])
            found = None
            if declared is not None and depth < CALL_DEPTH:
                found = self.type_of(declared[0], declared[1], declared[2], depth + 1)
        else:
            found = self.dotted(expr, file_id, caller) if is_dotted(expr) else None
            if isinstance(found, Entity) and found.entity_type == "Function":
                found = None
        self._types[key] = found
        return found

    def _callee(self, expr: str, file_id, caller, klass, depth):
        if depth >= CALL_DEPTH:
            return None
        receiver, _, name = expr.rpartition(".")
        if not receiver:
            return self.named(name, file_id, caller)
        if receiver in SELF_NAMES:
            return self._member(klass, name, depth) if klass is not None else None
        if receiver == "super()":  # return super().build(): the next class's in the MRO
            return self.classes.lookup(klass.nid, name, True) if klass is not None else None
        found = self.dotted(expr, file_id, caller) if is_dotted(expr) else None
        if found is not None:
            return found
        typed = is_dotted(receiver) or receiver.endswith("()")
        owner = self.type_of(receiver, file_id, caller, depth + 1) if typed else None
        if owner is None and "." not in receiver:
            return None
        if isinstance(owner, Entity):
            found = self._member(owner, name, depth)
            # a library base's method of a repository class (Table().get()): what it
            # returns is not known, not known to be outside
            return None if found is EXTERNAL else found
        return owner

    def _member(self, klass: Entity, name: str, depth: int):
        """What calling ``name`` on an instance of ``klass`` runs: its method, or the class a
        class attribute holds (``protocol = Echo``: ``self.protocol()`` builds an Echo)."""
        if name == "__class__" and klass.entity_type == "Class":
            return klass  # self.__class__(...) builds another of its class
        found = self.classes.lookup(klass.nid, name)
        if not isinstance(found, Entity) and klass.entity_type == "Class":
            declared = self._class_attribute(klass, name)
            if declared is not None and declared[0].startswith("type[") and depth < CALL_DEPTH:
                built = self.type_of(declared[0][5:-1], declared[1], declared[2], depth + 1)
                return built if isinstance(built, Entity) else None
        return found

    def _result_type(self, callee: Entity, depth: int):
        if callee.entity_type != "Function":
            return callee  # constructing a class
        found = self._returns.get(callee.nid, False)
        if found is False:
            found = None
            annotation, built = _returns_of(callee.signature)
            if annotation is not None and annotation not in SELF_TYPES:
                found = self.type_of(annotation, callee.file_id, callee, depth + 1)
                if isinstance(found, Entity) and found.entity_type == "Function":
                    found = None
            if found is None and built is not None:
                # no annotation, or a type variable's: the call its one return gives
                found = self.type_of(built, callee.file_id, callee, depth + 1)
                if not isinstance(found, Entity) or found.entity_type == "Function":
                    found = None  # unknown, not outside: its callers stay candidates
            elif annotation in SELF_TYPES:  # the class defining it (a subclass may inherit it)
                found = self.enclosing_class(callee)
            self._returns[callee.nid] = found
        return found

    # ------------------------------------------------------------------ calls

    def property_use(self, call, caller: Entity | None):
        """An attribute read (``property_read``) or assigned (``property_write``): the
        getter or setter of the property of that name the receiver's class has, resolved as a
        method call on it; (None, reason) when it names no property. On a receiver of unknown
        type it is ambiguous, a plain attribute being one more candidate."""
        wanted = "set" if call[7] == "property_write" else "get"
        found = self.resolve(call, caller)
        target, how = found[0], found[1]
        if target is None:
            return found
        targets = target if isinstance(target, list) else [target]
        kept = [a for a in (self._accessor(e, wanted) for e in targets) if a is not None]
        if not kept:
            return None, "no_definition"
        if how == "repo_unique_name":  # the one property of that name, or a plain attribute
            return kept, "ambiguous", 2
        if how == "ambiguous" or len(kept) > 1:
            return kept, "ambiguous", max(found[2] if len(found) > 2 else 0, len(kept))
        return kept[0], how

    def _accessor(self, method: Entity, wanted: str) -> Entity | None:
        """The getter or setter defined beside ``method`` (the same class and name)."""
        if method.accessor == wanted:
            return method
        if method.accessor is None or method.parent is None:
            return None
        for sibling in self.catalog.children.get(method.parent, ()):
            if sibling.name == method.name and sibling.accessor == wanted:
                return sibling
        return None

    def constructors(self, klass: Entity) -> list[Entity]:
        """The repository's ``__new__``, ``__init__`` and ``__post_init__`` that calling
        ``klass`` runs, each as its MRO finds it (a library base's are not listed)."""
        found = self._constructors.get(klass.nid)
        if found is None:
            found = []
            if klass.entity_type == "Class" and klass.language == "python":
                for name in CONSTRUCTORS:
                    method = self.classes.lookup(klass.nid, name)
                    if isinstance(method, Entity):
                        found.append(method)
            self._constructors[klass.nid] = found
        return found

    def resolve(self, call, caller: Entity | None):
        """(target, method), (candidates, "ambiguous"[, how many could run]) or (None,
        reason). A call through a declared class or interface whose method more classes
        override than are listed is linked to the declared method alone, with the count."""
        _cid, file_id, _caller, name, _full, receiver, inferred, _kind, _args, _at = call
        if receiver is None and inferred is not None and inferred[:1] == ALIAS:
            receiver, _, name = inferred[1:].rpartition(".")  # a local bound to self.name
            if not receiver:
                return None, "no_definition"
            call = (_cid, file_id, _caller, name, inferred[1:], receiver, None, *call[7:])
            inferred = None
        if receiver is None:
            found = self.named(name, file_id, caller)
            if isinstance(found, Entity):
                return found, "same_file" if found.file_id == file_id else "import_binding"
            if found is EXTERNAL:
                return None, "builtin" if is_builtin("python", name) else "external"
            return None, "no_definition"
        if receiver in SELF_NAMES or receiver.startswith("super("):
            klass = self.enclosing_class(caller)
            if klass is not None:
                if receiver.startswith("super("):  # no dispatch: the next class in the MRO
                    return self._method_of(klass, name, skip_own=True)
                return self._method_of(klass, name, hooks=True, dispatch=True)
        where, context = file_id, caller
        if inferred is None:
            inferred = call_chain(receiver)
        if inferred is None and receiver.startswith("self.") and receiver.count(".") == 1:
            inherited = self.attribute_type(caller, receiver[5:])
            if inherited is not None:
                inferred, where, context = inherited
        elif inferred is None and receiver.startswith("self.") and is_dotted(receiver):
            inferred = receiver.replace(".", "|", 2).replace("|", ".", 1)  # self.a|b.c
        if inferred is not None and "|" in inferred:  # attributes of a typed value
            value, _, path = inferred.partition("|")
            owner = self._through_attributes(self.type_of(value, where, context), path)
            if owner is EXTERNAL:
                return None, "external"
            if isinstance(owner, Entity):
                if self.classes.is_declaration(owner.nid):
                    return self._implementations(owner, name)
                return self._method_of(owner, name, hooks=True, dispatch=True)
            inferred = None
        if inferred is not None:
            owner = self.type_of(inferred, where, context)
            if owner is EXTERNAL:
                return None, "external"
            if isinstance(owner, Entity):
                if self.classes.is_declaration(owner.nid):
                    return self._implementations(owner, name)
                # an instance built here has exactly its class; a declared one may be a subclass
                built = inferred.endswith("()") and inferred[:-2].rsplit(".", 1)[-1][:1].isupper()
                # a declared (not built) value may be of a subclass: one that alone has the
                # method (narrowed by isinstance, say) is what runs
                return self._method_of(owner, name, hooks=not built, dispatch=not built)
        if is_dotted(receiver):
            found = self.dotted(f"{receiver}.{name}", file_id, caller)
            if isinstance(found, Entity):
                return found, "same_file" if found.file_id == file_id else "import_binding"
            if found is EXTERNAL:
                return None, "external"
            owner = self.dotted(receiver, file_id, caller)
            if owner is EXTERNAL:
                return None, "external"
            if (
                isinstance(owner, Entity)
                and owner.entity_type != "Function"
                and not self.classes.is_declaration(owner.nid)
            ):
                return self._method_of(owner, name)
        return self.untyped(name)

    def _through_attributes(self, owner, path: str):
        """The class of attribute ``a.b`` (``path``) of an instance of ``owner``, each
        attribute's type as that class or an ancestor declares or assigns it; or None."""
        for attribute in path.split("."):
            if not isinstance(owner, Entity) or owner.entity_type == "Function":
                return owner if owner is EXTERNAL else None
            declared = self._class_attribute(owner, attribute)
            if declared is None:
                return None
            owner = self.type_of(declared[0], declared[1], declared[2], 1)
        return owner

    def attribute_type(self, caller: Entity | None, attribute: str):
        """(type, file, class) of ``self.attribute`` as the caller's class or an ancestor
        declares or assigns it."""
        return self._class_attribute(self.enclosing_class(caller), attribute)

    def _class_attribute(self, klass: Entity | None, attribute: str):
        if klass is None:
            return None
        by_id = self.catalog.by_id
        for nid in self.classes.mro(klass.nid):
            owner = by_id.get(nid)
            if owner is None:
                continue
            declared = owner.attributes.get(attribute) if owner.attributes else None
            if declared is not None:
                return declared, owner.file_id, owner
            getter = self._getter(owner, attribute)
            if getter is not None:  # a property: what its getter's annotation (or return) says
                annotation, built = _returns_of(getter.signature)
                if annotation in SELF_TYPES:  # the class defining it
                    return owner.name, owner.file_id, owner
                typed = annotation or built
                return None if typed is None else (typed, getter.file_id, getter)
        return None

    def _getter(self, owner: Entity, attribute: str) -> Entity | None:
        """The getter of the property ``attribute`` that class ``owner`` defines itself."""
        getters = self._getters.get(owner.nid)
        if getters is None:
            getters = self._getters[owner.nid] = {
                member.name: member
                for member in self.catalog.children.get(owner.nid, ())
                if member.accessor == "get"
            }
        return getters.get(attribute)

    def _method_of(
        self,
        klass: Entity,
        name: str,
        skip_own: bool = False,
        hooks: bool = False,
        dispatch: bool = False,
    ):
        """The method a receiver of class ``klass`` runs. With ``dispatch`` the receiver may be
        an instance of a subclass: when subclasses override the method, the call is ambiguous
        between the MRO's definition and the overrides. With ``hooks``, a method the class
        does not have may be one its subclasses provide."""
        found = self.classes.lookup(klass.nid, name, skip_own)
        if isinstance(found, Entity):
            if dispatch:
                overrides = self.classes.in_subclasses(klass.nid, name)
                if len(overrides) >= DISPATCH_CAP:  # too many to list: the declared one
                    return [found], "ambiguous", len(overrides) + 1
                if overrides:
                    return [found, *overrides], "ambiguous"
            return found, "type_inferred"
        if found is EXTERNAL:
            return None, "external"
        if hooks:
            provided = self.classes.in_subclasses(klass.nid, name)
            if len(provided) == 1:
                return provided[0], "type_inferred"
            if 0 < len(provided) <= AMBIGUOUS_CAP:
                return provided, "ambiguous"
            if provided:
                return None, f"ambiguous:{len(provided)}"
        return None, "no_definition"

    def _implementations(self, interface: Entity, name: str):
        """A call on a receiver declared as an interface: the method in every class that
        implements it (or a sub-interface), and their subclasses."""
        candidates = self.classes.implemented(interface, name)
        if len(candidates) == 1:
            return candidates[0], "type_inferred"
        if 1 < len(candidates) <= AMBIGUOUS_CAP:
            return candidates, "ambiguous"
        if candidates:  # too many to list: the method the interface declares
            declared = self.classes.lookup(interface.nid, name)
            if isinstance(declared, Entity):
                return [declared], "ambiguous", len(candidates)
            return None, f"ambiguous:{len(candidates)}"
        return self.untyped(name)

    def untyped(self, name: str):
        """A method call whose receiver's class is unknown: every method of that name."""
        found = self._everywhere.get(name)
        if found is None:
            found = self._everywhere[name] = self._candidates(name)
        if not found:
            return None, "no_definition"
        if len(found) == 1:
            if name in PYTHON_TYPE_METHODS:  # the builtin type's method is the other candidate
                return None, "ambiguous:2"
            # the one method of that name here, or a library's (``self.buffer.getvalue()`` on
            # an io.BytesIO): a candidate, not a certainty
            return found, "ambiguous"
        if len(found) > AMBIGUOUS_CAP:
            declared = self._declared(name)
            if declared is not None:  # too many to list: the one interface method, counted
                return [declared], "ambiguous", len(found)
            return None, f"ambiguous:{len(found)}"
        return found, "ambiguous"

    def _declared(self, name: str) -> Entity | None:
        """The method ``name`` as the repository's one interface declaring it states it (the
        topmost, when sub-interfaces of it declare it again); None when no interface, or
        unrelated interfaces, declare it."""
        key = ("declared", name)
        if key in self._everywhere:
            found = self._everywhere[key]
            return found[0] if found else None
        by_id = self.catalog.by_id
        declaring: dict[int, Entity] = {}
        for method in self.catalog.methods.by_name.get(name, ()):
            owner = by_id.get(method.parent) if method.parent else None
            python = method.language == "python" and owner is not None
            if python and self.classes.is_declaration(owner.nid):
                declaring[owner.nid] = method
        roots = [
            nid for nid in declaring if not any(a in declaring for a in self.classes.mro(nid)[1:])
        ]
        found = None
        if len(roots) == 1 and all(roots[0] in self.classes.mro(nid) for nid in declaring):
            found = self.classes.members(roots[0]).get(name) or declaring[roots[0]]
        self._everywhere[key] = [found] if found is not None else []
        return found

    def _candidates(self, name: str) -> list[Entity]:
        """Every method named ``name``; when exactly one interface declares the name, only
        the methods of the classes implementing it (the receiver most likely provides it)."""
        by_id = self.catalog.by_id
        found: dict[int, Entity] = {}
        interfaces: dict[int, Entity] = {}
        for method in self.catalog.methods.by_name.get(name, ()):
            if method.language != "python" or method.parent is None:
                continue
            owner = by_id.get(method.parent)
            if owner is None:
                continue
            if self.classes.is_declaration(owner.nid):
                interfaces[owner.nid] = owner
                continue
            winner = self.classes.members(owner.nid).get(name)
            if winner is not None:
                found[winner.nid] = winner
        if len(interfaces) == 1 and len(found) > AMBIGUOUS_CAP:
            (interface,) = interfaces.values()
            implemented = self.classes.implemented(interface, name)
            if 0 < len(implemented) <= AMBIGUOUS_CAP:
                return implemented
        return list(found.values())


def _built(signature: str | None) -> str | None:
    """``callee()`` of a signature the extractor ended with ``-> callee()``: what an
    unannotated function's one ``return`` gives."""
    if not signature or not signature.endswith("()"):
        return None
    _, arrow, tail = signature.rpartition(" -> ")
    return tail if arrow and is_dotted(tail[:-2].replace("()", "")) else None


def _returns_of(signature: str | None) -> tuple[str | None, str | None]:
    """(the return annotation, the ``callee()`` its one return gives) of a signature."""
    built = _built(signature)
    if built is not None:
        signature = signature[: -len(built) - 4]
    return returned_type(signature), built


def _is_class(entity: Entity | None) -> bool:
    return entity is not None and entity.entity_type == "Class"


def _head(expr: str) -> str:
    """The first name of a dotted expression or call chain."""
    if expr.isidentifier():
        return expr
    return expr.split(".", 1)[0].split("(", 1)[0]


def _line(entity: Entity) -> int:
    return entity.line
