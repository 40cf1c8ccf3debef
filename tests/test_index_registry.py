"""Tests for eshu_mcp.query.local.index.parse.registry: every language declared once."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse import registry
from eshu_mcp.query.local.index.parse.extractors import engine_for
from eshu_mcp.query.local.index.parse.languages import is_test_path, language_of
from eshu_mcp.query.local.index.parse.rows import parse_file
from eshu_mcp.query.local.index.store.database import open_reader

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


class DeclarationTests(SynchronousTestCase):
    def test_each_extension_and_file_name_belongs_to_one_language(self) -> None:
        seen: dict[str, str] = {}
        for language in registry.LANGUAGES:
            for claim in language.extensions + language.filenames:
                self.assertNotIn(claim, seen, f"{claim}: {seen.get(claim)} and {language.key}")
                seen[claim] = language.key
        self.assertEqual(
            len({language.key for language in registry.LANGUAGES}), len(registry.LANGUAGES)
        )

    def test_every_parsed_language_has_an_engine_for_its_own_key(self) -> None:
        for key in registry.parsed_keys():
            engine = engine_for(key)
            self.assertIsNotNone(engine, key)
            self.assertEqual(engine.spec.key, key)

    def test_paths_map_to_the_new_languages_and_text_stays_text(self) -> None:
        self.assertEqual(
            [language_of(p) for p in ("a/B.kt", "x.swift", "m.ex", "t.lua", "run.sh", "A.hs")],
            ["kotlin", "swift", "elixir", "lua", "shell", "haskell"],
        )
        self.assertEqual(parse_file("build.groovy", b"def x() {}\n").parse_status, "no_parser")
        self.assertEqual(language_of("Jenkinsfile"), "groovy")

    def test_a_header_is_c_unless_it_shows_a_cpp_construct(self) -> None:
        c_header = b'#ifdef __cplusplus\nextern "C" {\n#endif\nint area(struct shape *s);\n'
        self.assertEqual(parse_file("include/shape.h", c_header).language, "c")
        for cpp in (b"namespace geo { int area(); }\n", b"int f() { return std::abs(1); }\n"):
            self.assertEqual(parse_file("include/shape.h", cpp).language, "cpp")
        self.assertEqual(language_of("include/shape.h"), "cpp")  # by its path alone

    def test_a_script_without_an_extension_is_the_language_its_interpreter_runs(self) -> None:
        script = b"#!/usr/bin/env bash\nset -e\ndeploy() { build; }\ndeploy\n"
        parsed = parse_file("libexec/deploy", script)
        self.assertEqual((parsed.language, parsed.parse_status), ("shell", "parsed"))
        self.assertEqual([e["entity_name"] for e in parsed.entities], ["deploy"])
        self.assertEqual(parse_file("bin/tool", b"#!/usr/bin/python3.11\n").language, "python")
        self.assertIsNone(parse_file("LICENSE", b"MIT License\n").language)

    def test_families_and_flags_are_asked_not_named(self) -> None:
        self.assertEqual(registry.family_of("kotlin"), registry.family_of("java"))
        self.assertNotEqual(registry.family_of("shell"), registry.family_of("python"))
        self.assertIn("c_sharp", registry.keys_with(dispatched=True))
        self.assertEqual(registry.entry("no such language").extractor, None)

    def test_a_language_declared_by_its_own_module_is_a_parsed_language(self) -> None:
        declared = {language.key: language for language in registry.declared_in_modules()}
        self.assertEqual(declared["dart"], registry.entry("dart"))
        self.assertEqual(declared["dart"].extractor, "tags")
        self.assertIn("dart", registry.parsed_keys())
        self.assertEqual(language_of("lib/src/context.dart"), "dart")
        self.assertTrue(is_test_path("test/context_test.dart"))

    def test_each_languages_own_test_files_are_tests(self) -> None:
        for path in (
            "spec/models/cart_spec.rb",
            "t/basic.t",
            "tests/Unit/CartTest.php",
            "src/CartTest.php",
            "Sources/CartTests.swift",
            "lib/cart_test.exs",
            "app/src/androidTest/kotlin/CartTest.kt",
            "src/CartSpec.hs",
            "Cart.Tests/CartTests.cs",
            "src/cart_unittest.cc",
        ):
            self.assertTrue(is_test_path(path), path)
        for path in ("lib/cart.rb", "lib/Cart.pm", "src/Cart.php", "src/contest.kt", "a.t.py"):
            self.assertFalse(is_test_path(path), path)


class LazyGrammarTests(SynchronousTestCase):
    def test_a_python_file_loads_no_other_languages_grammar(self) -> None:
        probe = (
            "import sys\n"
            "from eshu_mcp.query.local.index.parse.rows import parse_file\n"
            "parse_file('a.py', b'def f():\\n    return g()\\n')\n"
            "print(sorted(m for m in sys.modules"
            " if m.startswith('tree_sitter_') and '.' not in m))\n"
        )
        found = subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
        )
        self.assertEqual(found.stdout.strip(), "['tree_sitter_python']")


class ResolutionTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="eshu-registry-"))
        self.addCleanup(shutil.rmtree, self.tmp, True)
        repo = self.tmp / "repo"
        files = {
            "src/com/shop/Cart.kt": (
                "package com.shop\nimport com.shop.util.Money\n"
                "class Cart {\n    fun total(): Int {\n        val m = Money(2)\n"
                "        return m.cents()\n    }\n}\n"
            ),
            "src/com/shop/util/Money.kt": (
                "package com.shop.util\nclass Money(val v: Int) {\n"
                "    fun cents(): Int = v * 100\n}\n"
            ),
            "tools/build.py": "def install():\n    return 1\n",
            "scripts/ci.sh": "run() {\n  install\n}\nrun\n",
            "lua/app.lua": (
                'local util = require("shop.util")\nlocal function main() util.total(1) end\n'
            ),
            "lua/shop/util.lua": "local M = {}\nfunction M.total(x) return x end\nreturn M\n",
        }
        for path, content in files.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(content)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "fixture")
        self.db = self.tmp / "index.sqlite"
        self.assertTrue(index_repositories(self.db, [repo], workers=1).ok)
        self.conn = open_reader(self.db)
        self.addCleanup(self.conn.close)

    def calls(self) -> set[tuple[str, str, str]]:
        return {
            tuple(row)
            for row in self.conn.execute(
                "SELECT s.qualified_name, t.qualified_name, t.relative_path FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }

    def test_a_kotlin_method_call_resolves_through_the_import_and_the_local_type(self) -> None:
        self.assertIn(("Cart.total", "Money.cents", "src/com/shop/util/Money.kt"), self.calls())
        imports = self.conn.execute(
            "SELECT resolved_file_id IS NOT NULL FROM imports WHERE module = 'com.shop.util'"
        ).fetchone()
        self.assertEqual(tuple(imports), (1,))

    def test_a_lua_require_resolves_to_the_file_its_dotted_path_names(self) -> None:
        resolved = self.conn.execute(
            "SELECT f.relative_path FROM imports i JOIN files f ON f.file_id = i.resolved_file_id"
            " WHERE i.module = 'shop.util'"
        ).fetchone()
        self.assertEqual(tuple(resolved), ("lua/shop/util.lua",))

    def test_a_call_on_a_required_lua_module_resolves_to_its_function(self) -> None:
        self.assertIn(("main", "total", "lua/shop/util.lua"), self.calls())

    def test_a_shell_command_never_resolves_to_a_python_function_of_its_name(self) -> None:
        targets = {(source, target) for source, target, _ in self.calls()}
        self.assertNotIn(("run", "install"), targets)
