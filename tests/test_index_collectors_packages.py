"""Package manifests and lockfiles: declared ranges, pins, direct vs transitive, edges."""

import json

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.collectors import collect_file, collector_for
from eshu_mcp.query.local.index.parse.collectors.package_identity import package_identity
from eshu_mcp.query.local.index.parse.collectors.packages_native import (
    collect_cargo_lock,
    collect_cargo_toml,
    collect_go_mod,
    collect_go_sum,
)
from eshu_mcp.query.local.index.parse.collectors.packages_npm import (
    collect_package_json,
    collect_package_lock,
    collect_pnpm_lock,
    collect_yarn_lock,
)
from eshu_mcp.query.local.index.parse.collectors.packages_other import (
    collect_composer_json,
    collect_composer_lock,
    collect_gemfile_lock,
    collect_pom,
)
from eshu_mcp.query.local.index.parse.collectors.packages_python import (
    collect_poetry_lock,
    collect_pyproject,
    collect_requirements,
    collect_uv_lock,
    parse_requirement,
)


def by_kind(facts, kind):
    return {f.payload["normalized_name"]: f for f in facts if f.kind == kind}


def declared(facts):
    return by_kind(facts, "package_dependency")


def locked(facts):
    return by_kind(facts, "package_locked")


class IdentityTests(SynchronousTestCase):
    def test_ids_follow_eshus_canonical_form(self):
        self.assertEqual(
            package_identity("pypi", "Django_Debug.Toolbar")["package_id"],
            "pypi://pypi.org/simple/django-debug-toolbar",
        )
        scoped = package_identity("npm", "@Babel/Core")
        self.assertEqual(scoped["package_id"], "npm://registry.npmjs.org/@babel/core")
        self.assertEqual((scoped["namespace"], scoped["purl"]), ("babel", "pkg:npm/%40babel/core"))
        maven = package_identity("maven", "guava", namespace="com.google.guava")
        self.assertEqual(
            maven["package_id"], "maven://repo.maven.apache.org/maven2/com.google.guava:guava"
        )
        self.assertEqual(
            package_identity("gomod", "github.com/a/b")["purl"], "pkg:golang/github.com/a/b"
        )


class NpmTests(SynchronousTestCase):
    def test_optional_dependencies_win_over_the_same_name_in_dependencies(self):
        text = json.dumps(
            {
                "name": "app",
                "dependencies": {"a": "^1", "b": "2.0.0"},
                "optionalDependencies": {"a": "^1"},
                "peerDependencies": {"react": ">=17"},
                "devDependencies": {"jest": "29"},
            },
            indent=2,
        )
        facts = declared(collect_package_json("package.json", text))
        self.assertEqual(
            {name: f.payload["dependency_type"] for name, f in facts.items()},
            {"a": "optional", "b": "runtime", "react": "peer", "jest": "dev"},
        )
        self.assertTrue(facts["a"].payload["optional"])
        self.assertEqual(facts["b"].payload["declared_by"], "npm://registry.npmjs.org/app")
        self.assertEqual(facts["jest"].line, 14)

    def test_lock_v3_marks_root_dependencies_direct_and_nested_copies_transitive(self):
        text = json.dumps(
            {
                "lockfileVersion": 3,
                "packages": {
                    "": {"dependencies": {"a": "^1"}},
                    "node_modules/a": {"version": "1.0.0", "dependencies": {"b": "^2"}},
                    "node_modules/b": {"version": "2.1.0"},
                    "node_modules/a/node_modules/b": {"version": "1.9.0"},
                    "node_modules/ws-pkg": {"resolved": "packages/ws", "link": True},
                    "packages/ws": {"name": "ws-pkg", "version": "0.0.1"},
                },
            }
        )
        facts = [f for f in collect_package_lock("package-lock.json", text)]
        pins = sorted(
            (f.payload["normalized_name"], f.payload["version"], f.payload["direct"]) for f in facts
        )
        self.assertEqual(pins, [("a", "1.0.0", True), ("b", "1.9.0", False), ("b", "2.1.0", False)])
        [a] = [f for f in facts if f.payload["normalized_name"] == "a"]
        self.assertEqual(a.payload["dependencies"], [["npm://registry.npmjs.org/b", "^2"]])

    def test_lock_v1_nests_requires_and_leaves_top_level_directness_to_the_manifest(self):
        text = json.dumps(
            {
                "lockfileVersion": 1,
                "dependencies": {
                    "a": {
                        "version": "1.0.0",
                        "requires": {"b": "^1"},
                        "dependencies": {"b": {"version": "1.2.0"}},
                    }
                },
            }
        )
        facts = locked(collect_package_lock("package-lock.json", text))
        self.assertIsNone(facts["a"].payload["direct"])
        self.assertIs(facts["b"].payload["direct"], False)

    def test_yarn_classic_and_berry_entries(self):
        classic = (
            "# yarn lockfile v1\n\n"
            '"@s/a@^1.0.0", "@s/a@^1.1.0":\n'
            '  version "1.2.0"\n'
            "  dependencies:\n"
            '    b "^2"\n\n'
            "b@^2:\n"
            '  version "2.0.1"\n'
        )
        facts = locked(collect_yarn_lock("yarn.lock", classic))
        self.assertEqual(facts["@s/a"].payload["version"], "1.2.0")
        self.assertEqual(facts["@s/a"].line, 3)
        self.assertEqual(
            facts["@s/a"].payload["dependencies"], [["npm://registry.npmjs.org/b", "^2"]]
        )
        berry = (
            "__metadata:\n  version: 6\n\n"
            '"app@workspace:.":\n  version: 0.0.0-use.local\n\n'
            '"lodash@npm:^4.17.0":\n  version: 4.17.21\n  dependencies:\n    dep: "npm:^1"\n'
        )
        self.assertEqual(
            {
                n: f.payload["version"]
                for n, f in locked(collect_yarn_lock("yarn.lock", berry)).items()
            },
            {"lodash": "4.17.21"},
        )

    def test_pnpm_v9_importers_and_snapshots(self):
        text = (
            "lockfileVersion: '9.0'\n"
            "importers:\n  .:\n    dependencies:\n      a:\n        specifier: ^1\n"
            "        version: 1.0.0(peer@2.0.0)\n"
            "packages:\n  a@1.0.0:\n    resolution: {integrity: x}\n"
            "  '@s/b@2.0.0':\n    resolution: {integrity: y}\n"
            "snapshots:\n  a@1.0.0:\n    dependencies:\n      '@s/b': 2.0.0\n  '@s/b@2.0.0': {}\n"
        )
        facts = locked(collect_pnpm_lock("pnpm-lock.yaml", text))
        self.assertEqual(
            (facts["a"].payload["version"], facts["a"].payload["direct"]), ("1.0.0", True)
        )
        self.assertEqual(facts["@s/b"].payload["direct"], False)
        self.assertEqual(
            facts["a"].payload["dependencies"], [["npm://registry.npmjs.org/@s/b", "2.0.0"]]
        )

    def test_pnpm_v6_slash_keys(self):
        text = (
            "lockfileVersion: '6.0'\ndependencies:\n  a:\n    specifier: ^1\n    version: 1.0.0\n"
            "packages:\n  /a@1.0.0:\n    dev: false\n"
        )
        facts = locked(collect_pnpm_lock("pnpm-lock.yaml", text))
        self.assertEqual(
            (facts["a"].payload["version"], facts["a"].payload["direct"]), ("1.0.0", True)
        )


class PythonTests(SynchronousTestCase):
    def test_pep508_names_specifiers_urls_and_markers(self):
        self.assertEqual(
            parse_requirement("requests[socks] >=2.0, <3 ; python_version < '3.8'"),
            ("requests", ">=2.0, <3", "python_version < '3.8'"),
        )
        self.assertEqual(
            parse_requirement("pkg @ https://example.com/pkg.whl"),
            ("pkg", "@ https://example.com/pkg.whl", ""),
        )

    def test_requirements_continuations_hashes_includes_and_editables(self):
        text = (
            "# top comment\n"
            "-r base.txt\n"
            "--index-url https://example.com/simple\n"
            "black==24.3.0 \\\n    --hash=sha256:abc\n"
            "flask>=3  # web\n"
            "-e git+https://example.com/x.git#egg=xlib\n"
            "-e ./local\n"
        )
        facts = collect_requirements("requirements-dev.txt", text)
        self.assertEqual(
            [(f.kind, f.name) for f in facts if f.kind == "package_include"],
            [("package_include", "base.txt")],
        )
        pins = declared(facts)
        self.assertEqual(
            {n: (f.payload["dependency_range"], f.line) for n, f in pins.items()},
            {
                "black": ("==24.3.0", 4),
                "flask": (">=3", 6),
                "xlib": ("@ git+https://example.com/x.git", 7),
            },
        )

    def test_pyproject_poetry_tables_skip_the_python_constraint(self):
        text = (
            '[tool.poetry]\nname = "svc"\nversion = "1.0"\n'
            '[tool.poetry.dependencies]\npython = "^3.11"\n'
            'httpx = {version = "^0.27", optional = true, markers = "sys_platform == \'linux\'"}\n'
            '[tool.poetry.group.test.dependencies]\npytest = "^8"\n'
        )
        facts = declared(collect_pyproject("pyproject.toml", text))
        self.assertEqual(set(facts), {"httpx", "pytest"})
        self.assertEqual(facts["httpx"].payload["dependency_type"], "optional")
        self.assertEqual(facts["httpx"].payload["marker"], "sys_platform == 'linux'")
        self.assertEqual(facts["pytest"].payload["group"], "test")
        self.assertEqual(facts["httpx"].line, 6)

    def test_poetry_lock_records_edges_and_dev_category(self):
        text = (
            '[[package]]\nname = "a"\nversion = "1.0"\ncategory = "dev"\n\n'
            '[package.dependencies]\nb = ">=2"\nc = {version = "^1", optional = true}\n\n'
            '[[package]]\nname = "b"\nversion = "2.1"\n'
        )
        facts = locked(collect_poetry_lock("poetry.lock", text))
        self.assertEqual(facts["a"].payload["dependency_type"], "dev")
        self.assertEqual(
            facts["a"].payload["dependencies"],
            [["pypi://pypi.org/simple/b", ">=2"], ["pypi://pypi.org/simple/c", "^1"]],
        )
        self.assertEqual((facts["a"].line, facts["b"].line), (2, 11))

    def test_uv_lock_direct_ones_are_the_projects_own_dependencies(self):
        text = (
            'version = 1\n[[package]]\nname = "me"\nversion = "0.1"\nsource = { virtual = "." }\n'
            'dependencies = [{ name = "a" }]\n[package.dev-dependencies]\ndev = [{ name = "t" }]\n'
            '[[package]]\nname = "a"\nversion = "1.0"\ndependencies = [{ name = "b" }]\n'
            '[[package]]\nname = "b"\nversion = "2.0"\n[[package]]\nname = "t"\nversion = "3.0"\n'
        )
        facts = locked(collect_uv_lock("uv.lock", text))
        self.assertEqual(
            {n: f.payload["direct"] for n, f in facts.items()}, {"a": True, "b": False, "t": True}
        )


class GoAndCargoTests(SynchronousTestCase):
    def test_go_mod_blocks_indirect_markers_and_replacements(self):
        text = (
            "module example.com/m // the module\n\ngo 1.22\n\n"
            "require (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/y v0.1.0 // indirect\n)\n"
            "require github.com/c/d v2.0.0+incompatible\n"
            "replace github.com/a/b v1.2.3 => ./fork\n"
        )
        facts = collect_go_mod("go.mod", text)
        self.assertEqual(set(declared(facts)), {"github.com/a/b", "github.com/c/d"})
        pins = locked(facts)
        self.assertEqual(
            {n: f.payload["direct"] for n, f in pins.items()},
            {"github.com/a/b": True, "golang.org/x/y": False, "github.com/c/d": True},
        )
        self.assertEqual(declared(facts)["github.com/a/b"].payload["replaced_by"], "./fork")

    def test_go_sum_keeps_one_pin_per_module_version(self):
        text = "a v1 h1:x\na v1/go.mod h1:y\nb v2/go.mod h1:z\n"
        self.assertEqual([f.payload["version"] for f in collect_go_sum("go.sum", text)], ["v1"])

    def test_cargo_renamed_target_and_workspace_dependencies(self):
        text = (
            '[package]\nname = "c"\nversion = "0.1.0"\n\n[dependencies]\n'
            'j = { package = "serde_json", version = "1" }\n'
            "[target.'cfg(windows)'.dependencies]\nwinapi = \"0.3\"\n"
            '[workspace]\nmembers = ["x"]\n[workspace.dependencies]\nanyhow = "1"\n'
        )
        facts = collect_cargo_toml("Cargo.toml", text)
        deps = declared(facts)
        self.assertEqual(set(deps), {"serde_json", "winapi", "anyhow"})
        self.assertEqual(deps["winapi"].payload["target"], "cfg(windows)")
        self.assertEqual(deps["anyhow"].payload["dependency_type"], "workspace")
        self.assertEqual(by_kind(facts, "package_project")["c"].payload["workspaces"], ["x"])

    def test_cargo_lock_versioned_dependency_names(self):
        text = (
            '[[package]]\nname = "me"\nversion = "0.1.0"\ndependencies = ["a 1.0.0"]\n\n'
            '[[package]]\nname = "a"\nversion = "1.0.0"\nsource = "registry+x"\n'
            'dependencies = ["b"]\n\n'
            '[[package]]\nname = "b"\nversion = "0.2.0"\nsource = "registry+x"\n'
        )
        facts = locked(collect_cargo_lock("Cargo.lock", text))
        self.assertEqual(
            {n: f.payload["direct"] for n, f in facts.items()}, {"a": True, "b": False}
        )


class JvmRubyPhpTests(SynchronousTestCase):
    POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <groupId>g</groupId><artifactId>app</artifactId><version>1</version>
  <properties><lib.version>2.5</lib.version><alias>${lib.version}</alias></properties>
  <dependencyManagement><dependencies>
    <dependency><groupId>m</groupId><artifactId>managed</artifactId><version>9</version></dependency>
  </dependencies></dependencyManagement>
  <dependencies>
    <dependency><groupId>l</groupId><artifactId>lib</artifactId><version>${alias}</version></dependency>
    <dependency><groupId>m</groupId><artifactId>managed</artifactId></dependency>
    <dependency><groupId>t</groupId><artifactId>tst</artifactId><version>1</version>
      <scope>test</scope><optional>true</optional></dependency>
  </dependencies>
</project>"""

    def test_pom_properties_managed_versions_and_scopes(self):
        facts = declared(collect_pom("pom.xml", self.POM))
        self.assertEqual(
            {
                n: (f.payload["dependency_range"], f.payload["dependency_type"])
                for n, f in facts.items()
            },
            {"lib": ("2.5", "compile"), "managed": ("9", "compile"), "tst": ("1", "dev")},
        )
        self.assertTrue(facts["tst"].payload["optional"])
        self.assertEqual(facts["managed"].payload["namespace"], "m")

    def test_gemfile_lock_platform_variants_and_direct_markers(self):
        text = (
            "GIT\n  remote: https://example.com/x.git\n  specs:\n    xgem (0.1.0)\n\n"
            "GEM\n  remote: https://rubygems.org/\n  specs:\n"
            "    nokogiri (1.16.0-x86_64-linux)\n      racc (~> 1.4)\n"
            "    nokogiri (1.16.0-arm64-darwin)\n      racc (~> 1.4)\n    racc (1.7.3)\n\n"
            "DEPENDENCIES\n  nokogiri (>= 1.15)\n  xgem!\n"
        )
        facts = collect_gemfile_lock("Gemfile.lock", text)
        self.assertEqual(
            {n: (f.payload["version"], f.payload["direct"]) for n, f in locked(facts).items()},
            {"xgem": ("0.1.0", True), "nokogiri": ("1.16.0", True), "racc": ("1.7.3", False)},
        )
        self.assertEqual(sum(1 for f in facts if f.kind == "package_locked"), 3)
        self.assertEqual(declared(facts)["nokogiri"].line, 16)

    def test_composer_platform_requirements_are_not_packages(self):
        manifest = json.dumps(
            {"name": "a/b", "require": {"php": ">=8", "ext-json": "*", "c/d": "^1"}}
        )
        self.assertEqual(set(declared(collect_composer_json("composer.json", manifest))), {"c/d"})
        lock = json.dumps(
            {
                "packages": [
                    {"name": "c/d", "version": "v1.2.0", "require": {"php": "*", "e/f": "^2"}}
                ]
            }
        )
        [pin] = collect_composer_lock("composer.lock", lock)
        self.assertEqual(pin.payload["version"], "1.2.0")
        self.assertEqual(pin.payload["dependencies"], [["composer://repo.packagist.org/e/f", "^2"]])


class DispatchTests(SynchronousTestCase):
    def test_file_names_pick_their_reader(self):
        expected = {
            "package.json": "package_manifest",
            "svc/pyproject.toml": "package_manifest",
            "requirements.txt": "package_manifest",
            "requirements/base.txt": "package_manifest",
            "requirements-dev.in": "package_manifest",
            "Cargo.lock": "package_lockfile",
            "a/Gemfile.lock": "package_lockfile",
            "notes.txt": None,
            "node_modules/x/package.json": None,
            "vendor/pkg/go.mod": None,
        }
        for path, artifact_type in expected.items():
            collector = collector_for(path)
            self.assertEqual(collector.artifact_type if collector else None, artifact_type, path)

    def test_a_malformed_file_becomes_one_collect_error_fact(self):
        collector = collector_for("package.json")
        [row] = collect_file(collector, "package.json", "{not json")
        self.assertEqual(row[0], "collect_error")
        self.assertIn("JSONDecodeError", json.loads(row[3])["error"])
        [row] = collect_file(collector_for("pom.xml"), "pom.xml", "<project><unclosed></project>")
        self.assertEqual(row[0], "collect_error")
        [row] = collect_file(collector_for("Cargo.lock"), "Cargo.lock", "[[package]\nname=")
        self.assertEqual(row[0], "collect_error")
