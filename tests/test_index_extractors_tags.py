"""Tests for eshu_mcp.query.local.index.parse.extractors.tags: a language read from a tags
query (Dart's, declared in its registry module; Python's as its wheel ships it)."""

import subprocess
import sys
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.extractors.engine import LanguageEngine
from eshu_mcp.query.local.index.parse.extractors.tags import spec_for
from eshu_mcp.query.local.index.parse.registry import LanguageEntry
from eshu_mcp.query.local.index.parse.rows import parse_file
from tests.indexed import indexed_reader

ROOT = Path(__file__).resolve().parent.parent

SHAPES = b"""import 'package:geo/src/units.dart' as units;
import 'src/area.dart';

abstract class Shape extends Base with Printable implements Comparable<Shape> {
  final Ruler ruler;
  Shape(this.ruler);
  Shape.unit() : ruler = Ruler();

  double area(int scale) {
    if (scale > 0 && ruler.ok()) {
      return measure(scale);
    }
    this.reset();
    super.reset();
    return units.convert(scale) ?? 0;
  }

  double measure(int scale) => ruler.length() * scale;
  void reset() {}
}

Report report(Shape s) {
  final r = Report();
  r.add(s.area(1));
  return r;
}

void main() {
  final made = report(Circle());
  made.add(2);
  report(Circle()).add(3);
  final sheet = new Sheet()..add(1)..add(2);
}
"""


def parsed(source: bytes):
    found = parse_file("lib/shapes.dart", source)
    assert found.parse_status == "parsed", found.parse_status
    return found


class DefinitionTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.file = parsed(SHAPES)
        self.by_name = {e["qualified_name"]: e for e in self.file.entities}

    def test_methods_nest_in_their_class_and_top_level_functions_stand_alone(self) -> None:
        self.assertEqual(
            [(e["entity_type"], e["qualified_name"]) for e in self.file.entities],
            [
                ("Class", "Shape"),
                ("Function", "Shape.Shape"),
                ("Function", "Shape.unit"),
                ("Function", "Shape.area"),
                ("Function", "Shape.measure"),
                ("Function", "Shape.reset"),
                ("Function", "report"),
                ("Function", "main"),
            ],
        )

    def test_a_function_spans_its_body_kept_beside_its_signature(self) -> None:
        area = self.by_name["Shape.area"]
        self.assertEqual((area["start_line"], area["end_line"]), (9, 16))
        self.assertEqual(area["signature"], "double area(int scale)")
        self.assertEqual(area["metadata"]["args"], ["scale"])
        self.assertEqual(self.by_name["Shape"]["end_line"], 20)

    def test_complexity_counts_the_decisions_of_each_function(self) -> None:
        # if, && and ??
        self.assertEqual(self.by_name["Shape.area"]["cyclomatic_complexity"], 4)
        self.assertEqual(self.by_name["Shape.measure"]["cyclomatic_complexity"], 1)

    def test_a_header_names_the_bases_and_a_body_constructs(self) -> None:
        self.assertEqual(
            self.file.bases,
            [(0, "Base", "extends"), (0, "Printable", "extends"), (0, "Comparable", "implements")],
        )
        constructed = [c[1] for c in self.file.calls if c[5] == "constructor_call"]
        self.assertEqual(constructed, ["Sheet"])

    def test_imports_bring_a_file_in_whole_or_under_its_alias(self) -> None:
        self.assertEqual(
            [row[:3] for row in self.file.imports],
            [("package:geo/src/units.dart", "*", "units"), ("src/area.dart", "*", None)],
        )

    def test_a_name_two_definitions_claim_is_the_outer_ones(self) -> None:
        names = [e["qualified_name"] for e in self.file.entities]
        self.assertEqual(len(names), len(set(names)))  # no inner ``area`` beside Shape.area


class CallTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.file = parsed(SHAPES)
        names = [e["qualified_name"] for e in self.file.entities]
        self.calls = [
            (names[c[0]] if c[0] is not None else None, c[2], c[3], c[4]) for c in self.file.calls
        ]

    def in_function(self, name: str) -> list[tuple]:
        return [call[1:] for call in self.calls if call[0] == name]

    def test_bare_and_member_calls_keep_their_receivers(self) -> None:
        self.assertEqual(
            self.in_function("Shape.area"),
            [
                ("ruler.ok", "ruler", "Ruler"),  # a field of a declared type
                ("measure", None, None),
                ("this.reset", "this", None),
                ("super.reset", "super", None),
                ("units.convert", "units", None),
            ],
        )

    def test_receivers_are_typed_by_declarations_constructions_and_results(self) -> None:
        self.assertIn(("r.add", "r", "Report"), self.in_function("report"))  # r = Report()
        self.assertIn(("s.area", "s", "Shape"), self.in_function("report"))  # Shape s
        main = self.in_function("main")
        self.assertIn(("made.add", "made", "Report"), main)  # what report() declares
        self.assertIn(("report(Circle()).add", "report(Circle())", "Report"), main)

    def test_a_cascade_runs_on_its_target(self) -> None:
        cascades = [call for call in self.in_function("main") if call[1] == "new Sheet()"]
        self.assertEqual(
            cascades,
            [
                ("new Sheet().add", "new Sheet()", "Sheet"),
                ("new Sheet().add", "new Sheet()", "Sheet"),
            ],
        )


class ShippedTagsTests(SynchronousTestCase):
    def test_a_language_can_be_read_from_its_wheels_own_tags_query(self) -> None:
        entry = LanguageEntry(
            "python_by_tags", extractor="tags", wheel="tree-sitter-python", shipped_tags=True
        )
        engine = LanguageEngine(spec_for(entry))
        source = (
            b"class Cart:\n    def total(self):\n        return self.sum(price())\n\n"
            b"def price():\n    return 1\n"
        )
        found = engine.extract(source, 100)
        self.assertEqual(
            [(e["entity_type"], e["qualified_name"]) for e in found.entities],
            [("Class", "Cart"), ("Function", "Cart.total"), ("Function", "price")],
        )
        self.assertEqual(
            [(c[0], c[2], c[3], c[5]) for c in found.calls],
            [(1, "self.sum", "self", "method_call"), (1, "price", None, "call")],
        )


class LazyQueryTests(SynchronousTestCase):
    def test_a_repository_without_such_files_never_compiles_the_query(self) -> None:
        probe = (
            "import sys\n"
            "from eshu_mcp.query.local.index.parse.rows import parse_file\n"
            "parse_file('a.go', b'package a\\nfunc f() { g() }\\n')\n"
            "print('tree_sitter_dart' in sys.modules,"
            " 'eshu_mcp.query.local.index.parse.extractors.tags' in sys.modules)\n"
        )
        found = subprocess.run(
            [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
        )
        self.assertEqual(found.stdout.strip(), "False False")


class ResolutionTests(SynchronousTestCase):
    def test_calls_resolve_through_imports_and_receiver_types(self) -> None:
        files = {
            "lib/src/ruler.dart": (
                "class Ruler {\n  double length() => 1;\n  void reset() {}\n}\n"
                "class Tape {\n  void reset() {}\n}\n"
            ),
            "lib/shapes.dart": (
                "import 'src/ruler.dart';\n"
                "Ruler make() => Ruler();\n"
                "double run() {\n  final r = make();\n  r.reset();\n  return r.length();\n}\n"
            ),
        }
        conn = indexed_reader(self, files)
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT s.qualified_name, t.qualified_name FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }
        self.assertEqual(
            edges,
            {("make", "Ruler"), ("run", "make"), ("run", "Ruler.reset"), ("run", "Ruler.length")},
        )
