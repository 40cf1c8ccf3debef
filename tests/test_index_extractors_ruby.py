"""Tests for eshu_mcp.query.local.index.parse.extractors.ruby: calls without parentheses,
mixins and the methods Ruby runs without a visible call."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file
from tests.indexed import indexed_reader

SOURCE = b"""def hello(a, b = 1)
  base_helper
  items.each do |item|
    item
  end
  total = 1
  total
  if valid? && ready then go end
  [a, helper]
rescue => e
  e
end
"""


class BareCallTests(SynchronousTestCase):
    def test_a_bare_name_is_a_call_unless_a_local_or_parameter_has_it(self) -> None:
        called = [c[1] for c in parse_file("lib/a.rb", SOURCE).calls]
        self.assertEqual(
            sorted(called),
            sorted(["base_helper", "each", "items", "valid?", "ready", "go", "helper"]),
        )

    def test_operators_and_setters_are_run_without_a_visible_call(self) -> None:
        source = b"class A\n  def ==(o) true end\n  def name=(v) @n = v end\n  def x; end\nend\n"
        roots = {
            e["entity_name"]: e["metadata"].get("dead_code_root_kinds")
            for e in parse_file("lib/a.rb", source).entities
        }
        self.assertEqual(roots["=="], ["ruby.operator"])
        self.assertEqual(roots["name="], ["ruby.setter"])
        self.assertIsNone(roots["x"])

    def test_methods_below_private_or_wrapped_in_it_are_not_public(self) -> None:
        source = (
            b"class A\n  def a; end\n  private\n  def b; end\n  public\n  def c; end\n"
            b"  protected def d; end\nend\n"
        )
        visibility = {
            e["entity_name"]: e["metadata"].get("visibility")
            for e in parse_file("lib/a.rb", source).entities
        }
        self.assertEqual(
            visibility, {"A": None, "a": None, "b": "private", "c": None, "d": "protected"}
        )


class MixinTests(SynchronousTestCase):
    def test_a_bare_call_resolves_to_an_included_modules_or_superclass_method(self) -> None:
        person = (
            "class Base\n  def base_helper\n  end\nend\n"
            "class Person < Base\n  include Greeting\n"
            "  def hello\n    greet 'x'\n    base_helper\n  end\nend\n"
        )
        greeting = "module Greeting\n  def greet(n)\n  end\nend\n"
        conn = indexed_reader(self, {"lib/greeting.rb": greeting, "lib/person.rb": person})
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT s.qualified_name, t.qualified_name FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }
        self.assertEqual(
            edges, {("Person.hello", "Greeting.greet"), ("Person.hello", "Base.base_helper")}
        )
