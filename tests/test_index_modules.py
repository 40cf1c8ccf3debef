"""Tests for eshu_mcp.query.local.index.resolve.modules: import specifiers to repository files."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.resolve.modules import ModuleIndex, go_module_paths

FILES = [
    (1, "pkg/__init__.py", "python"),
    (2, "pkg/sub/mod.py", "python"),
    (3, "pkg/sub/__init__.py", "python"),
    (4, "src/tool/cli.py", "python"),
    (5, "web/lib/util.ts", "typescript"),
    (6, "web/lib/index.tsx", "tsx"),
    (7, "web/app.ts", "typescript"),
    (8, "svc/server/server.go", "go"),
    (9, "svc/server/server_test.go", "go"),
    (10, "java/com/acme/Dog.java", "java"),
    (11, "c/include/util.h", "cpp"),
    (12, "c/main.c", "c"),
    (13, "rust/src/util.rs", "rust"),
    (14, "rust/src/lib.rs", "rust"),
    (15, "ruby/lib/base.rb", "ruby"),
    (16, "php/Models/User.php", "php"),
    (17, "kt/com/acme/Cat.kt", "kotlin"),
    (18, "rust/src/walk/entry.rs", "rust"),
]


class ModuleIndexTests(SynchronousTestCase):
    def setUp(self) -> None:
        go_mods = go_module_paths([("svc/go.mod", "module example.com/svc\n\ngo 1.22\n")])
        self.index = ModuleIndex(FILES, go_mods)

    def resolve(self, language, importer, module, name=None):
        return self.index.resolve(language, importer, module, name)

    def test_python_absolute_relative_submodule_and_src_layout(self) -> None:
        self.assertEqual(self.resolve("python", "x.py", "pkg.sub.mod"), 2)
        self.assertEqual(self.resolve("python", "pkg/sub/mod.py", ".", "mod"), 2)
        self.assertEqual(self.resolve("python", "pkg/sub/mod.py", "..", None), 1)
        self.assertEqual(self.resolve("python", "x.py", "pkg.sub", "mod"), 2)
        self.assertEqual(self.resolve("python", "x.py", "tool.cli"), 4)
        self.assertIsNone(self.resolve("python", "x.py", "os.path"))

    def test_python_module_inside_a_package_is_not_a_top_level_module(self) -> None:
        """Python 3 imports are absolute: a package's unittest.py is no top-level unittest."""
        index = ModuleIndex(
            [
                (1, "twisted/__init__.py", "python"),
                (2, "twisted/trial/__init__.py", "python"),
                (3, "twisted/trial/unittest.py", "python"),
                (4, "twisted/trial/_synctest.py", "python"),
                (5, "scripts/helper.py", "python"),
                (6, "src/app/__init__.py", "python"),
                (7, "src/app/models.py", "python"),
            ],
            {},
        )
        self.assertIsNone(index.resolve("python", "twisted/trial/_synctest.py", "unittest", None))
        self.assertIsNone(index.resolve("python", "x.py", "trial.unittest", None))
        self.assertEqual(index.resolve("python", "twisted/x.py", "twisted.trial.unittest", None), 3)
        # folders that are not packages are search-path roots: a script's sibling, src/
        self.assertEqual(index.resolve("python", "scripts/run.py", "helper", None), 5)
        self.assertEqual(index.resolve("python", "tests/t.py", "app.models", None), 7)
        self.assertEqual(index.resolve("python", "tests/t.py", "app", "models"), 7)

    def test_javascript_probes_extensions_and_index_files(self) -> None:
        self.assertEqual(self.resolve("typescript", "web/app.ts", "./lib/util"), 5)
        self.assertEqual(self.resolve("typescript", "web/app.ts", "./lib/util.js"), 5)
        self.assertEqual(self.resolve("typescript", "web/app.ts", "./lib"), 6)
        self.assertIsNone(self.resolve("typescript", "web/app.ts", "react"))

    def test_a_bare_specifier_is_a_path_from_the_nearest_tsconfig_folder(self) -> None:
        index = ModuleIndex(
            [
                (1, "site/tsconfig.json", "json"),
                (2, "site/components/index.ts", "typescript"),
                (3, "site/components/icons/index.tsx", "tsx"),
                (4, "site/pages/home.tsx", "tsx"),
                (5, "site/src/lib/util.ts", "typescript"),
                (6, "other/app.ts", "typescript"),
            ],
            {},
        )
        home = "site/pages/home.tsx"
        self.assertEqual(index.resolve("tsx", home, "components", "Code"), 2)  # baseUrl "."
        self.assertEqual(index.resolve("tsx", home, "components/icons", "CopyIcon"), 3)
        self.assertEqual(index.resolve("tsx", home, "@/lib/util", "f"), 5)  # @/* -> src/*
        self.assertEqual(index.resolve("tsx", home, "lib/util", "f"), 5)
        # a package, and a folder no tsconfig governs
        self.assertIsNone(index.resolve("tsx", home, "react", "useState"))
        self.assertIsNone(index.resolve("tsx", home, "@radix-ui/react-popover", "*"))
        self.assertIsNone(index.resolve("typescript", "other/app.ts", "components", "Code"))

    def test_a_registry_rewrite_turns_a_package_import_into_its_lib_path(self) -> None:
        index = ModuleIndex([(1, "lib/src/units.dart", "dart"), (2, "lib/geo.dart", "dart")], {})
        self.assertEqual(
            index.resolve("dart", "lib/geo.dart", "package:geo/src/units.dart", "*"), 1
        )
        self.assertEqual(index.resolve("dart", "test/t.dart", "package:geo/geo.dart", "*"), 2)
        self.assertEqual(index.resolve("dart", "lib/geo.dart", "src/units.dart", "*"), 1)
        self.assertIsNone(index.resolve("dart", "lib/geo.dart", "package:test/test.dart", "*"))

    def test_go_import_path_maps_through_go_mod(self) -> None:
        self.assertEqual(self.resolve("go", "svc/main.go", "example.com/svc/server"), 8)
        self.assertEqual(self.index.go_package_dir("example.com/svc/server"), "svc/server")
        self.assertIsNone(self.resolve("go", "svc/main.go", "fmt"))

    def test_a_rust_files_declared_modules_are_beside_a_root_or_in_its_own_folder(
        self,
    ) -> None:  # ``mod util;`` in lib.rs, ``mod entry;`` in walk.rs
        self.assertEqual(self.resolve("rust", "rust/src/lib.rs", "self::util"), 13)
        self.assertEqual(self.resolve("rust", "rust/src/walk.rs", "self::entry"), 18)

    def test_java_c_rust_ruby_php(self) -> None:
        self.assertEqual(self.resolve("java", "x/A.java", "com.acme", "Dog"), 10)
        self.assertEqual(self.resolve("c", "c/main.c", "include/util.h"), 11)
        self.assertEqual(self.resolve("c", "c/main.c", "util.h"), 11)
        self.assertEqual(self.resolve("rust", "rust/src/lib.rs", "crate::util", "helper"), 13)
        self.assertEqual(self.resolve("ruby", "ruby/lib/greeter.rb", "base"), 15)
        self.assertEqual(self.resolve("php", "php/x.php", "App\\Models", "User"), 16)

    def test_java_static_imports_and_nested_classes_name_the_class_file(self) -> None:
        # import static com.acme.Dog.bark / com.acme.Dog.* / import com.acme.Dog.Collar
        self.assertEqual(self.resolve("java", "x/A.java", "com.acme.Dog", "bark"), 10)
        self.assertEqual(self.resolve("java", "x/A.java", "com.acme.Dog", "*"), 10)
        self.assertEqual(self.resolve("java", "x/A.java", "com.acme.Dog.Collar", "size"), 10)
        # the JDK's classes are not the repository's
        self.assertIsNone(self.resolve("java", "x/A.java", "java.lang.String", "join"))
        self.assertIsNone(self.resolve("java", "x/A.java", "com.acme", "Cat"))
        # Kotlin imports keep their own rule (a member of a class is not looked for)
        self.assertIsNone(self.resolve("kotlin", "x/A.kt", "com.acme.Cat", "meow"))
        self.assertEqual(self.resolve("kotlin", "x/A.kt", "com.acme", "Cat"), 17)
