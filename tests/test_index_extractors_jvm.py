"""Tests for eshu_mcp.query.local.index.parse.extractors.jvm: Kotlin and Scala extraction."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

KOTLIN = b"""package shop
import com.example.util.Money
import com.example.util.*
import java.io.File as JFile

interface Priced {
    fun price(): Int
}
class Cart(private val repo: Repo) : Base(1), Priced {
    override fun price(): Int {
        var total = 0
        for (i in items) { if (i.qty > 0 && i.ok) total += i.cost() }
        val m = Money(total)
        m.format()
        return when (total) { 0 -> 1; else -> total }
    }
    fun add(item: Item) { helper(item); repo.save(item); if (!item.valid(1)) reject(item) }
}
fun String.slug(): String = this.lowercase()
"""

SCALA = b"""package shop
import shop.util.Money
import scala.collection.mutable.{Map, Set => MSet}
trait Priced { def price: Int }
class Cart(repo: Repo) extends Base with Priced {
  def price: Int = { val m = new Money(1); m.fmt(); if (a && b) 1 else helper(2) }
  def typed: Int = convert[Int](1)
}
def top(x: Int) = x match { case 1 => "a"; case _ => "b" }
"""


def by_name(parsed) -> dict:
    return {e["qualified_name"]: e for e in parsed.entities}


class KotlinTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("src/shop/Cart.kt", KOTLIN)

    def test_a_kotlin_file_parses_cleanly_into_types_and_methods(self) -> None:
        self.assertEqual((self.parsed.language, self.parsed.parse_status), ("kotlin", "parsed"))
        entities = by_name(self.parsed)
        self.assertEqual(entities["Priced"]["entity_type"], "Interface")
        self.assertEqual(entities["Cart"]["entity_type"], "Class")
        self.assertEqual(entities["Cart.add"]["metadata"]["args"], ["item"])
        self.assertEqual(entities["Cart.add"]["cyclomatic_complexity"], 2)
        self.assertTrue(entities["Cart.price"]["metadata"]["override"])
        # an override runs where its base's method is called
        self.assertEqual(
            entities["Cart.price"]["metadata"]["dead_code_root_kinds"], ["kotlin.override"]
        )
        self.assertEqual(entities["slug"]["metadata"]["extends_type"], "String")

    def test_the_superclass_extends_and_interfaces_are_implemented(self) -> None:
        cart = next(i for i, e in enumerate(self.parsed.entities) if e["entity_name"] == "Cart")
        bases = {(base, kind) for index, base, kind in self.parsed.bases if index == cart}
        self.assertEqual(bases, {("Base", "extends"), ("Priced", "implements")})

    def test_calls_carry_receivers_and_the_type_a_local_was_constructed_with(self) -> None:
        calls = {(c[2], c[4]) for c in self.parsed.calls}
        self.assertIn(("m.format", "Money"), calls)
        self.assertIn(("helper", None), calls)
        self.assertIn(("repo.save", None), calls)
        # ``!item.valid(1)`` parses as a call of ``!item.valid``: still a call of valid
        self.assertIn(("item.valid", "Item"), calls)

    def test_imports_name_a_type_a_package_or_an_alias(self) -> None:
        self.assertEqual(
            [row[:3] for row in self.parsed.imports],
            [
                ("com.example.util", "Money", None),
                ("com.example.util", "*", None),
                ("java.io", "File", "JFile"),
            ],
        )

    def test_complexity_counts_branches_loops_boolean_operators_but_not_else(self) -> None:
        # for, if, &&, one non-default when entry
        self.assertEqual(by_name(self.parsed)["Cart.price"]["cyclomatic_complexity"], 5)


class ScalaTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("shop/Cart.scala", SCALA)

    def test_traits_classes_and_their_bases(self) -> None:
        entities = by_name(self.parsed)
        self.assertEqual(entities["Priced"]["entity_type"], "Trait")
        cart = list(entities).index("Cart")
        bases = [(b, k) for i, b, k in self.parsed.bases if i == cart]
        self.assertEqual(bases, [("Base", "extends"), ("Priced", "implements")])

    def test_new_and_typed_locals_give_constructor_calls_and_receiver_types(self) -> None:
        calls = {(c[2], c[4], c[5]) for c in self.parsed.calls}
        self.assertIn(("new Money", None, "constructor_call"), calls)
        self.assertIn(("m.fmt", "Money", "method_call"), calls)
        self.assertIn(("helper", None, "call"), calls)
        self.assertIn(("convert", None, "call"), calls)  # with a type argument

    def test_selector_imports_keep_renames(self) -> None:
        self.assertEqual(
            [row[:3] for row in self.parsed.imports],
            [
                ("shop.util", "Money", None),
                ("scala.collection.mutable", "Map", None),
                ("scala.collection.mutable", "Set", "MSet"),
            ],
        )

    def test_a_wildcard_case_is_not_a_decision(self) -> None:
        entities = by_name(self.parsed)
        self.assertEqual(entities["top"]["cyclomatic_complexity"], 2)
        self.assertEqual(entities["Cart.price"]["cyclomatic_complexity"], 3)
