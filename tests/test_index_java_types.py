"""Java calls on call results are typed by the result types the repository's signatures
declare; a receiver of a type from outside the repository (the JDK's) never links to
repository methods by name; statically imported methods are the calls' targets."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.resolve.java_types import declared_result

from .test_index_receivers import IndexedSourcesCase

SOURCES = {
    "src/com/acme/Util.java": """
        package com.acme;

        final class Util {
            static void check(boolean ok) {}
            static void check(boolean ok, String message) {}
            static String quote(String text) {
                StringBuilder out = new StringBuilder();
                out.append('"').append(text).append('"');
                return out.toString();
            }
        }
        """,
    "src/com/acme/Block.java": """
        package com.acme;

        import static com.acme.Util.check;

        public final class Block {
            public boolean isEmpty() { return true; }
            public void append(String text) {}
            public Block trimmed() { return this; }
            public static Builder builder() { return new Builder(); }

            public static final class Builder {
                public Builder add(String text) { check(text != null, "text"); return this; }
                public Block build() { return new Block(); }
            }
        }
        """,
    "src/com/acme/Sheet.java": """
        package com.acme;

        import static com.acme.Util.*;
        import java.util.List;
        import java.util.Map;

        class Sheet {
            private List<Block> blocks;
            private List<String> names;

            void run(Map<String, List<String>> byName) {
                for (Map.Entry<String, List<String>> entry : byName.entrySet()) {
                    if (entry.getValue().isEmpty()) continue;
                }
                check(true);
                Block.builder().add("a").build().trimmed().isEmpty();
                blocks.get(0).isEmpty();
                names.get(0).isEmpty();
                new StringBuilder().append("x").append("y");
                first().isEmpty();
                Page.builder().add("a").build();
                Page.Builder pages = Page.builder(); pages.add("b");
            }

            Block first() { return blocks.get(0); }

            <A extends Appendable> A write(A out) throws java.io.IOException {
                out.append("x");
                return out;
            }
        }
        """,
    "src/com/acme/Page.java": """
        package com.acme;

        public final class Page {
            public static Builder builder() { return new Builder(); }

            public static final class Builder {
                public Builder add(String text) { return this; }
                public Page build() { return new Page(); }
            }
        }
        """,
}


class JavaDeclaredTypesTests(IndexedSourcesCase):
    SOURCES = SOURCES

    def targets_at(self, path: str, line: int) -> list[tuple[str, str]]:
        """(target qualified name, resolution method) of a call line's edges."""
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
                " AND e.evidence_file_id = (SELECT file_id FROM files WHERE relative_path = ?)"
                " AND e.line_number = ?",
                (path, line),
            ).fetchall()
        )

    def unresolved_at(self, path: str, line: int) -> list[tuple[str, str]]:
        return sorted(
            tuple(row)
            for row in self.conn.execute(
                "SELECT c.callee_name, u.reason FROM unresolved_calls u"
                " JOIN call_rows c USING (call_id) JOIN files f ON f.file_id = c.file_id"
                " WHERE f.relative_path = ? AND c.line_number = ?",
                (path, line),
            )
        )

    def test_a_statically_imported_method_is_called_by_its_overload(self) -> None:
        block = "src/com/acme/Block.java"
        self.assertIn(("Util.check", "import_binding"), self.targets_at(block, 12))
        # ``import static com.acme.Util.*``: one argument, the one-parameter overload
        sheet = "src/com/acme/Sheet.java"
        self.assertEqual(self.targets_at(sheet, 15), [("Util.check", "import_binding")])
        overloads = [
            tuple(row)
            for row in self.conn.execute(
                "SELECT t.start_line FROM edges e JOIN entities t ON t.entity_id = e.target_id"
                " WHERE e.type = 'CALLS' AND e.line_number = 15"
                " AND t.qualified_name = 'Util.check'"
            )
        ]
        self.assertEqual(overloads, [(4,)])

    def test_a_jdk_receiver_never_links_to_a_repository_method_of_its_name(self) -> None:
        util, sheet = "src/com/acme/Util.java", "src/com/acme/Sheet.java"
        # out.append(...).append(...): StringBuilder's, whatever Block.append is
        self.assertEqual(self.targets_at(util, 8), [])
        self.assertEqual({r for _, r in self.unresolved_at(util, 8)}, {"external"})
        # entry.getValue().isEmpty(): a List<String>'s (an enhanced-for variable's type)
        self.assertEqual(self.targets_at(sheet, 13), [])
        self.assertEqual(self.targets_at(sheet, 19), [])  # new StringBuilder().append().append()
        self.assertEqual(self.targets_at(sheet, 18), [])  # a List<String>'s element's

    def test_a_parameter_of_a_bounded_type_variable_has_the_bound_type(self) -> None:
        # <A extends Appendable> ... out.append("x"): Appendable's, not Block.append
        self.assertEqual(self.targets_at("src/com/acme/Sheet.java", 28), [])
        self.assertEqual(
            self.unresolved_at("src/com/acme/Sheet.java", 28), [("append", "external")]
        )

    def test_declared_result_types_type_chained_calls(self) -> None:
        sheet = "src/com/acme/Sheet.java"
        targets = self.targets_at(sheet, 16)  # Block.builder().add("a").build().trimmed()...
        self.assertIn(("Block.isEmpty", "type_inferred"), targets)
        self.assertIn(("Builder.build", "type_inferred"), targets)
        self.assertIn(("Block.trimmed", "type_inferred"), targets)
        self.assertIn(("Block.isEmpty", "type_inferred"), self.targets_at(sheet, 20))  # first()

    def test_a_nested_class_named_like_others_is_told_apart_by_where_it_is_declared(
        self,
    ) -> None:
        # Block.Builder and Page.Builder: a chain of each, or a local declared as one, runs
        # its own class's methods
        found = self.conn.execute(
            "SELECT e.line_number, t.relative_path, t.qualified_name, e.resolution_method"
            " FROM edges e JOIN entities t ON t.entity_id = e.target_id"
            " WHERE e.type = 'CALLS' AND t.class_context = 'Builder'"
            " AND e.evidence_file_id = (SELECT file_id FROM files WHERE relative_path = ?)",
            ("src/com/acme/Sheet.java",),
        ).fetchall()
        block, page = "src/com/acme/Block.java", "src/com/acme/Page.java"
        self.assertEqual(
            sorted(tuple(row) for row in found),
            [
                (16, block, "Builder.add", "type_inferred"),
                (16, block, "Builder.build", "type_inferred"),
                (21, page, "Builder.add", "type_inferred"),
                (21, page, "Builder.build", "type_inferred"),
                (22, page, "Builder.add", "type_inferred"),  # a local declared Page.Builder
            ],
        )

    def test_a_type_argument_from_the_repository_keeps_the_name_candidates(self) -> None:
        # blocks.get(0): a List<Block>'s element may be a Block: ambiguous by name, not outside
        self.assertIn(
            ("Block.isEmpty", "ambiguous"), self.targets_at("src/com/acme/Sheet.java", 17)
        )


class DeclaredResultTests(SynchronousTestCase):
    def test_the_type_before_the_name_with_its_arguments(self) -> None:
        self.assertEqual(declared_result("public static Block of(String a)", "of"), "Block")
        self.assertEqual(
            declared_result("static <K, V> Map<K, List<V>> multimap(Map<K, V> m)", "multimap"),
            "Map<K,List,V>",
        )
        override = "@Override public String toString()"
        self.assertEqual(declared_result(override, "toString"), "String")

    def test_type_variables_constructors_arrays_and_primitives(self) -> None:
        self.assertEqual(declared_result("static <T> T checkNotNull(T ref)", "checkNotNull"), "?")
        self.assertEqual(declared_result("<R extends Node> R find(String id)", "find"), "?")
        self.assertIsNone(declared_result("public Block(String text)", "Block"))
        self.assertEqual(declared_result("String[] names()", "names"), "")
        self.assertEqual(declared_result("int size()", "size"), "")
