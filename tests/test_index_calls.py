"""Tests for eshu_mcp.query.local.index.resolve.calls: extension methods, Go package calls."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.resolve.bindings import go_package_name
from tests.indexed import indexed_reader

FILES = {
    "src/Slugs.cs": (
        "namespace Shop {\n  public static class StringExtensions {\n"
        "    public static string ToSlug(this string value) { return value.ToLower(); }\n"
        "  }\n}\n"
    ),
    "src/Page.cs": (
        "namespace Shop {\n  public class Page {\n"
        "    public string Url(string name) { return name.ToSlug(); }\n  }\n}\n"
    ),
    "src/ext.kt": (
        "package shop\nfun String.slug(): String = this.lowercase()\n"
        "fun url(name: String): String = name.slug()\n"
    ),
}


class ExtensionMethodTests(SynchronousTestCase):
    def test_a_call_on_a_value_of_the_extended_type_runs_the_extension(self) -> None:
        conn = indexed_reader(self, FILES)
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT s.qualified_name, t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }
        self.assertEqual(
            edges,
            {
                # name.ToSlug() on a string: the extension, not a library method
                ("Page.Url", "StringExtensions.ToSlug", "type_inferred"),
                ("url", "slug", "type_inferred"),
            },
        )


class PropertyTypeTests(SynchronousTestCase):
    def test_a_kotlin_property_types_the_calls_made_on_it_in_the_classs_methods(self) -> None:
        repo_kt = (
            "package shop\nclass Repo {\n    fun save(x: Int) {}\n}\n"
            "class Audit {\n    fun save(x: Int) {}\n}\n"
        )
        cart_kt = (
            "package shop\nclass Cart(private val repo: Repo) {\n    val audit = Audit()\n"
            "    fun add(x: Int) {\n        repo.save(x)\n        audit.save(x)\n    }\n}\n"
        )
        conn = indexed_reader(self, {"src/Repo.kt": repo_kt, "src/Cart.kt": cart_kt})
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT e.line_number, t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }
        # without the properties' types both calls were ambiguous between the two saves
        self.assertEqual(
            edges,
            {
                (3, "Audit", "scope_unique_name"),  # val audit = Audit()
                (5, "Repo.save", "type_inferred"),
                (6, "Audit.save", "type_inferred"),
            },
        )


ALIASES = {
    "src/store.ts": (
        "export class Store {\n  save(x: number) {}\n}\n"
        "export class Audit {\n  save(x: number) {}\n}\n"
        "export function flush() {}\n"
    ),
    "src/use.ts": (
        "import { Store, flush } from './store';\n"
        "export function run() {\n"
        "  const store = new Store();\n"
        "  const save = store.save;\n"
        "  const done = flush;\n"
        "  save(1);\n"
        "  done();\n"
        "}\n"
        "export class Page {\n"
        "  render() {}\n"
        "  later() {\n    const draw = this.render;\n    draw();\n  }\n"
        "}\n"
    ),
}


class AliasTests(SynchronousTestCase):
    def test_a_local_bound_to_a_function_or_method_calls_it(self) -> None:
        conn = indexed_reader(self, ALIASES)
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT s.qualified_name, t.qualified_name FROM edges e"
                " JOIN entities s ON s.entity_id = e.source_id"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
                " AND t.entity_type = 'Function'"
            )
        }
        self.assertIn(("run", "Store.save"), edges)  # not Audit.save: store is a Store
        self.assertNotIn(("run", "Audit.save"), edges)
        self.assertIn(("run", "flush"), edges)
        self.assertIn(("Page.later", "Page.render"), edges)


RENAMED = {
    "src/hono-base.ts": ("class Hono {\n  fetch(x: number) {}\n}\nexport { Hono as HonoBase };\n"),
    "src/hono.ts": (
        "import { HonoBase } from './hono-base';\n"
        "export class Hono extends HonoBase {\n  route() {}\n}\n"
        "export function serve() {\n  const app = new HonoBase();\n  app.fetch(1);\n}\n"
    ),
}


class RenamedExportTests(SynchronousTestCase):
    def test_an_export_under_another_name_reaches_the_class(self) -> None:
        conn = indexed_reader(self, RENAMED)

        def edges(kind: str) -> set[tuple]:
            return {
                tuple(row)
                for row in conn.execute(
                    "SELECT s.relative_path, s.qualified_name, t.relative_path, t.qualified_name"
                    " FROM edges e JOIN entities s ON s.entity_id = e.source_id"
                    " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = ?",
                    (kind,),
                )
            }

        self.assertIn(("src/hono.ts", "Hono", "src/hono-base.ts", "Hono"), edges("INHERITS"))
        calls = edges("CALLS")
        self.assertIn(("src/hono.ts", "serve", "src/hono-base.ts", "Hono.fetch"), calls)
        # renaming its own export is no import: no module '' for the file to import itself by
        self.assertEqual(
            conn.execute("SELECT COUNT(*) FROM modules WHERE name = ''").fetchone()[0], 0
        )


GO_PACKAGES = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "store/store.go": (
        "package store\n\n"
        "type Failure struct{ msg string }\n\n"
        "func (f *Failure) Error() string { return f.msg }\n\n"
        "func (f *Failure) Reset() {}\n\n"
        "func Open(path string) *Failure { return &Failure{msg: path} }\n\n"
        "func ToUpper(s string) string { return s }\n"
    ),
    "web/web.go": (
        "package web\n\n"
        "import (\n"
        '\t"net/http"\n\n'
        '\t"example.com/shop/store"\n'
        '\tdb "example.com/shop/store"\n'
        '\t"github.com/mattn/go-colorable"\n'
        '\t. "strings"\n'
        '\t_ "embed"\n'
        ")\n\n"
        "func Serve(w http.ResponseWriter, r *http.Request) {\n"
        '\thttp.Error(w, "no", 500)\n'  # line 14
        '\tstore.Open("a")\n'
        '\tdb.Open("b")\n'
        "\tstore.Reset()\n"
        "\tdb.Reset()\n"
        "\tcolorable.Reset()\n"
        "\thttp.DefaultClient.Reset()\n"
        '\tToUpper("x")\n'
        "}\n"
    ),
}


class GoPackageCallTests(SynchronousTestCase):
    def test_a_package_qualified_call_never_falls_back_to_a_method_by_name(self) -> None:
        conn = indexed_reader(self, GO_PACKAGES)
        edges = {
            tuple(row)
            for row in conn.execute(
                "SELECT e.line_number, t.qualified_name, e.resolution_method FROM edges e"
                " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
            )
        }
        unresolved = {
            tuple(row)
            for row in conn.execute(
                "SELECT c.line_number, c.full_name, u.reason FROM unresolved_calls u"
                " JOIN call_sites c USING (call_id)"
            )
        }
        # the store package's functions, under its name and under an alias
        self.assertEqual(edges, {(15, "Open", "import_binding"), (16, "Open", "import_binding")})
        self.assertEqual(
            unresolved,
            {
                (14, "http.Error", "external"),  # not Failure.Error
                (17, "store.Reset", "no_definition"),  # the package has no function Reset:
                (18, "db.Reset", "no_definition"),  # not the method Failure.Reset
                (19, "colorable.Reset", "external"),  # go-colorable's package is colorable
                (20, "http.DefaultClient.Reset", "external"),  # a value of net/http
                (21, "ToUpper", "external"),  # strings', dot-imported; not store's
            },
        )

    def test_an_import_path_no_package_can_be_named_binds_its_conventional_name(self) -> None:
        self.assertEqual(go_package_name("github.com/mattn/go-isatty"), "isatty")
        self.assertEqual(go_package_name("github.com/dgrijalva/jwt-go"), "jwt")
        self.assertEqual(go_package_name("github.com/satori/go.uuid"), "uuid")
        self.assertEqual(go_package_name("example.com/yaml.v2"), "yaml")
        self.assertEqual(go_package_name("example.com/mini-redis"), "miniredis")
        self.assertEqual(go_package_name("github.com/google/uuid"), "uuid")
