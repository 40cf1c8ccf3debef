"""Tests for eshu_mcp.query.local.index.parse.extractors.functional: Elixir and Haskell."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

ELIXIR = b"""defmodule Shop.Cart do
  alias Shop.Money
  import Shop.Util
  use GenServer
  @behaviour Shop.Priced
  def price(cart) do
    if cart.ok and cart.n > 0, do: Money.new(1), else: helper(cart)
  end
  defp helper(x), do: x |> Enum.map(&f/1) |> total()
  def add(cart, item) do
    case item do
      nil -> cart
      _ -> Shop.Repo.save(item)
    end
  end
  test "adds an item" do
    assert add(new_cart(), 1)
  end
end
"""

HASKELL = b"""module Shop.Cart (price) where
import qualified Data.Map as M
import Shop.Util
import Data.List (sortBy)
data Cart = Cart { items :: [Item] }
class Priced a where
  cost :: a -> Int
instance Priced Cart where
  cost c = total (items c)
price :: Cart -> Int
price c = helper (M.size m) + 1
  where m = M.empty
helper 0 = 1
helper x = if x > 1 && x < 3 then sum [x] else x
run p = try $ many1 p
"""


class ElixirTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("lib/shop/cart.ex", ELIXIR)
        self.entities = {e["qualified_name"]: e for e in self.parsed.entities}

    def test_modules_and_functions_are_definitions_not_calls(self) -> None:
        self.assertEqual(
            sorted(self.entities),
            ["Cart", "Cart.add", "Cart.helper", "Cart.price", "Cart.test adds an item"],
        )
        self.assertEqual(self.entities["Cart.add"]["metadata"]["args"], ["cart", "item"])
        self.assertEqual(self.entities["Cart.helper"]["metadata"]["visibility"], "private")
        called = {c[1] for c in self.parsed.calls}
        self.assertFalse(called & {"def", "defp", "price", "helper(x)", "if", "case", "behaviour"})

    def test_an_exunit_test_block_is_a_function_holding_its_calls(self) -> None:
        test = self.entities["Cart.test adds an item"]
        self.assertEqual(test["metadata"]["dead_code_root_kinds"], ["elixir.test"])
        index = list(self.entities).index("Cart.test adds an item")
        self.assertEqual(
            {c[1] for c in self.parsed.calls if c[0] == index}, {"assert", "add", "new_cart"}
        )

    def test_calls_name_their_module_and_fields_are_not_calls(self) -> None:
        calls = {(c[2], c[3]) for c in self.parsed.calls}
        self.assertEqual(
            calls,
            {
                ("Money.new", "Money"),
                ("helper", None),
                ("Enum.map", "Enum"),
                ("total", None),
                ("Shop.Repo.save", "Repo"),
                ("assert", None),
                ("add", None),
                ("new_cart", None),
            },
        )

    def test_alias_import_and_use_are_imports_and_use_and_behaviour_are_bases(self) -> None:
        self.assertEqual(
            [row[:4] for row in self.parsed.imports],
            [
                ("Shop.Money", None, None, "alias"),
                ("Shop.Util", "*", None, "import"),
                ("GenServer", None, None, "use"),
            ],
        )
        self.assertEqual(
            sorted(b[1:] for b in self.parsed.bases),
            [("GenServer", "includes"), ("Priced", "implements")],
        )

    def test_complexity_counts_if_boolean_operators_and_case_clauses(self) -> None:
        self.assertEqual(self.entities["Cart.price"]["cyclomatic_complexity"], 3)
        self.assertEqual(self.entities["Cart.add"]["cyclomatic_complexity"], 3)


class HaskellTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.parsed = parse_file("src/Shop/Cart.hs", HASKELL)
        self.entities = {(e["entity_type"], e["qualified_name"]): e for e in self.parsed.entities}

    def test_a_function_of_several_equations_is_one_definition(self) -> None:
        helpers = [e for e in self.parsed.entities if e["entity_name"] == "helper"]
        self.assertEqual(len(helpers), 1)
        self.assertIn(("Function", "price"), self.entities)
        self.assertEqual(
            self.entities[("Function", "m")]["metadata"]["enclosing_function"], "price"
        )

    def test_a_name_its_module_does_not_export_is_private(self) -> None:
        source = b"module Shop.Tax (rate, Band(..)) where\nrate = 1\nround' = 2\ndata Band = B\n"
        visibility = {
            e["entity_name"]: e["metadata"].get("visibility")
            for e in parse_file("src/Shop/Tax.hs", source).entities
        }
        self.assertEqual(visibility, {"rate": None, "round'": "private", "Band": None})
        for executable in (b"module Main where\nrun = 1\n", b"run = 1\n"):
            (run,) = parse_file("app/Main.hs", executable).entities
            self.assertEqual(run["metadata"].get("visibility"), "private")
        (everything,) = parse_file("src/A.hs", b"module A where\nrun = 1\n").entities
        self.assertIsNone(everything["metadata"].get("visibility"))

    def test_an_instance_holds_the_type_methods_of_its_class(self) -> None:
        self.assertIn(("Function", "Cart.cost"), self.entities)
        self.assertIn(("Interface", "Priced"), self.entities)
        index = list(self.entities).index(("ImplBlock", "Cart"))
        self.assertIn((index, "Priced", "implements"), self.parsed.bases)

    def test_applications_are_calls_and_qualified_names_have_their_module(self) -> None:
        calls = {(c[2], c[3]) for c in self.parsed.calls}
        self.assertIn(("M.size", "M"), calls)
        self.assertIn(("helper", None), calls)
        self.assertIn(("total", None), calls)
        self.assertIn(("try", None), calls)  # f $ x applies f

    def test_imports_are_qualified_open_or_listed(self) -> None:
        self.assertEqual(
            [row[:3] for row in self.parsed.imports],
            [("Data.Map", None, "M"), ("Shop.Util", "*", None), ("Data.List", "sortBy", None)],
        )
