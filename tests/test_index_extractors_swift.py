"""Tests for eshu_mcp.query.local.index.parse.extractors.swift: Swift extraction."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

SOURCE = b"""import Foundation
protocol Shape { func area() -> Double }
class Base {}
final class Circle: Base, Shape {
    let r: Double
    init(r: Double) { self.r = r }
    func area() -> Double {
        if r > 0 && r < 10 { return helper(r) }
        return 0
    }
    func grow(by f: Double) -> Circle { let c = Circle(r: r * f); c.area(); return c }
}
struct Point { var x: Int }
extension Point: Shape { func area() -> Double { 0 } }
func helper(_ v: Double) -> Double { switch v { case 0: return 1; default: return v } }
"""


class SwiftTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("Sources/Shapes.swift", SOURCE)
        self.entities = {(e["entity_type"], e["qualified_name"]): e for e in self.parsed.entities}

    def test_declarations_are_typed_by_their_keyword(self) -> None:
        self.assertEqual(self.parsed.parse_status, "parsed")
        for key in [
            ("Interface", "Shape"),
            ("Class", "Circle"),
            ("Struct", "Point"),
            ("Function", "Circle.init"),
            ("Function", "Circle.grow"),
            ("Function", "helper"),
        ]:
            self.assertIn(key, self.entities)
        self.assertEqual(self.entities[("Function", "Circle.grow")]["metadata"]["args"], ["f"])

    def test_an_extension_adds_methods_and_conformances_to_the_extended_type(self) -> None:
        self.assertIn(("Function", "Point.area"), self.entities)
        index = next(
            i for i, e in enumerate(self.parsed.entities) if e["entity_type"] == "ImplBlock"
        )
        self.assertIn((index, "Shape", "implements"), self.parsed.bases)

    def test_a_class_extends_its_first_base_and_implements_the_rest(self) -> None:
        circle = list(self.entities).index(("Class", "Circle"))
        bases = [(b, k) for i, b, k in self.parsed.bases if i == circle]
        self.assertEqual(bases, [("Base", "extends"), ("Shape", "implements")])

    def test_calls_record_the_constructed_type_of_a_local(self) -> None:
        calls = {(c[2], c[4]) for c in self.parsed.calls}
        self.assertIn(("c.area", "Circle"), calls)
        self.assertIn(("Circle", None), calls)
        self.assertIn(("helper", None), calls)
        self.assertEqual(self.parsed.imports[0][:2], ("Foundation", None))

    def test_complexity_counts_conditions_and_cases_but_not_default(self) -> None:
        self.assertEqual(self.entities[("Function", "Circle.area")]["cyclomatic_complexity"], 3)
        self.assertEqual(self.entities[("Function", "helper")]["cyclomatic_complexity"], 2)
