"""Tests for eshu_mcp.query.local.index.parse.extractors.engine: parse errors and shadowing."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

MISSING_BRACE = b"""class A {
  void f() { if (x) { go(); }
  void g() { h(); }
}
class B { void k() {} }
"""


class ParseErrorTests(SynchronousTestCase):
    def test_a_definition_with_a_parse_error_never_swallows_what_follows_it(self) -> None:
        parsed = parse_file("src/A.java", MISSING_BRACE)
        self.assertGreater(parsed.parse_errors, 0)
        spans = {e["qualified_name"]: (e["start_line"], e["end_line"]) for e in parsed.entities}
        self.assertEqual(spans["A"], (1, 4))
        self.assertEqual(spans["A.f"], (2, 2))
        self.assertEqual(spans["B"], (5, 5))  # not A.B: A ended before it
        self.assertNotIn("A.B", spans)

    def test_a_well_formed_file_keeps_its_spans(self) -> None:
        fixed = MISSING_BRACE.replace(b"go(); }\n", b"go(); } }\n", 1)
        parsed = parse_file("src/A.java", fixed)
        self.assertEqual(parsed.parse_errors, 0)
        spans = {e["qualified_name"]: (e["start_line"], e["end_line"]) for e in parsed.entities}
        self.assertEqual(
            spans, {"A": (1, 4), "A.f": (2, 2), "A.g": (3, 3), "B": (5, 5), "B.k": (5, 5)}
        )
