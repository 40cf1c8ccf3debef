"""
Resolving an import's module to a repository file, per language (local-backend §5.5 tier 2):
Python dotted and relative imports, JS/TS relative specifiers with extension and index
probing, Go import paths through go.mod, Java qualified names, C/C++ includes, Rust
``crate::``/``super::`` paths, Ruby require(_relative), PHP use/require, and the newer
languages' forms; which form a language uses is its registry entry's ``imports``.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable

from eshu_mcp.query.local.index.parse.registry import entry, keys_with
from eshu_mcp.query.local.index.parse.rows import python_module_name

JS_LANGUAGES = keys_with(imports="script")
PYTHON_LANGUAGES = keys_with(imports="python")
JS_PROBES = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".d.ts")
SCRIPT_CONFIGS = frozenset({"tsconfig.json", "jsconfig.json"})
_SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)


class ModuleIndex:
    """Every repository path, indexed for the lookups import resolution needs."""

    def __init__(self, files: Iterable[tuple[int, str, str | None]], go_mods: dict[str, str]):
        self.by_path: dict[str, int] = {}
        self.by_suffix: dict[str, list[int]] = defaultdict(list)
        self.python: dict[str, int] = {}
        self.by_dir: dict[str, list[tuple[str, int]]] = defaultdict(list)
        self._module_names: dict[str, str] = {}  # path -> python_module_name(path)
        for file_id, path, language in files:
            self.by_path[path] = file_id
            parts = path.split("/")
            for start in range(len(parts)):
                self.by_suffix["/".join(parts[start:])].append(file_id)
            self.by_dir[posixpath.dirname(path)].append((path, file_id))
            if language in PYTHON_LANGUAGES:
                self.python[self.module_name(path)] = file_id
        # A module is also importable by a shorter name when the folder above that name is a
        # search-path root (src/pkg/mod.py as pkg.mod, a script's sibling), never when that
        # folder is a package: Python 3 imports are absolute, so `import unittest` inside
        # twisted/trial/ means the standard library's, not twisted/trial/unittest.py.
        packages = {
            posixpath.dirname(path)
            for path in self.by_path
            if posixpath.basename(path) in ("__init__.py", "__init__.pyi")
        }
        self.python_suffix: dict[str, list[int]] = defaultdict(list)
        for name, file_id in self.python.items():
            parts = name.split(".")
            for start in range(1, len(parts)):
                if "/".join(parts[:start]) not in packages:
                    self.python_suffix[".".join(parts[start:])].append(file_id)
        self.go_modules = {module: posixpath.dirname(path) for path, module in go_mods.items()}
        self.script_roots: set[str] | None = None  # folders of a tsconfig/jsconfig, on demand

    def unique_suffix(self, suffix: str) -> int | None:
        """The single file whose path ends with ``suffix`` (whole segments), if exactly one."""
        found = self.by_suffix.get(suffix.strip("/"))
        return found[0] if found is not None and len(found) == 1 else None

    def first_in_dir(self, directory: str, extension: str) -> int | None:
        """The first (by path) non-test file with the extension directly in a directory."""
        candidates = sorted(
            (path, file_id)
            for path, file_id in self.by_dir.get(directory, ())
            if path.endswith(extension) and not path.endswith("_test" + extension)
        )
        return candidates[0][1] if candidates else None

    def resolve(
        self, language: str | None, importer: str, module: str, imported_name: str | None
    ) -> int | None:
        """The file an import resolves to, or None when it is not in the repository."""
        style = entry(language).imports
        if style == "python":
            return self._python(importer, module, imported_name)
        if style == "script":
            return self._js(importer, module)
        if style == "go":
            directory = self.go_package_dir(module)
            return None if directory is None else self.first_in_dir(directory, ".go")
        if style == "qualified":
            return self._qualified(language, module, imported_name)
        if style == "include":
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
            return self.by_path.get(local) or self.unique_suffix(module)
        if style == "rust":
            return self._rust(importer, module, imported_name)
        if style == "require":
            return self._require(language, importer, module)
        if style == "php":
            if "\\" in module or imported_name:
                path = module.replace("\\", "/") + (f"/{imported_name}" if imported_name else "")
                parts = path.split("/")
                for start in range(len(parts) - 1):
                    found = self.unique_suffix("/".join(parts[start:]) + ".php")
                    if found is not None:
                        return found
                return None
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
            return self.by_path.get(local) or self.unique_suffix(module)
        if style == "dotted_path":
            return self._dotted_path(language, module)
        if style == "elixir":
            return self._elixir(module)
        return None

    def _qualified(
        self, language: str | None, module: str, imported_name: str | None
    ) -> int | None:
        """``a.b.C`` (a type in a package) as the file ``a/b/C.<ext>``, or a package's first
        file for ``a.b.*``; for Kotlin and Scala, where a file's name need not be its type's,
        any one file named so."""
        folder = module.replace(".", "/")
        declared = entry(language)
        members = declared.static_imports  # Java: a module path may end in a class
        for extension in declared.extensions:
            if imported_name == "*":
                found = self.first_in_dir(folder, extension)
                if found is None and members:
                    found = self._class_file(folder, extension)
                if found is None:
                    found = self._dir_suffix(folder, extension)
            else:
                found = self.unique_suffix(f"{folder}/{imported_name}{extension}")
                if found is None and members:
                    found = self._class_file(folder, extension)
            if found is not None:
                return found
        return None

    def _class_file(self, folder: str, extension: str) -> int | None:
        """The file of the class a module path names when it ends in a class (capitalised,
        by the JVM convention): ``a/b/C`` of a static import ``a.b.C.m`` or ``a.b.C.*``,
        or of a nested class ``a.b.C.Inner``, is ``a/b/C.<ext>``; None otherwise."""
        for _ in range(2):  # the class, or the class around a nested one
            parent, _, last = folder.rpartition("/")
            if not parent or not last[:1].isupper():
                return None
            found = self.unique_suffix(f"{folder}{extension}")
            if found is not None:
                return found
            folder = parent
        return None

    def _require(self, language: str | None, importer: str, module: str) -> int | None:
        """A path from the importing file's folder, then from any folder (Ruby ``require``,
        shell ``source``), once the registry's :attr:`module_paths` rewrote it; the extension
        may be left out."""
        declared = entry(language)
        for pattern, replacement in declared.module_paths:
            module = re.sub(pattern, replacement, module)
        extensions = declared.extensions
        names = [module] if module.endswith(extensions) else [module + e for e in extensions]
        names.append(module)
        for name in names:
            local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), name))
            found = self.by_path.get(local) or self.unique_suffix(name)
            if found is not None:
                return found
        return None

    def _dotted_path(self, language: str | None, module: str) -> int | None:
        """``A.B`` as the file ``A/B.<ext>`` (Haskell modules, Lua ``require "a.b"``, Perl's
        ``A::B``) or the folder's ``init`` file (Lua)."""
        path = module.replace("::", "/").replace(".", "/")  # Perl's Shop::Cart too
        for extension in entry(language).extensions:
            for name in (path + extension, f"{path}/init{extension}"):
                found = self.unique_suffix(name)
                if found is not None:
                    return found
        return None

    def _elixir(self, module: str) -> int | None:
        """``MyApp.HTTPClient`` as ``my_app/http_client.ex`` (Mix's naming convention)."""
        parts = [_SNAKE.sub("_", part).lower() for part in module.split(".")]
        for start in range(len(parts)):
            for extension in (".ex", ".exs"):
                found = self.unique_suffix("/".join(parts[start:]) + extension)
                if found is not None:
                    return found
        return None

    def _dir_suffix(self, directory: str, extension: str) -> int | None:
        for path in sorted(self.by_dir):
            if path == directory or path.endswith("/" + directory):
                return self.first_in_dir(path, extension)
        return None

    def module_name(self, path: str) -> str:
        """:func:`python_module_name` of a path, made once per path (every import of a
        file asks it of the importer, and of the file imported)."""
        found = self._module_names.get(path)
        if found is None:
            found = self._module_names[path] = python_module_name(path)
        return found

    def _python_lookup(self, dotted: str) -> int | None:
        if dotted in self.python:
            return self.python[dotted]
        found = self.python_suffix.get(dotted)
        return found[0] if found is not None and len(found) == 1 else None

    def _python(self, importer: str, module: str, imported_name: str | None) -> int | None:
        if module.startswith("."):
            level = len(module) - len(module.lstrip("."))
            package = self.module_name(importer).split(".")
            if not importer.endswith("__init__.py"):
                package = package[:-1]
            base = package[: len(package) - (level - 1)] if level > 1 else package
            rest = module.lstrip(".")
            dotted = ".".join([*base, rest] if rest else base)
            if imported_name and imported_name != "*":
                sub = self.python.get(f"{dotted}.{imported_name}" if dotted else imported_name)
                if sub is not None:
                    return sub
            return self.python.get(dotted)
        if imported_name and imported_name != "*":
            sub = self._python_lookup(f"{module}.{imported_name}")
            if sub is not None:
                return sub
        return self._python_lookup(module)

    def _js(self, importer: str, module: str) -> int | None:
        if not module.startswith("."):
            return self._js_project(importer, module)
        return self._js_path(
            posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        )

    def _js_project(self, importer: str, module: str) -> int | None:
        """A bare specifier (``components/icons``, ``@/lib/util``) as a path from the folder of
        the nearest ``tsconfig.json``/``jsconfig.json`` above the importer, or its ``src/``:
        where a ``baseUrl`` (or the usual ``@/*``/``~/*`` paths) points. The config is not
        read, so only a file that exists there is taken; a package name resolves nowhere."""
        if self.script_roots is None:
            self.script_roots = {
                posixpath.dirname(path)
                for path in self.by_path
                if posixpath.basename(path) in SCRIPT_CONFIGS
            }
        if not self.script_roots:
            return None
        for alias in ("@/", "~/"):
            module = module.removeprefix(alias)
        if not module or module.startswith((".", "/", "@")):
            return None
        folder = posixpath.dirname(importer)
        while True:
            if folder in self.script_roots:
                for base in (folder, posixpath.join(folder, "src") if folder else "src"):
                    found = self._js_path(posixpath.join(base, module) if base else module)
                    if found is not None:
                        return found
                return None
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _js_path(self, base: str) -> int | None:
        """The file a specifier's repository path names, with extension and index probing."""
        if base in self.by_path:
            return self.by_path[base]
        stem = base
        for extension in (".js", ".jsx", ".mjs", ".cjs"):
            if base.endswith(extension):
                stem = base[: -len(extension)]
        for probe in JS_PROBES:
            if stem + probe in self.by_path:
                return self.by_path[stem + probe]
        for probe in JS_PROBES:
            index = f"{base}/index{probe}"
            if index in self.by_path:
                return self.by_path[index]
        return None

    def go_package_dir(self, import_path: str) -> str | None:
        """The repository directory of a Go import path, via the go.mod module paths."""
        for module, root in self.go_modules.items():
            if import_path == module or import_path.startswith(module + "/"):
                relative = import_path[len(module) :].strip("/")
                return posixpath.normpath(posixpath.join(root, relative)) if relative else root
        return None

    def _rust(self, importer: str, module: str, imported_name: str | None) -> int | None:
        if module == "self" and imported_name:  # an inline module's use of its file's item
            return self.by_path.get(importer)
        parts = module.split("::")
        if parts[0] in ("crate", "self", "super"):
            here = posixpath.dirname(importer)
            if parts[0] == "crate":
                src = importer.split("/src/", 1)[0] + "/src" if "/src/" in importer else "src"
                src = src if not importer.startswith("src/") else "src"
                base = src
            elif parts[0] == "super":
                base = posixpath.dirname(here)
            else:
                base = here
            rest = [p for p in parts[1:] if p]
            candidates = []
            if imported_name:
                candidates.append("/".join([base, *rest, imported_name]))
            candidates.append("/".join([base, *rest]))
            stem = importer.removesuffix(".rs")
            if parts[0] == "self" and posixpath.basename(stem) not in _RUST_ROOTS:
                candidates.append("/".join([stem, *rest]))  # a.rs's own modules: a/b.rs
            for candidate in candidates:
                for probe in (candidate + ".rs", candidate + "/mod.rs"):
                    normal = posixpath.normpath(probe)
                    if normal in self.by_path:
                        return self.by_path[normal]
        return None


_RUST_ROOTS = frozenset({"lib", "main", "mod"})
"""File stems whose modules are files beside them (a crate root, a ``mod.rs``); any other
file's modules are in the folder of its own name."""


def go_module_paths(rows: Iterable[tuple[str, str]]) -> dict[str, str]:
    """go.mod path -> module path, from (relative_path, content) rows of go.mod files."""
    found = {}
    for path, content in rows:
        match = _GO_MODULE.search(content or "")
        if match:
            found[path] = match.group(1)
    return found
