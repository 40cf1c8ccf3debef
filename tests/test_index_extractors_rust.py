"""Tests for eshu_mcp.query.local.index.parse.extractors.rust: calls inside macro arguments and
``use`` in inline modules."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file
from tests.indexed import indexed_reader

SOURCE = b"""fn total(x: i32) -> i32 { x }
fn check() {
    assert_eq!(total(x), 3);
    println!("{}", cart.price(x, y));
    tri!(money::round(1));
    let v = vec![1, 2];
    show!(items[0]);
    let level = Level::Info;
    level.raise();
}
"""


class MacroArgumentCallTests(SynchronousTestCase):
    def test_calls_inside_macro_token_trees_are_calls_with_their_receivers(self) -> None:
        calls = [(*c[1:4], c[6]) for c in parse_file("src/lib.rs", SOURCE).calls]
        self.assertIn(("total", "total", None, 1), calls)
        self.assertIn(("price", "cart.price", "cart", 2), calls)
        self.assertIn(("round", "money::round", "money", 1), calls)

    def test_a_local_bound_to_an_enum_variant_has_the_enums_type(self) -> None:
        typed = {c[2]: c[4] for c in parse_file("src/lib.rs", SOURCE).calls}
        self.assertEqual(typed["level.raise"], "Level")

    def test_indexing_and_macro_names_are_not_calls(self) -> None:
        called = [c[1] for c in parse_file("src/lib.rs", SOURCE).calls if c[5] != "macro"]
        self.assertEqual(called, ["total", "price", "round", "raise"])


class InlineModuleTests(SynchronousTestCase):
    def test_a_use_of_super_in_an_inline_module_names_the_files_own_items(self) -> None:
        lib = (
            "pub struct Level;\nimpl Level {\n    pub fn parse(n: u8) -> Level { Level }\n}\n"
            "fn top() -> Level { Level::parse(1) }\n"
            "mod tests {\n    use super::Level;\n"
            "    fn check() { let _ = Level::parse(2); }\n}\n"
        )
        conn = indexed_reader(self, {"src/lib.rs": lib})
        callers = {
            row[0]
            for row in conn.execute(
                "SELECT s.qualified_name FROM edges e JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND t.qualified_name = 'Level.parse'"
            )
        }
        # before: the inline module's ``use super::Level`` bound Level to nothing in the
        # file, and every Level::parse call in it ended external
        self.assertEqual(callers, {"top", "tests.check"})


CHAINS = b"""fn build(levels: &[Level]) {
    let record = Builder::new().args(1).build();
    assert_eq!(record.meta().target(), "x");
    for (level, name) in &[(Level::Info, "info")] {
        level.as_str();
    }
    for each in levels.iter() {
        each.up();
    }
}
"""


class DeclaredTypeTests(SynchronousTestCase):
    def typed(self) -> dict[str, str | None]:
        return {c[2]: c[4] for c in parse_file("src/lib.rs", CHAINS).calls}

    def test_a_builder_chain_records_each_receiver_as_the_chain_before_it(self) -> None:
        typed = self.typed()
        self.assertEqual(typed["Builder::new().args"], "Builder.new()")
        self.assertEqual(typed["Builder::new().args(1).build"], "Builder.new().args()")

    def test_a_chain_inside_a_macros_arguments_starts_at_a_typed_local(self) -> None:
        self.assertEqual(
            self.typed()["record.meta().target"], "Builder.new().args().build().meta()"
        )

    def test_loop_variables_take_their_elements_type(self) -> None:
        typed = self.typed()
        self.assertEqual(typed["level.as_str"], "Level")
        self.assertEqual(typed["each.up"], "Level")


class DeclarationTests(SynchronousTestCase):
    def test_a_declared_module_file_is_imported_under_its_name(self) -> None:
        parsed = parse_file("src/lib.rs", b"mod util;\nmod inline { fn f() {} }\n")
        self.assertEqual([row[:4] for row in parsed.imports], [("self::util", None, "util", "mod")])

    def test_a_structs_fields_keep_their_declared_types_but_not_its_parameters(self) -> None:
        source = b"struct Walk<T> { stack: Vec<Level>, item: T, count: usize, owner: Box<Dir> }\n"
        walk = parse_file("src/lib.rs", source).entities[0]
        self.assertEqual(
            walk["metadata"]["attribute_types"],
            {"stack": "[Level]", "count": "usize", "owner": "Dir"},
        )
