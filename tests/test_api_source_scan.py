"""
Tests for entity-source search by file scan (``source_scan``): UTF-8 byte spans, LIKE's
ASCII-only case rule, and the routes that use it.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.text_scan import ScannedFile, fold
from tests.test_api_code_common import CodeIndex, call, scratch_dir

# Line 1 holds multi-byte characters, so byte and character offsets differ after it.
CAFE = """\
# Café Été — menu notes

def greet():
    return "café"


def shout():
    return "CAFÉ"
"""


class SourceScanRouteTests(SynchronousTestCase):
    def setUp(self):
        index = CodeIndex(scratch_dir(self))
        self.repo = index.repository("cafe")
        menu = index.file(self.repo, "cafe/menu.py", CAFE)
        index.entity(menu, "Function", "greet", 3, 4)
        index.entity(menu, "Function", "shout", 7, 8)
        index.writer.commit()
        self.conn = index.reader()

    def entities(self, query):
        data = call(self.conn, "/content/entities/search", {"query": query}, envelope=False).data
        return [(r["entity_name"], r["source_cache"]) for r in data["results"]]

    def test_spans_are_utf8_byte_offsets(self):
        self.assertEqual(
            self.entities('return "café"'), [("greet", 'def greet():\n    return "café"')]
        )
        self.assertEqual(self.entities('"CAFÉ"'), [("shout", 'def shout():\n    return "CAFÉ"')])

    def test_only_ascii_letters_ignore_case(self):
        self.assertEqual([name for name, _ in self.entities("CAFé")], ["greet"])
        self.assertEqual([name for name, _ in self.entities("cafÉ")], ["shout"])
        self.assertEqual([name for name, _ in self.entities('RETURN "CAF')], ["greet", "shout"])

    def test_text_outside_every_entity_finds_no_entity(self):
        files = call(self.conn, "/content/files/search", {"query": "Été"}, envelope=False).data
        self.assertEqual([r["relative_path"] for r in files["results"]], ["cafe/menu.py"])
        self.assertEqual(self.entities("Été"), [])

    def test_find_code_falls_back_to_source_inside_entity_spans(self):
        body = {"query": 'return "caf', "repo_id": "cafe"}
        data = call(self.conn, "/code/search", body, envelope=False).data
        self.assertEqual([r["name"] for r in data["results"]], ["greet", "shout"])
        outside = call(self.conn, "/code/search", {"query": "menu notes", "repo_id": "cafe"})
        self.assertEqual(outside.data["results"], [])

    def test_topic_in_a_comment_is_a_file_hit_only(self):
        body = {"topic": "menu notes", "repo_id": "cafe"}
        data = call(self.conn, "/code/topics/investigate", body, envelope=False).data
        self.assertEqual([g["relative_path"] for g in data["matched_files"]], ["cafe/menu.py"])
        self.assertEqual(data["matched_files"][0]["matched_terms"], ["menu", "notes"])
        self.assertEqual(data["evidence_groups"][0]["relative_path"], "cafe/menu.py")
        self.assertEqual(data["evidence_groups"][0]["source_kind"], "file")
        # its definitions hold neither word: only their file's path names the menu
        self.assertEqual({tuple(g["matched_fields"]) for g in data["matched_symbols"]}, {("path",)})

    def test_semantic_keyword_finds_a_word_only_the_file_text_holds(self):
        body = {"repo_id": "cafe", "query": "café", "mode": "keyword", "limit": 5}
        data = call(self.conn, "/search/semantic", {**body, "timeout_ms": 100}).data
        found = {r["document"]["title"]: r["matched_fields"] for r in data["results"]}
        self.assertEqual(found["cafe/menu.py"]["text"], ["café"])
        # the definitions hold "café" only in a string: their folder's name is all they match
        self.assertEqual(found["Function greet"], {"path": ["café"]})
        self.assertEqual(found["Function shout"], {"path": ["café"]})


class ScannedFileTests(SynchronousTestCase):
    def test_rows_holding_needs_the_whole_match_in_the_span(self):
        body = b"abc SUPER(x) def"
        scanned = ScannedFile(row=None, body=body, folded=body.lower())
        rows = [(1, 4, 12), (2, 4, 9), (3, 5, 16), (4, None, 16), (5, -1, 16), (6, 0, 16)]
        self.assertEqual(scanned.rows_holding(fold("super("), rows), [(1, 4, 12), (6, 0, 16)])
        self.assertEqual(scanned.rows_holding(fold("absent"), rows), [])
        self.assertEqual(scanned.source(4, 12), "SUPER(x)")

    def test_fold_lowers_ascii_letters_only(self):
        self.assertEqual(fold("AbÉé"), "abÉé".encode())
