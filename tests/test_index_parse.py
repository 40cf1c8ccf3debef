"""
Tests for eshu_mcp.query.local.index.parse.rows and its extractors: per-language entities, calls,
imports, bases and complexity, plus the ``ast`` cross-check over this project's sources.

Counting rule (both sides): every ``def``/``async def`` is one Function (methods and nested
functions included), every ``class`` is one Class (nested included); lambdas are not counted.
"""

import ast
import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse.rows import parse_file, python_module_name
from eshu_mcp.query.local.index.store.database import open_reader

PACKAGE = Path(__file__).resolve().parent.parent / "eshu_mcp"
CALLED = frozenset({"call", "method_call", "constructor_call"})
"""Call kinds of calls (not attribute uses, which may be a property's)."""


def names(parsed, entity_type: str) -> list[str]:
    return [e["entity_name"] for e in parsed.entities if e["entity_type"] == entity_type]


class LanguageExtractionTests(SynchronousTestCase):
    def test_python_methods_nested_functions_and_calls(self) -> None:
        parsed = parse_file(
            "pkg/mod.py",
            b"import os\nfrom .sib import a as b\n\nclass A(Base):\n"
            b"    def m(self, x):\n        def inner():\n            pass\n"
            b"        return self.n(os.getcwd())\n",
        )
        self.assertEqual(names(parsed, "Function"), ["m", "inner"])
        method = parsed.entities[1]
        self.assertEqual((method["class_context"], method["arg_count"]), ("A", 2))
        self.assertEqual(parsed.entities[2]["metadata"]["enclosing_function"], "m")
        self.assertEqual([c[2] for c in parsed.calls], ["self.n", "os.getcwd"])
        self.assertEqual([i[:3] for i in parsed.imports], [("os", None, None), (".sib", "a", "b")])
        self.assertEqual(parsed.bases, [(0, "Base", "extends")])

    def test_go_receiver_methods_structs_and_imports(self) -> None:
        parsed = parse_file(
            "s/s.go",
            b'package s\n\nimport u "example.com/u"\n\ntype S struct{ Base }\n\n'
            b"func (s *S) Run() { u.Do() }\n",
        )
        self.assertEqual(names(parsed, "Struct"), ["S"])
        run = parsed.entities[1]
        self.assertEqual((run["entity_name"], run["class_context"]), ("Run", "S"))
        self.assertEqual(parsed.imports[0][:3], ("example.com/u", None, "u"))
        self.assertEqual(parsed.bases, [(0, "Base", "embeds")])

    def test_typescript_classes_interfaces_and_arrow_functions(self) -> None:
        parsed = parse_file(
            "w/a.ts",
            b"import { x as y } from './b';\nexport interface I { f(): void }\n"
            b"export class C extends B implements I { f() { y(); } }\n"
            b"export const g = (a: number) => new C();\n",
        )
        self.assertEqual(names(parsed, "Interface"), ["I"])
        self.assertEqual(names(parsed, "Class"), ["C"])
        self.assertEqual(names(parsed, "Function"), ["f", "g"])
        self.assertEqual(parsed.imports, [("./b", "x", "y", "import", 1)])
        self.assertEqual([c[5] for c in parsed.calls], ["call", "new_expression"])

    def test_typescript_negated_generic_call_is_a_call_of_its_function(self) -> None:
        # the grammar reads ``!isRule<T>(v)`` as a call of ``!isRule`` with type arguments
        parsed = parse_file(
            "w/r.ts",
            b"function a<T>(v: T, o: O) {\n  if (!isRule<T>(v)) { return; }\n"
            b"  return !o.check<string>(v, 1);\n}\n",
        )
        called = [(c[1], c[2], c[3], c[5]) for c in parsed.calls if c[5] in CALLED]
        self.assertEqual(
            called, [("isRule", "isRule", None, "call"), ("check", "o.check", "o", "method_call")]
        )

    def test_javascript_require_and_tsx_components(self) -> None:
        js = parse_file(
            "a.js", b"const fs = require('fs');\nfunction go() { fs.readFileSync(); }\n"
        )
        self.assertEqual(js.imports[0][:4], ("fs", None, "fs", "require"))
        tsx = parse_file("c.tsx", b"export function App() { return <div>{go()}</div>; }\n")
        self.assertEqual((tsx.language, names(tsx, "Function")), ("tsx", ["App"]))

    def test_java_constructors_overrides_and_complexity(self) -> None:
        parsed = parse_file(
            "A.java",
            b"import java.util.List;\nclass A extends B implements I {\n"
            b"  A() {}\n  @Override public int f(int x) { if (x > 0 && x < 9) return 1;"
            b" return x > 5 ? 2 : 3; }\n}\n",
        )
        f = next(e for e in parsed.entities if e["entity_name"] == "f")
        self.assertEqual(f["cyclomatic_complexity"], 4)
        self.assertIn("java.override", f["metadata"]["dead_code_root_kinds"])
        self.assertEqual(parsed.bases, [(0, "B", "extends"), (0, "I", "implements")])
        self.assertEqual(parsed.imports[0][:2], ("java.util", "List"))

    def test_c_and_cpp_functions_classes_and_includes(self) -> None:
        c = parse_file("m.c", b'#include "u.h"\nstatic int f(int a) { return g(a); }\n')
        self.assertEqual((names(c, "Function"), c.imports[0][0]), (["f"], "u.h"))
        cpp = parse_file("s.hpp", b"class S : public T { int f() { return 0; } };\n")
        self.assertEqual((cpp.language, names(cpp, "Class")), ("cpp", ["S"]))
        self.assertEqual(cpp.entities[1]["class_context"], "S")

    def test_go_cpp_and_rust_member_calls_keep_receiver_and_argument_count(self) -> None:
        sources = {
            "a.go": b"package a\nfunc f() { s.Run(1, 2); g() }\n",
            "a.cpp": b"void f() { s.Run(1, 2); g(); }\n",
            "a.rs": b"fn f() { s.Run(1, 2); g(); }\n",
        }
        for path, source in sources.items():
            calls = [c[1:7] for c in parse_file(path, source).calls]
            self.assertEqual(
                calls,
                [
                    ("Run", "s.Run", "s", None, "method_call", 2),
                    ("g", "g", None, None, "call", 0),
                ],
                path,
            )

    def test_csharp_rust_ruby_php(self) -> None:
        cs = parse_file("a.cs", b"using System;\nclass A : IFoo { void M() { N(); } }\n")
        self.assertEqual(cs.bases, [(0, "IFoo", "implements")])
        rs = parse_file(
            "l.rs", b"use crate::u::h;\nstruct S;\nimpl T for S { fn f(&self) { h(); } }\n"
        )
        self.assertEqual(names(rs, "ImplBlock"), ["S"])
        self.assertEqual(rs.imports[0][:2], ("crate::u", "h"))
        rb = parse_file("g.rb", b"class G < B\n  include M\n  def hi; end\nend\n")
        self.assertEqual(rb.bases, [(0, "B", "extends"), (0, "M", "includes")])
        php = parse_file("U.php", b"<?php\nclass U extends M { function f() { $this->g(); } }\n")
        self.assertEqual([c[2] for c in php.calls], ["$this->g"])

    def test_python_member_calls_read_the_same_with_spaces_comments_and_non_ascii(self) -> None:
        """The fast text split and the node reads agree on receiver, name and full callee."""
        parsed = parse_file(
            "p.py",
            "def f():\n    a.b.c(1)\n    x . y()\n    f(z  # note\n      .w(2, 3))\n"
            "    q.\\\n  r()\n    (1).real()\n    caf\u00e9.na\u00efve()\n    g()()\n".encode(),
        )
        self.assertEqual(
            [(*c[1:4], c[6], c[7]) for c in parsed.calls if c[5] in CALLED],
            [
                ("c", "a.b.c", "a.b", 1, 2),
                ("y", "x . y", "x", 0, 3),
                ("f", "f", None, 1, 4),
                ("w", "z  # note\n      .w", "z", 2, 4),
                ("r", "q.\\\n  r", "q", 0, 6),
                ("real", "(1).real", "(1)", 0, 8),
                ("na\u00efve", "caf\u00e9.na\u00efve", "caf\u00e9", 0, 9),
                ("g", "g", None, 0, 10),
            ],
        )

    def test_python_locals_keep_the_callee_or_annotation_that_types_them(self) -> None:
        # a call result is typed later by what the callee turns out to be (a class, or a
        # function's return annotation); an annotation states the class directly
        parsed = parse_file(
            "p.py",
            b"def f(p: Optional[mod.Thing[int]], q: 'Other | None', r: Union[A, B]):\n"
            b"    a = Widget()\n    b = make()\n    c: T = m.Part()\n"
            b"    a.go()\n    b.go()\n    c.go()\n    p.go()\n    q.go()\n    r.go()\n",
        )
        inferred = {c[3]: c[4] for c in parsed.calls if c[1] == "go"}
        self.assertEqual(
            inferred,
            {"a": "Widget()", "b": "make()", "c": "T", "p": "mod.Thing", "q": "Other", "r": None},
        )

    def test_python_instance_attributes_type_calls_in_every_method(self) -> None:
        parsed = parse_file(
            "p.py",
            b"class C:\n    cache: Store\n    def use(self):\n        self.d.fire()\n"
            b"        def later():\n            self.cache.get()\n"
            b"    def __init__(self):\n        self.d = defer.Deferred()\n",
        )
        inferred = {c[2]: c[4] for c in parsed.calls if c[3] and c[5] in CALLED}
        self.assertEqual(
            inferred,
            {"self.d.fire": "defer.Deferred()", "self.cache.get": "Store", "defer.Deferred": None},
        )

    def test_python_aliases_carry_a_type_and_rebinding_forgets_it(self) -> None:
        parsed = parse_file(
            "p.py",
            b"class T:\n    def setUp(self):\n        self.proto = Echo()\n"
            b"    def test(self, r: IR):\n        p = self.proto\n        p.feed()\n"
            b"        q = r\n        q.tick()\n        q = 3\n        q.bit_length()\n",
        )
        inferred = {c[2]: c[4] for c in parsed.calls if c[3] and c[5] in CALLED}
        self.assertEqual(inferred, {"p.feed": "Echo()", "q.tick": "IR", "q.bit_length": None})

    def test_python_attribute_reads_and_assignments_are_possible_property_uses(self) -> None:
        parsed = parse_file(
            "p.py",
            b"import os\nclass C:\n    def __init__(self):\n        self.plain = 1\n"
            b"    def use(self, other):\n        other.size = self.plain + other.size\n"
            b"        self.run(os.sep, C.LIMIT, C.kind, other.__dict__)\n",
        )
        uses = sorted((c[1], c[3], c[5]) for c in parsed.calls if c[5].startswith("property"))
        # not the file's plain self.plain, a module's or class's attribute, a dunder, a call
        self.assertEqual(
            uses, [("size", "other", "property_read"), ("size", "other", "property_write")]
        )

    def test_python_called_attributes_are_no_property_uses_but_what_they_are_read_on_are(
        self,
    ) -> None:
        parsed = parse_file(
            "p.py",
            b"def use(other):\n    other.conn.send(other.conn.peer)\n"
            b"    other.factory().size\n    (other.box).open()\n",
        )
        uses = sorted((c[1], c[2], c[5]) for c in parsed.calls if c[5].startswith("property"))
        self.assertEqual(
            uses,
            [
                ("box", "other.box", "property_read"),
                ("conn", "other.conn", "property_read"),
                ("conn", "other.conn", "property_read"),
                ("peer", "other.conn.peer", "property_read"),
            ],
        )

    def test_python_a_local_returned_types_the_result_only_when_bound_once(self) -> None:
        parsed = parse_file(
            "p.py",
            b"def once():\n    v = make()\n    xv = 2\n    v == 3\n    return v\n"
            b"def again():\n    v = make()\n    v += 1\n    return v\n"
            b"def annotated_again():\n    v = make()\n    v: int = 1\n    return v\n"
            b"def other_word():\n    v = make()\n    self.v2 = 1\n    return v\n",
        )
        returns = {e["entity_name"]: e["metadata"].get("returns") for e in parsed.entities}
        self.assertEqual(
            returns,
            {"once": "make()", "again": None, "annotated_again": None, "other_word": "make()"},
        )

    def test_python_return_and_yield_count_only_as_whole_words(self) -> None:
        parsed = parse_file(
            "p.py",
            b"def built():\n    returned = 1\n    return_value = 2\n    return make()\n"
            b"def generator():\n    yield_count = 1\n    return make()\n"
            b"def yields():\n    x = (yield)\n    return make()\n"
            b"def two():\n    if x:\n        return\n    return make()\n"
            b"def many():\n" + b"    if x:\n        return\n" * 6 + b"    return make()\n",
        )
        returns = {e["entity_name"]: e["metadata"].get("returns") for e in parsed.entities}
        # "returned", "return_value", "yield_count" are no keywords; a real yield makes a
        # generator; up to six returns are read, more give up
        self.assertEqual(
            returns,
            {
                "built": "make()",
                "generator": "make()",
                "yields": None,
                "two": "make()",
                "many": None,
            },
        )

    def test_python_attribute_uses_are_captured_under_every_parent_that_can_hold_one(
        self,
    ) -> None:
        # The query names the parents an attribute use can have; a grammar that lets a new
        # kind of node hold an attribute must add it there, or its property uses vanish.
        import tree_sitter_python
        from tree_sitter import Language, Query

        from eshu_mcp.query.local.index.parse.extractors import python_values

        language = Language(tree_sitter_python.language())
        named = {
            language.node_kind_for_id(kind)
            for kind in range(language.node_kind_count)
            if language.node_kind_is_named(kind) and language.node_kind_is_visible(kind)
        }
        can_hold = set()
        for kind in named:
            try:
                Query(language, f"({kind} (attribute) @attribute)")
            except Exception:  # the grammar never puts an attribute directly under it
                continue
            can_hold.add(kind)
        self.assertEqual(
            set(python_values.ATTRIBUTE_PARENTS),
            can_hold - {"call", "decorator", "delete_statement"} | {"ERROR"},
        )
        parsed = parse_file(
            "p.py",
            b"def use(o):\n    print(o.a, [o.b], {o.c: o.d}, o.e[o.f], not o.g, -o.h)\n"
            b"    o.i.run()\n    del o.j\n    return lambda: o.k if o.l else (o.m)\n",
        )
        self.assertEqual(
            sorted(c[1] for c in parsed.calls if c[5] == "property_read"),
            ["a", "b", "c", "d", "e", "f", "g", "h", "i", "k", "l", "m"],
        )

    def test_python_an_attribute_that_is_a_value_too_is_a_reference_and_a_property_use(
        self,
    ) -> None:
        # One query pattern captures such an attribute under both names; the fields it names
        # must be every field the grammar lets an attribute fill under that parent.
        import tree_sitter_python
        from tree_sitter import Language, Query

        from eshu_mcp.query.local.index.parse.extractors import python_values

        language = Language(tree_sitter_python.language())
        fields = [language.field_name_for_id(i) for i in range(1, language.field_count + 1)]
        for parent, named in python_values._ATTRIBUTE_FIELDS.items():
            fillable = set()
            for field in fields:
                try:
                    Query(language, f"({parent} {field}: (attribute))")
                except Exception:
                    continue
                fillable.add(field)
            written = {p.split()[1] for p in python_values.WRITTEN_PLACES if p.split()[0] == parent}
            self.assertEqual(fillable, set(named) | written, parent)
        parsed = parse_file(
            "p.py",
            b"class C:\n  def use(self, o):\n    o.a = self.b\n    o.c += self.d\n"
            b"    f(self.e, k=self.g)\n    return {self.h: self.i}, lambda: self.j\n",
        )
        uses = sorted((c[1], c[5], c[7]) for c in parsed.calls if c[5].startswith("property"))
        self.assertEqual(
            uses,
            [
                ("a", "property_write", 3),
                ("b", "property_read", 3),
                ("c", "property_write", 4),
                ("d", "property_read", 4),
                ("e", "property_read", 5),
                ("g", "property_read", 5),
                ("h", "property_read", 6),
                ("i", "property_read", 6),
                ("j", "property_read", 6),
            ],
        )
        references = sorted((r[1], r[2], r[3]) for r in parsed.references)
        self.assertEqual(
            references,
            [
                ("b", "self", 3),
                ("e", "self", 5),
                ("g", "self", 5),
                ("i", "self", 6),
                ("j", "self", 6),
            ],
        )

    def test_python_decorated_definitions_span_their_decorators_and_nothing_else_does(
        self,
    ) -> None:
        source = (
            b"@implementer(IFoo)\nclass C:\n    @property\n    def size(self):\n"
            b"        def inner():\n            pass\n"
            b"@app.route('/')\ndef index():\n    def inner2():\n        return 1\n"
        )
        parsed = parse_file("p.py", source)
        rows = {e["entity_name"]: e for e in parsed.entities}
        spans = {
            n: (rows[n]["start_byte"], rows[n].get("metadata", {}).get("decorators")) for n in rows
        }
        self.assertEqual(
            spans,
            {
                "C": (0, ["implementer(IFoo)"]),
                "size": (source.index(b"@property"), ["property"]),
                "inner": (source.index(b"def inner"), None),
                "index": (source.index(b"@app"), ["app.route('/')"]),
                "inner2": (source.index(b"def inner2"), None),
            },
        )
        # a reader called on its own, outside an extraction, reads the same
        import tree_sitter_python
        from tree_sitter import Language, Parser

        from eshu_mcp.query.local.index.parse.extractors import python

        tree = Parser(Language(tree_sitter_python.language())).parse(source)
        size = tree.root_node.named_children[0].named_children[1].child_by_field_name("body")
        found = python.define(size.named_children[0].child_by_field_name("definition"))
        self.assertEqual((found.name, found.span.start_byte), ("size", spans["size"][0]))

    def test_python_bases_keep_their_dotted_name_without_subscripts(self) -> None:
        parsed = parse_file(
            "p.py",
            b"class C(protocol.Protocol, Deferred[object], Generic[T], metaclass=M):\n    pass\n",
        )
        self.assertEqual(
            [base for _, base, _ in parsed.bases], ["protocol.Protocol", "Deferred", "Generic"]
        )

    def test_node_text_outside_extraction_reads_the_node(self) -> None:
        from eshu_mcp.query.local.index.parse.extractors import core, engine_for

        engine = engine_for("python")
        tree = engine.parser.parse(b"name_here = 1\n")
        engine.extract(b"other = 2\n", 10)  # leaves no source behind for the next reader
        self.assertEqual(core.text(tree.root_node.named_child(0)), "name_here = 1")

    def test_binary_and_oversized_files_keep_no_content(self) -> None:
        self.assertEqual(parse_file("x.py", b"a\x00b").parse_status, "binary")
        big = parse_file("x.py", b"#" * (1024 * 1024 + 1))
        self.assertEqual((big.parse_status, big.content, big.byte_size), ("too_large", "", 1048577))

    def test_syntax_errors_are_counted_not_fatal(self) -> None:
        parsed = parse_file("x.py", b"def ok():\n    pass\n\ndef broken(:\n")
        self.assertEqual(parsed.parse_status, "parse_error")
        self.assertGreater(parsed.parse_errors, 0)

    def test_unknown_text_files_are_kept_for_search(self) -> None:
        parsed = parse_file("notes.md", b"# hello\n")
        self.assertEqual(
            (parsed.language, parsed.parse_status, parsed.line_count), ("markdown", "no_parser", 1)
        )

    def test_python_module_names(self) -> None:
        self.assertEqual(python_module_name("a/b/__init__.py"), "a.b")
        self.assertEqual(python_module_name("a/b/c.py"), "a.b.c")


class AstCrossCheckTests(SynchronousTestCase):
    def test_functions_and_classes_match_ast_for_this_project(self) -> None:
        tmp = Path(tempfile.mkdtemp(prefix="eshu-ast-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        snapshot = tmp / "eshu_mcp"
        shutil.copytree(PACKAGE, snapshot, ignore=shutil.ignore_patterns("__pycache__"))
        expected: dict[str, tuple[int, int]] = {}
        for path in sorted(snapshot.rglob("*.py")):
            try:
                tree = ast.parse(path.read_bytes())
            except SyntaxError:
                continue  # a colleague's half-written file: excluded on both sides
            nodes = list(ast.walk(tree))
            functions = sum(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in nodes)
            classes = sum(isinstance(n, ast.ClassDef) for n in nodes)
            expected[path.relative_to(tmp).as_posix()] = (functions, classes)
        db = tmp / "index.sqlite"
        index_repositories(db, [tmp], workers=1)
        conn = open_reader(db)
        self.addCleanup(conn.close)
        found: dict[str, list[int]] = {path: [0, 0] for path in expected}
        for path, entity_type, count in conn.execute(
            "SELECT relative_path, entity_type, COUNT(*) FROM entities"
            " WHERE entity_type IN ('Function', 'Class') GROUP BY relative_path, entity_type"
        ):
            if path in found:
                found[path][0 if entity_type == "Function" else 1] = count
        own = conn.execute("SELECT COUNT(*) FROM files WHERE relative_path LIKE 'index.sqlite%'")
        self.assertEqual(own.fetchone()[0], 0)  # the database inside the tree is not indexed
        self.assertGreater(len(expected), 20)
        actual = {p: tuple(v) for p, v in found.items()}
        self.assertEqual(
            {p: (actual[p], expected[p]) for p in expected if actual[p] != expected[p]}, {}
        )
