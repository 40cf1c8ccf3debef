"""
Static ground truth for scripts/bench_callgraph.py, from Python's own ``ast``.

For every parsable ``.py`` file of a source tree: the definitions (functions with the line
of their ``def`` and of their first decorator, classes), every ``NAME(...)`` /
``x.NAME(...)`` call attributed to its innermost enclosing ``def`` or ``class``, the
file's import bindings, the direct base classes resolved through those imports, and the
identifier tokens of the file (to tell whether a name is referenced anywhere).
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import attr


@attr.s(frozen=True, slots=True)
class Definition:
    path: str = attr.ib()
    line: int = attr.ib()  # the ``def``/``class`` line (the index's start_line)
    first_line: int = attr.ib()  # first decorator's line (a code object's co_firstlineno)
    qualname: str = attr.ib()
    name: str = attr.ib()
    kind: str = attr.ib()  # function | class
    is_generator: bool = attr.ib(default=False)  # calling it runs no code yet
    is_overload: bool = attr.ib(default=False)
    parent: tuple[str, int] | None = attr.ib(default=None)  # enclosing def/class


@attr.s(frozen=True, slots=True)
class CallSite:
    path: str = attr.ib()
    line: int = attr.ib()  # first line of the call expression
    attr_line: int = attr.ib()  # line of ``.NAME`` (where CPython 3.11 reports a method call)
    name: str = attr.ib()
    receiver: str | None = attr.ib()  # dotted ``x`` of ``x.NAME(...)`` ("?" if not a name)
    caller: tuple[str, int] | None = attr.ib()  # (path, line) of the enclosing def/class
    external: bool = attr.ib()  # receiver rooted at a name imported from outside the tree,
    #                             or at a local bound to what outside code returned


@attr.s(slots=True)
class SourceTree:
    """Everything the benchmark needs to know about one tree, by relative path."""

    root: Path = attr.ib()
    definitions: dict[tuple[str, int], Definition] = attr.ib(factory=dict)
    calls: list[CallSite] = attr.ib(factory=list)
    bindings: dict[str, dict[str, tuple]] = attr.ib(factory=dict)  # module -> name -> binding
    class_bases: dict[tuple[str, int], list[str]] = attr.ib(factory=dict)
    module_of: dict[str, str] = attr.ib(factory=dict)  # path -> dotted module
    name_tokens: Counter = attr.ib(factory=Counter)  # identifier uses (not definitions)
    string_tokens: Counter = attr.ib(factory=Counter)  # string literals that are identifiers
    own_tokens: Counter = attr.ib(factory=Counter)  # uses inside a def/class of that name
    unparsable: list[str] = attr.ib(factory=list)
    classes: dict[tuple[str, str], tuple[str, int]] = attr.ib(factory=dict)  # (module, qualname)
    ancestor_memo: dict = attr.ib(factory=dict)

    def calls_named(self, name: str) -> list[CallSite]:
        return [call for call in self.calls if call.name == name]


def module_name(path: str) -> str:
    parts = path[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _absolute(module: str, path: str, level: int, target: str | None) -> str:
    """The absolute module of ``from <level dots><target> import``."""
    if not level:
        return target or ""
    package = module_name(path).split(".")
    if not path.endswith("__init__.py"):
        package = package[:-1]
    base = package[: len(package) - (level - 1)] if level > 1 else package
    return ".".join([*base, target] if target else base)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript):  # Base[T]
        return _dotted(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else None
    return None


def _decorator_names(node) -> list[str]:
    return [(_dotted(d.func if isinstance(d, ast.Call) else d) or "") for d in node.decorator_list]


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class _FileWalker:
    """One pass over a file's tree, keeping the enclosing def/class (a hand-written walk:
    ``ast.NodeVisitor`` dispatch was most of the scan's time)."""

    def __init__(self, tree: SourceTree, path: str, module: str, internal: set[str]) -> None:
        self.tree, self.path, self.module, self.internal = tree, path, module, internal
        self.bindings: dict[str, tuple] = {}
        self.external_roots: set[str] = set()
        self.generators: set[int] = set()  # def lines of functions holding a yield
        # (def line or None) -> local names bound to an outside value: ``f = open(p)``,
        # ``with open(p) as f``, ``s = io.BytesIO()`` (their methods are not the tree's)
        self.outside_locals: dict[int | None, set[str]] = {}
        # (class key, attribute) -> whether each ``self.attribute = ...`` bound an outside value
        self.attribute_values: dict[tuple, list[bool]] = {}

    def walk(self, node, scope: tuple | None) -> None:
        """``scope`` is (qualname, def line, is a function) of the innermost def/class."""
        names, strings = self.tree.name_tokens, self.tree.string_tokens
        own = self.tree.own_tokens
        stack = [(node, scope)]
        while stack:
            node, scope = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                names[node.id] += 1
                if scope is not None and node.id in scope[0].split("."):
                    own[node.id] += 1  # recursion, or a wrapper naming what it wraps
                continue
            if kind is ast.Attribute:
                names[node.attr] += 1
                if scope is not None and node.attr in scope[0].split("."):
                    own[node.attr] += 1
            elif kind is ast.Constant:
                if isinstance(node.value, str) and node.value.isidentifier():
                    strings[node.value] += 1
                continue
            elif kind is ast.Call:
                self._call(node, scope)
            elif kind in _FUNCTIONS or kind is ast.ClassDef:
                inner = self._define(node, scope)
                decorators = node.decorator_list
                body = [c for c in ast.iter_child_nodes(node) if c not in decorators]
                stack.extend((child, inner) for child in reversed(body))
                stack.extend((child, scope) for child in reversed(decorators))
                continue
            elif kind is ast.Yield or kind is ast.YieldFrom:
                if scope is not None and scope[2]:
                    self.generators.add(scope[1])
            elif kind is ast.Assign or kind is ast.AnnAssign:
                self._bind(node, scope)
            elif kind is ast.With or kind is ast.AsyncWith:
                for item in node.items:
                    self._bind_local(item.optional_vars, item.context_expr, scope)
            elif kind is ast.Import:
                self._import(node)
            elif kind is ast.ImportFrom:
                self._import_from(node)
            # pushed in reverse, popped in source order: an import is seen before its uses
            stack.extend((child, scope) for child in reversed(list(ast.iter_child_nodes(node))))

    def _define(self, node, scope) -> tuple:
        qual = f"{scope[0]}.{node.name}" if scope else node.name
        is_function = not isinstance(node, ast.ClassDef)
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        decorators = _decorator_names(node) if is_function else []
        self.tree.definitions[(self.path, node.lineno)] = Definition(
            path=self.path,
            line=node.lineno,
            first_line=first,
            qualname=qual,
            name=node.name,
            kind="function" if is_function else "class",
            is_generator=isinstance(node, ast.AsyncFunctionDef),
            is_overload=any(d.rsplit(".", 1)[-1] == "overload" for d in decorators),
            parent=(self.path, scope[1]) if scope else None,
        )
        if not is_function:
            self.tree.class_bases[(self.path, node.lineno)] = [
                base for base in map(_dotted, node.bases) if base
            ]
            if scope is None:
                self.bindings[node.name] = ("class", self.module, node.name)
        elif scope is None:
            self.bindings.setdefault(node.name, ("function", self.module, node.name))
        return (qual, node.lineno, is_function)

    def _bind(self, node, scope) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            self._bind_local(target, node.value, scope)

    def _bind_local(self, target, value, scope) -> None:
        """Note (or forget) a local name, or ``self.attr``, bound to an outside value."""
        outside = self._outside_value(value)
        if isinstance(target, ast.Attribute) and scope is not None and scope[2]:
            if isinstance(target.value, ast.Name) and target.value.id == "self":
                method = self.tree.definitions[(self.path, scope[1])]
                self.attribute_values.setdefault((method.parent, target.attr), []).append(outside)
            return
        if not isinstance(target, ast.Name):
            return
        found = self.outside_locals.setdefault(scope[1] if scope else None, set())
        if outside:
            found.add(target.id)
        else:
            found.discard(target.id)

    def _outside_value(self, value) -> bool:
        """What outside code returned (``open(p)``, ``io.BytesIO()``) or holds (``sys.stdout``)."""
        if isinstance(value, ast.Call):
            dotted = _dotted(value.func)
            if dotted == "open":
                return "open" not in self.bindings
        elif isinstance(value, ast.Attribute):
            dotted = _dotted(value)
        else:
            return False
        return dotted is not None and dotted.split(".")[0] in self.external_roots

    def finish_calls(self, first: int) -> None:
        """``self.attr.m()`` calls (from index ``first`` on) whose class only ever binds
        ``attr`` to outside values are outside calls."""
        outside = {key for key, values in self.attribute_values.items() if all(values)}
        if not outside:
            return
        calls, definitions = self.tree.calls, self.tree.definitions
        for index in range(first, len(calls)):
            call = calls[index]
            receiver = call.receiver or ""
            if call.external or call.caller is None or not receiver.startswith("self."):
                continue
            method = definitions.get(call.caller)
            attribute = receiver[5:]
            if method is not None and (method.parent, attribute) in outside:
                calls[index] = attr.evolve(call, external=True)

    def _import(self, node) -> None:
        for alias in node.names:
            if alias.asname:
                self.bindings[alias.asname] = ("module", alias.name)
            else:
                root = alias.name.split(".")[0]
                self.bindings.setdefault(root, ("module", root))
            if alias.name.split(".")[0] not in self.internal:
                self.external_roots.add(alias.asname or alias.name.split(".")[0])

    def _import_from(self, node) -> None:
        source = _absolute(self.module, self.path, node.level, node.module)
        for alias in node.names:
            if alias.name != "*":
                self.tree.name_tokens[alias.name] += 1
                self.bindings[alias.asname or alias.name] = ("symbol", source, alias.name)
                if source.split(".")[0] not in self.internal:
                    self.external_roots.add(alias.asname or alias.name)

    def _call(self, node, scope) -> None:
        func = node.func
        if isinstance(func, ast.Name):
            name, receiver = func.id, None
        elif isinstance(func, ast.Attribute):
            name, receiver = func.attr, _dotted(func.value) or "?"
        else:
            return
        root = receiver.split(".")[0] if receiver else name
        self.tree.calls.append(
            CallSite(
                path=self.path,
                line=node.lineno,
                attr_line=func.end_lineno or node.lineno,
                name=name,
                receiver=receiver,
                caller=(self.path, scope[1]) if scope else None,
                external=receiver is not None
                and (
                    root in self.external_roots
                    or root in self.outside_locals.get(scope[1] if scope else None, ())
                ),
            )
        )

    def finish(self) -> None:
        """Mark the functions that hold a ``yield`` (calling one runs none of its body)."""
        for line in self.generators:
            found = self.tree.definitions[(self.path, line)]
            self.tree.definitions[(self.path, line)] = attr.evolve(found, is_generator=True)


def scan_tree(root: Path) -> SourceTree:
    """Parse every ``.py`` file under ``root`` (paths relative to it, forward slashes)."""
    tree = SourceTree(root=root)
    internal = {p.stem for p in root.iterdir() if p.is_dir() or p.suffix == ".py"}
    for file in sorted(root.rglob("*.py")):
        if ".git" in file.parts:
            continue
        path = file.relative_to(root).as_posix()
        source = file.read_text(encoding="utf-8", errors="replace")
        try:
            parsed = ast.parse(source, filename=path)
        except (SyntaxError, ValueError):
            tree.unparsable.append(path)
            continue
        module = module_name(path)
        tree.module_of[path] = module
        walker = _FileWalker(tree, path, module, internal)
        first = len(tree.calls)
        walker.walk(parsed, None)
        walker.finish()
        walker.finish_calls(first)
        tree.bindings[module] = walker.bindings
    for key, definition in tree.definitions.items():
        if definition.kind == "class":
            tree.classes[(tree.module_of[definition.path], definition.qualname)] = key
    return tree


def resolve_symbol(tree: SourceTree, module: str, name: str, depth: int = 0) -> tuple | None:
    """Follow re-exports: the (module, name) where ``module.name`` is defined as a class."""
    binding = tree.bindings.get(module, {}).get(name)
    if binding is None or depth > 8:
        return None
    if binding[0] == "class":
        return (binding[1], binding[2])
    if binding[0] == "symbol":
        source, symbol = binding[1], binding[2]
        if f"{source}.{symbol}" in tree.bindings:
            return ("module", f"{source}.{symbol}")
        return resolve_symbol(tree, source, symbol, depth + 1)
    if binding[0] == "module":
        return ("module", binding[1])
    return None


def resolve_dotted(tree: SourceTree, module: str, dotted: str) -> tuple | None:
    """Resolve ``a.b.C`` as written in ``module`` to the (module, class name) it names."""
    parts = dotted.split(".")
    found = resolve_symbol(tree, module, parts[0])
    for part in parts[1:]:
        if found is None or found[0] != "module":
            return None
        if f"{found[1]}.{part}" in tree.bindings:
            found = ("module", f"{found[1]}.{part}")
        else:
            found = resolve_symbol(tree, found[1], part)
    if found is None or found[0] == "module":
        return None
    return found


def direct_subclasses(tree: SourceTree, module: str, name: str) -> set[tuple[str, int]]:
    """Classes (path, line) with a base that resolves to ``module.name``."""
    children = set()
    for key, bases in tree.class_bases.items():
        own = tree.module_of[key[0]]
        for base in bases:
            if resolve_dotted(tree, own, base) == (module, name):
                children.add(key)
    return children


def references(tree: SourceTree, name: str) -> int:
    """
    Uses of ``name`` anywhere in the tree outside definitions (tokens and string literals),
    less those inside a definition of that very name: a recursive call, or a wrapper's
    ``self._port.getCD()``, does not make ``getCD`` used.
    """
    return tree.name_tokens[name] - tree.own_tokens[name] + tree.string_tokens[name]


def ancestors(tree: SourceTree, key: tuple[str, int]) -> set[tuple[str, int]]:
    """Every class (path, line) the class at ``key`` inherits from, through imports."""
    memo = tree.ancestor_memo
    if key in memo:
        return memo[key]
    memo[key] = set()  # a cycle ends here
    found: set[tuple[str, int]] = set()
    module = tree.module_of.get(key[0])
    for base in tree.class_bases.get(key, ()):
        resolved = resolve_dotted(tree, module, base)
        base_key = tree.classes.get(resolved) if resolved else None
        if base_key is not None:
            found |= {base_key} | ancestors(tree, base_key)
    memo[key] = found
    return found
