"""Tests for eshu_mcp.query.local.index.parse.extractors.engine: parse errors, shadowing and
receivers that are call results."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file
from tests.indexed import indexed_reader

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

    def test_an_allman_brace_opens_a_body_with_a_parse_error_never_ends_it(self) -> None:
        source = b"int main(int argc)\n{\n\tint x = ;\n\tgo(x);\n\treturn 0;\n}\n"
        parsed = parse_file("src/main.cpp", source)
        self.assertGreater(parsed.parse_errors, 0)
        spans = {e["qualified_name"]: (e["start_line"], e["end_line"]) for e in parsed.entities}
        self.assertEqual(spans["main"], (1, 6))
        self.assertIn(("go", 0), [(c[1], c[0]) for c in parsed.calls])

    def test_a_well_formed_file_keeps_its_spans(self) -> None:
        fixed = MISSING_BRACE.replace(b"go(); }\n", b"go(); } }\n", 1)
        parsed = parse_file("src/A.java", fixed)
        self.assertEqual(parsed.parse_errors, 0)
        spans = {e["qualified_name"]: (e["start_line"], e["end_line"]) for e in parsed.entities}
        self.assertEqual(
            spans, {"A": (1, 4), "A.f": (2, 2), "A.g": (3, 3), "B": (5, 5), "B.k": (5, 5)}
        )


GO_RESULTS = """package id

type UUID [16]byte
type Label string

func (u UUID) String() string { return "u" }
func (l Label) String() string { return string(l) }

func NewRandom() (UUID, error) { return UUID{}, nil }
func Must(u UUID, err error) UUID { return u }

func NewString() string { return Must(NewRandom()).String() }
"""


class CallResultReceiverTests(SynchronousTestCase):
    def test_a_call_on_a_call_result_runs_the_declared_result_types_method(self) -> None:
        conn = indexed_reader(self, {"id.go": GO_RESULTS})
        callees = {
            row[0]
            for row in conn.execute(
                "SELECT t.qualified_name FROM edges e JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND s.qualified_name = 'NewString'"
            )
        }
        self.assertEqual(callees, {"Must", "NewRandom", "UUID.String"})  # not Label.String
