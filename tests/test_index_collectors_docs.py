"""Documentation: Markdown and reST sections, links and code mentions."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.collectors import collector_for
from eshu_mcp.query.local.index.parse.collectors.docs import (
    collect_markdown,
    collect_rst,
    mention_kind,
)


def kinds(facts, kind):
    return [f for f in facts if f.kind == kind]


def sections(facts):
    return [(f.name, f.payload["level"], f.line) for f in kinds(facts, "documentation_section")]


def mentions(facts):
    return [
        (f.name, f.payload["mention_kind"], f.line)
        for f in kinds(facts, "documentation_entity_mention")
    ]


class MarkdownTests(SynchronousTestCase):
    TEXT = (
        "# Title #\n"
        "Intro with `run_job()` and `x`.\n"
        "\n"
        "Sub heading\n"
        "-----------\n"
        "```sh\n"
        "# not a heading `inside_fence()`\n"
        "```\n"
        "    # indented code is still text here\n"
        "## Title\n"
        "See [guide](docs/guide.md#setup), [site](https://example.com) and [top](#title).\n"
        "Edit src/app/main.py or https://example.com/a/b.py to change it.\n"
    )

    def test_atx_and_setext_headings_outside_fences(self):
        facts = collect_markdown("README.md", self.TEXT)
        self.assertEqual(
            sections(facts), [("Title", 1, 1), ("Sub heading", 2, 4), ("Title", 2, 10)]
        )
        [document] = kinds(facts, "documentation_document")
        self.assertEqual(document.payload["title"], "Title")
        self.assertEqual(document.payload["sections"], 3)

    def test_repeated_headings_get_githubs_numbered_anchors(self):
        anchors = [
            f.payload["section_id"]
            for f in kinds(collect_markdown("README.md", self.TEXT), "documentation_section")
        ]
        self.assertEqual(anchors, ["README.md#title", "README.md#sub-heading", "README.md#title-1"])

    def test_links_are_classified_and_repository_links_are_path_mentions(self):
        facts = collect_markdown("README.md", self.TEXT)
        self.assertEqual(
            [(f.name, f.payload["target_kind"]) for f in kinds(facts, "documentation_link")],
            [
                ("docs/guide.md#setup", "repository_path"),
                ("https://example.com", "external"),
                ("#title", "anchor"),
            ],
        )
        self.assertEqual(
            kinds(facts, "documentation_link")[0].payload["section_id"], "README.md#title-1"
        )

    def test_code_spans_and_prose_paths_are_mentions_but_urls_and_fences_are_not(self):
        self.assertEqual(
            mentions(collect_markdown("README.md", self.TEXT)),
            [
                ("run_job()", "identifier", 2),
                ("x", "identifier", 2),
                ("docs/guide.md", "path", 11),
                ("src/app/main.py", "path", 12),
            ],
        )


class RestructuredTextTests(SynchronousTestCase):
    TEXT = (
        "=====\n"
        "Title\n"
        "=====\n"
        "\n"
        "Part\n"
        "====\n"
        "\n"
        ":func:`pkg.run` and :class:`~pkg.Job` and :meth:`label <pkg.Job.start>`.\n"
        "Use ``config.yaml`` and ``make build`` here::\n"
        "\n"
        "    not_a_heading()\n"
        "    =====\n"
        "\n"
        "Sub\n"
        "---\n"
        "See `the docs <https://example.com>`_.\n"
        ".. _target: other/page.rst\n"
    )

    def test_levels_follow_the_order_adornments_first_appear(self):
        self.assertEqual(
            sections(collect_rst("doc.rst", self.TEXT)),
            [("Title", 1, 2), ("Part", 2, 5), ("Sub", 3, 14)],
        )

    def test_roles_and_literals_are_mentions_and_literal_blocks_are_skipped(self):
        found = mentions(collect_rst("doc.rst", self.TEXT))
        self.assertEqual(
            found,
            [
                ("pkg.run", "identifier", 8),
                ("pkg.Job", "identifier", 8),
                ("pkg.Job.start", "identifier", 8),
                ("config.yaml", "path", 9),
                ("other/page.rst", "path", 17),
            ],
        )
        roles = [
            f.payload["written_as"]
            for f in kinds(collect_rst("doc.rst", self.TEXT), "documentation_entity_mention")
        ]
        self.assertEqual(roles[:3], ["role", "role", "role"])

    def test_links_and_targets(self):
        facts = collect_rst("doc.rst", self.TEXT)
        self.assertEqual(
            [(f.name, f.payload["target_kind"]) for f in kinds(facts, "documentation_link")],
            [("https://example.com", "external"), ("other/page.rst", "repository_path")],
        )


class MentionKindTests(SynchronousTestCase):
    def test_what_the_index_could_name(self):
        self.assertEqual(mention_kind("pkg/mod.py"), "path")
        self.assertEqual(mention_kind("setup.py"), "path")
        self.assertEqual(mention_kind("Foo::bar"), "identifier")
        self.assertEqual(mention_kind("a.b.c()"), "identifier")
        for text in ("pip install x", "--flag", "https://x/y.py", "", "x" * 300):
            self.assertIsNone(mention_kind(text), text)

    def test_doc_suffixes_pick_the_documentation_collector(self):
        for path in ("README.md", "docs/a.rst", "x.markdown", "y.mdx"):
            self.assertEqual(collector_for(path).artifact_type, "documentation")
        self.assertIsNone(collector_for("notes.txt"))


class LinkMentionTests(SynchronousTestCase):
    def test_file_links_are_mentions_and_site_routes_and_folders_are_not(self):
        text = "[a](/api/reference) [b](img/logo.png?raw=1) [c](docs/) [d](../setup.cfg#L3)\n"
        self.assertEqual(
            mentions(collect_markdown("docs/x.md", text)),
            [("img/logo.png", "path", 1), ("../setup.cfg", "path", 1)],
        )
