"""Tests for eshu_mcp.query.local.index.parse.extractors.rust: calls inside macro arguments."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file

SOURCE = b"""fn total(x: i32) -> i32 { x }
fn check() {
    assert_eq!(total(x), 3);
    println!("{}", cart.price(x, y));
    tri!(money::round(1));
    let v = vec![1, 2];
    show!(items[0]);
}
"""


class MacroArgumentCallTests(SynchronousTestCase):
    def test_calls_inside_macro_token_trees_are_calls_with_their_receivers(self) -> None:
        calls = [(*c[1:4], c[6]) for c in parse_file("src/lib.rs", SOURCE).calls]
        self.assertIn(("total", "total", None, 1), calls)
        self.assertIn(("price", "cart.price", "cart", 2), calls)
        self.assertIn(("round", "money::round", "money", 1), calls)

    def test_indexing_and_macro_names_are_not_calls(self) -> None:
        called = [c[1] for c in parse_file("src/lib.rs", SOURCE).calls if c[5] != "macro"]
        self.assertEqual(called, ["total", "price", "round"])
