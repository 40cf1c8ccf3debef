"""CODEOWNERS: GitHub's pattern syntax, last-match-wins precedence and file search order."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.collectors import collect_file, collector_for
from eshu_mcp.query.local.index.parse.collectors.codeowners import (
    CODEOWNERS_COLLECTOR,
    codeowners_rank,
    collect_codeowners,
    compile_pattern,
    owners_for,
)


def owner_of(text: str, path: str):
    rules = [f for f in collect_codeowners("CODEOWNERS", text) if f.kind == "owner_rule"]
    winner = owners_for([(compile_pattern(r.name), r) for r in rules], path)
    return None if winner is None else winner.payload["owners"]


class PatternTests(SynchronousTestCase):
    def matches(self, pattern: str, path: str) -> bool:
        return bool(compile_pattern(pattern).match(path))

    def test_star_alone_matches_every_path(self):
        self.assertTrue(self.matches("*", "a/b/c.py"))

    def test_extension_glob_matches_at_any_depth(self):
        self.assertTrue(self.matches("*.js", "web/src/app.js"))
        self.assertFalse(self.matches("*.js", "web/src/app.jsx"))

    def test_trailing_slash_matches_the_directory_anywhere(self):
        self.assertTrue(self.matches("apps/", "apps/x.py"))
        self.assertTrue(self.matches("apps/", "deep/apps/x/y.py"))
        self.assertFalse(self.matches("apps/", "apps.py"))

    def test_leading_slash_anchors_to_the_root(self):
        self.assertTrue(self.matches("/build/logs/", "build/logs/a/b.log"))
        self.assertFalse(self.matches("/build/logs/", "src/build/logs/a.log"))

    def test_a_middle_slash_anchors_too(self):
        self.assertTrue(self.matches("docs/guide", "docs/guide/intro.md"))
        self.assertFalse(self.matches("docs/guide", "site/docs/guide/intro.md"))

    def test_dir_star_matches_only_direct_children(self):
        self.assertTrue(self.matches("docs/*", "docs/getting-started.md"))
        self.assertFalse(self.matches("docs/*", "docs/build-app/troubleshooting.md"))

    def test_double_star_spans_directories(self):
        self.assertTrue(self.matches("**/logs", "deeply/nested/logs/x.txt"))
        self.assertTrue(self.matches("**/logs", "logs"))
        self.assertTrue(self.matches("src/**/*.py", "src/a/b/c.py"))
        self.assertTrue(self.matches("src/**/*.py", "src/c.py"))
        self.assertFalse(self.matches("src/**/*.py", "lib/src/c.py"))

    def test_question_mark_is_one_character_but_never_a_slash(self):
        self.assertTrue(self.matches("file?.txt", "file1.txt"))
        self.assertFalse(self.matches("a?b", "a/b"))


class PrecedenceTests(SynchronousTestCase):
    RULES = (
        "# comment line\n"
        "*           @org/everyone\n"
        "*.go        @org/gophers  # trailing comment\n"
        "/cmd/       @alice\n"
        "/cmd/tool/\n"
    )

    def test_last_matching_rule_wins(self):
        self.assertEqual(owner_of(self.RULES, "README.md"), ["@org/everyone"])
        self.assertEqual(owner_of(self.RULES, "pkg/x.go"), ["@org/gophers"])
        self.assertEqual(owner_of(self.RULES, "cmd/main.go"), ["@alice"])

    def test_a_rule_without_owners_leaves_its_paths_unowned(self):
        self.assertEqual(owner_of(self.RULES, "cmd/tool/main.go"), [])

    def test_inline_comments_are_not_owners(self):
        [rule] = [f for f in collect_codeowners("CODEOWNERS", self.RULES) if f.name == "*.go"]
        self.assertEqual(rule.payload["owners"], ["@org/gophers"])
        self.assertEqual(rule.line, 3)

    def test_order_index_counts_rules_not_lines(self):
        rules = collect_codeowners("CODEOWNERS", self.RULES)
        self.assertEqual([r.payload["order_index"] for r in rules], [0, 1, 2, 3])

    def test_an_escaped_hash_starts_a_pattern(self):
        [rule] = collect_codeowners("CODEOWNERS", "\\#notes.md @bob\n")
        self.assertEqual(rule.kind, "owner_rule")
        self.assertTrue(compile_pattern(rule.name).match("#notes.md"))


class RejectedLineTests(SynchronousTestCase):
    def test_negation_and_ranges_are_errors_and_never_match(self):
        facts = collect_codeowners("CODEOWNERS", "!secret.txt @x\nfile[0-9].txt @y\n* @z\n")
        self.assertEqual(
            [(f.kind, f.line) for f in facts],
            [("owner_rule_error", 1), ("owner_rule_error", 2), ("owner_rule", 3)],
        )
        self.assertIn("negated", facts[0].payload["error"])

    def test_an_owner_that_is_not_a_user_team_or_email_is_an_error(self):
        [fact] = collect_codeowners("CODEOWNERS", "*.py not-an-owner\n")
        self.assertEqual(fact.kind, "owner_rule_error")

    def test_emails_and_nested_teams_are_owners(self):
        [fact] = collect_codeowners("CODEOWNERS", "* dev@example.com @org/team-a @user\n")
        self.assertEqual(fact.payload["owners"], ["dev@example.com", "@org/team-a", "@user"])


class LocationTests(SynchronousTestCase):
    def test_only_githubs_three_locations_are_collected(self):
        for path in (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"):
            self.assertIs(collector_for(path), CODEOWNERS_COLLECTOR)
        for path in ("src/CODEOWNERS", ".gitlab/CODEOWNERS", "docs/codeowners"):
            self.assertIsNot(collector_for(path), CODEOWNERS_COLLECTOR)

    def test_github_searches_dot_github_then_root_then_docs(self):
        ranked = sorted(
            ["docs/CODEOWNERS", "CODEOWNERS", ".github/CODEOWNERS"], key=codeowners_rank
        )
        self.assertEqual(ranked, [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"])

    def test_rows_carry_the_rule_as_json(self):
        [row] = collect_file(CODEOWNERS_COLLECTOR, "CODEOWNERS", "/src/ @a\n")
        self.assertEqual(row[:3], ("owner_rule", "/src/", 1))
