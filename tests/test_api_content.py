"""Tests for the content routes: file, line and entity reads; file and entity search."""

from __future__ import annotations

import glob
import json
import os
import shutil
import tempfile
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from eshu_mcp.query.local.api.content.reads import (
    cap_source,
    like_pattern,
    matching_lines,
    select_lines,
    unsearched_clause,
)
from eshu_mcp.query.local.index.build.indexer import index_repositories
from eshu_mcp.query.local.index.parse.credentials import SERVE_ENV
from tests.test_api_resource import ApiClient, rich_index


class ContentCase(SynchronousTestCase):
    def setUp(self):
        self.ids = rich_index(self.mktemp())
        self.client = ApiClient(self, self.ids["index"].path)

    def post(self, path, body, **kwargs):
        return self.client.post("/content" + path, body, **kwargs)


class ReadFileTests(ContentCase):
    def test_file_read_returns_content_hash_and_truth(self):
        body = self.post(
            "/files/read", {"repo_id": "payments", "relative_path": "app/api.py"}, envelope=True
        ).json()
        data = body["data"]
        self.assertEqual(data["repo_id"], self.ids["repo"])
        self.assertEqual(data["line_count"], 5)
        self.assertEqual(data["language"], "python")
        self.assertEqual(len(data["content_hash"]), 64)
        self.assertEqual(body["truth"]["capability"], "code_search.content_search")
        self.assertEqual(body["truth"]["level"], "derived")

    def test_missing_fields_are_400_in_order(self):
        first = self.post("/files/read", {"relative_path": "x"}).json()
        self.assertEqual(first["detail"], "repo_id is required")
        second = self.post("/files/read", {"repo_id": "payments"}).json()
        self.assertEqual(second["detail"], "relative_path is required")

    def test_unknown_file_and_repository_are_404(self):
        missing = self.post("/files/read", {"repo_id": "payments", "relative_path": "nope.py"})
        self.assertEqual((missing.status, missing.json()["detail"]), (404, "file not found"))
        unknown = self.post("/files/read", {"repo_id": "nope", "relative_path": "a.py"})
        self.assertEqual(unknown.status, 404)
        self.assertIn('repository selector "nope"', unknown.json()["detail"])

    def test_traversal_paths_are_refused_before_any_lookup(self):
        for path in ("../secret", "/etc/passwd", "app/../../x", "x\x00y"):
            response = self.post("/files/read", {"repo_id": "payments", "relative_path": path})
            self.assertEqual(response.status, 400, path)
            self.assertEqual(response.json()["error"], "Bad Request")

    def test_dot_segments_inside_the_tree_normalise(self):
        response = self.post(
            "/files/read", {"repo_id": "payments", "relative_path": "./app//api.py"}
        )
        self.assertEqual(response.json()["relative_path"], "app/api.py")


class LinesTests(ContentCase):
    def lines(self, start, end):
        return self.post(
            "/files/lines",
            {
                "repo_id": self.ids["repo"],
                "relative_path": "app/service.py",
                "start_line": start,
                "end_line": end,
            },
        ).json()

    def test_selected_lines_are_joined_and_counted(self):
        data = self.lines(2, 3)
        self.assertEqual(data["content"], "    def charge(self, amount):\n        return amount")
        self.assertEqual(data["line_count"], 2)

    def test_out_of_range_bounds_clamp_like_eshu(self):
        self.assertEqual(self.lines(0, 1)["line_count"], 1)
        self.assertEqual(self.lines(6, 0)["content"], "def old_refund():\n    pass")
        self.assertEqual(self.lines(6, 99)["line_count"], 2)

    def test_start_past_the_end_is_empty_200_and_the_reason_says_how_long_the_file_is(self):
        data = self.lines(50, 60)
        self.assertEqual((data["content"], data["line_count"]), ("", 0))
        body = self.post(
            "/files/lines",
            {"repo_id": "payments", "relative_path": "app/service.py", "start_line": 50},
            envelope=True,
        ).json()
        lines = body["truth"]["reason"]
        self.assertEqual(lines, "start_line 50 is past the end of the file (7 lines)")
        summary = summarize_envelope("get_file_lines", body)
        self.assertIn("app/service.py: 0 lines", summary)
        self.assertTrue(summary.endswith(": " + lines), summary)

    def test_select_lines_handles_missing_trailing_newline(self):
        self.assertEqual(select_lines("a\nb", 2, 2), ("b", 1))


class EntityReadTests(ContentCase):
    def test_entity_source_comes_from_the_file_span(self):
        data = self.post("/entities/read", {"entity_id": self.ids["charge"]}).json()
        self.assertEqual(data["entity_name"], "charge")
        self.assertEqual(data["entity_type"], "Function")
        self.assertEqual(
            data["source_cache"], "    def charge(self, amount):\n        return amount"
        )
        self.assertEqual(data["metadata"], {})

    def test_entity_id_is_required_and_unknown_is_404(self):
        self.assertEqual(self.post("/entities/read", {}).json()["detail"], "entity_id is required")
        response = self.post("/entities/read", {"entity_id": "content-entity:e_000000000000"})
        self.assertEqual((response.status, response.json()["detail"]), (404, "entity not found"))

    def test_variable_source_is_capped_at_4_kib(self):
        text, extra = cap_source("Variable", "x" * 5000)
        self.assertEqual(len(text), 4096)
        self.assertEqual(extra["source_cache_original_bytes"], 5000)
        self.assertEqual(cap_source("Function", "short"), ("short", {}))


class SearchTests(ContentCase):
    def test_file_search_is_case_insensitive_and_ordered(self):
        data = self.post("/files/search", {"query": "PAYMENTSERVICE"}).json()
        self.assertEqual(
            [r["relative_path"] for r in data["results"]], ["app/api.py", "app/service.py"]
        )
        self.assertEqual(data["matches"], data["results"])
        self.assertTrue(all(r["content"] == "" for r in data["results"]))
        self.assertEqual(data["source_backend"], "sqlite_content_store")

    def test_file_search_rows_name_their_first_matching_lines(self):
        data = self.post("/files/search", {"query": "PAYMENTSERVICE"}).json()
        service = data["results"][1]["matching_lines"]
        self.assertEqual(service[0], {"line_number": 1, "text": "class PaymentService:"})
        text = summarize_envelope("search_file_content", {"data": data, "truth": None})
        self.assertIn("app/service.py:1 class PaymentService:", text)

    def test_matching_lines_are_numbered_bounded_and_case_insensitive(self):
        content = "a\nfoo 1\nb\nFOO 2 foo\nfoo 3\nfoo 4"
        self.assertEqual(
            matching_lines(content, "Foo"),
            [
                {"line_number": 2, "text": "foo 1"},
                {"line_number": 4, "text": "FOO 2 foo"},
                {"line_number": 5, "text": "foo 3"},
            ],
        )
        # Letters whose lower case is longer do not shift the line numbers.
        self.assertEqual(matching_lines("İİ\nx foo", "FOO"), [{"line_number": 2, "text": "x foo"}])
        self.assertEqual(matching_lines("", "foo"), [])

    def test_lines_that_use_the_text_rank_before_comments_that_mention_it(self):
        content = "# load the settings\n// load them\nvalue = load(path)\n"
        self.assertEqual([row["line_number"] for row in matching_lines(content, "load")], [3, 1, 2])

    def test_case_sensitive_search_tells_the_cases_apart(self):
        loose = self.post("/files/search", {"query": "paymentservice"}).json()
        self.assertEqual(len(loose["results"]), 2)
        self.assertNotIn("case_sensitive", loose)
        exact = self.post("/files/search", {"query": "paymentservice", "case_sensitive": True})
        self.assertEqual(exact.json()["results"], [])
        exact = self.post("/files/search", {"query": "PaymentService", "case_sensitive": True})
        rows = exact.json()["results"]
        self.assertEqual([r["relative_path"] for r in rows], ["app/api.py", "app/service.py"])
        self.assertTrue(exact.json()["case_sensitive"])
        self.assertEqual(matching_lines("Foo\nfoo", "foo", exact_case=True)[0]["line_number"], 2)

    def test_regex_search_matches_files_and_names_the_matching_lines(self):
        body = {"query": r"class \w+Service", "regex": True}
        data = self.post("/files/search", body).json()
        self.assertTrue(data["regex"])
        paths = [r["relative_path"] for r in data["results"]]
        self.assertIn("app/service.py", paths)
        service = data["results"][paths.index("app/service.py")]
        self.assertEqual(service["matching_lines"][0]["text"], "class PaymentService:")
        exact = self.post("/files/search", {**body, "query": r"CLASS \w+", "case_sensitive": True})
        self.assertEqual(exact.json()["results"], [])

    def test_regex_entity_search_keeps_the_entities_whose_source_matches(self):
        data = self.post("/entities/search", {"query": r"class \w+Service", "regex": True})
        names = {r["entity_name"] for r in data.json()["results"]}
        self.assertIn("PaymentService", names)

    def test_a_bad_regex_is_a_400_sentence(self):
        response = self.post("/files/search", {"query": "(unclosed", "regex": True})
        self.assertEqual(response.status, 400)
        self.assertIn("not a valid regular expression", response.json()["detail"])

    def test_case_sensitive_entity_search_keeps_the_case_as_written(self):
        loose = self.post("/entities/search", {"query": "paymentservice"}).json()["results"]
        self.assertTrue(loose)
        exact = self.post("/entities/search", {"query": "paymentservice", "case_sensitive": True})
        self.assertEqual(exact.json()["results"], [])
        exact = self.post("/entities/search", {"query": "PaymentService", "case_sensitive": True})
        self.assertEqual(len(exact.json()["results"]), len(loose))

    def test_short_queries_scan_without_the_trigram_index(self):
        data = self.post("/files/search", {"query": "=>", "repo_id": "payments"}).json()
        self.assertEqual([r["relative_path"] for r in data["results"]], ["web/button.tsx"])

    def test_like_wildcards_are_literal(self):
        self.assertEqual(like_pattern("50%_a\\"), "%50\\%\\_a\\\\%")
        data = self.post("/files/search", {"query": "%"}).json()
        self.assertEqual(data["count"], 0)

    def test_limit_probe_and_offset_page_the_results(self):
        first = self.post("/files/search", {"query": "charge", "limit": 1}).json()
        self.assertEqual((first["count"], first["truncated"]), (1, True))
        second = self.post("/files/search", {"query": "charge", "limit": 1, "offset": 1}).json()
        self.assertNotEqual(first["results"], second["results"])

    def test_query_and_offset_validation(self):
        self.assertEqual(self.post("/files/search", {}).json()["detail"], "query is required")
        response = self.post("/files/search", {"query": "abc", "offset": 10001})
        self.assertEqual(response.json()["detail"], "offset exceeds maximum of 10000")

    def test_repo_ids_scope_the_search(self):
        data = self.post("/files/search", {"query": "charge", "repo_ids": ["ledger"]}).json()
        self.assertEqual([r["relative_path"] for r in data["results"]], ["ledger.go"])

    def test_entity_search_matches_source_text(self):
        data = self.post("/entities/search", {"query": "return amount"}).json()
        self.assertEqual([r["entity_name"] for r in data["results"]], ["PaymentService", "charge"])
        self.assertIn("return amount", data["results"][1]["source_cache"])

    def names(self, route, query):
        data = self.post(route, {"query": query, "repo_id": "payments"}).json()
        key = "entity_name" if route == "/entities/search" else "relative_path"
        return [r[key] for r in data["results"]]

    def test_entity_search_needs_the_whole_match_inside_an_entity(self):
        # app/api.py holds the text on its import line, outside create_charge (lines 4-5).
        self.assertEqual(self.names("/files/search", "import PaymentService"), ["app/api.py"])
        self.assertEqual(self.names("/entities/search", "import PaymentService"), [])
        # app/service.py ends "pass\n"; old_refund's span stops before that newline.
        self.assertEqual(self.names("/files/search", "pass\n"), ["app/service.py"])
        self.assertEqual(self.names("/entities/search", "pass\n"), [])
        self.assertEqual(self.names("/entities/search", "pass"), ["old_refund"])

    def test_entity_search_matches_across_two_lines(self):
        query = "CHARGE(self, amount):\n        RETURN amount"
        data = self.post("/entities/search", {"query": query, "repo_id": "payments"}).json()
        self.assertEqual([r["entity_name"] for r in data["results"]], ["PaymentService", "charge"])
        self.assertEqual(
            data["results"][1]["source_cache"],
            "    def charge(self, amount):\n        return amount",
        )
        # A match straddling the end of one entity and the start of the next is in none.
        across = "amount\n\n\ndef old_refund"
        self.assertEqual(self.names("/files/search", across), ["app/service.py"])
        self.assertEqual(self.names("/entities/search", across), [])


class CredentialFilesTests(SynchronousTestCase):
    """Credential files are refused with the reason; searches skip them; source is served."""

    def setUp(self):
        saved = os.environ.pop(SERVE_ENV, None)
        self.addCleanup(
            lambda: (
                os.environ.pop(SERVE_ENV, None)
                if saved is None
                else os.environ.__setitem__(SERVE_ENV, saved)
            )
        )
        self.repo = Path(tempfile.mkdtemp(prefix="eshu-credentials-"))
        self.addCleanup(shutil.rmtree, self.repo, True)
        (self.repo / ".env").write_text("DB_PASSWORD=LEAKED_FROM_ENV_FILE\n")
        (self.repo / "id_rsa").write_text(
            "-----BEGIN OPENSSH PRIVATE KEY-----\nLEAKED_FROM_KEY\n"
            "-----END OPENSSH PRIVATE KEY-----\n"
        )
        (self.repo / "config.json").write_text('{"db": {"password": "LEAKED_FROM_JSON"}}\n')
        (self.repo / "app.py").write_text("# reads LEAKED_FROM_ settings\ndef main():\n    pass\n")
        self.db = str(self.repo.parent / (self.repo.name + ".sqlite"))
        self.addCleanup(lambda: [os.remove(p) for p in glob.glob(self.db + "*")])
        self.index = lambda: index_repositories(self.db, [self.repo], workers=1)
        self.assertTrue(self.index().ok)
        self.client = ApiClient(self, self.db)

    def read(self, route, path, **extra):
        body = {"repo_id": self.repo.name, "relative_path": path, **extra}
        return self.client.post("/content/files/" + route, body)

    def test_reads_answer_403_with_the_reason(self):
        for path, reason in (
            (".env", "environment file"),
            ("id_rsa", "credentials file by its name"),
            ("config.json", "private key or a literal password"),
        ):
            for route in ("read", "lines"):
                response = self.read(route, path)
                self.assertEqual(response.status, 403, (route, path))
                detail = response.json()["detail"]
                self.assertIn("credential file", detail)
                self.assertIn(reason, detail)
                self.assertIn("--serve-credential-files", detail)
                self.assertNotIn("LEAKED", response.body.decode())
        repo_id = self.read("read", "app.py").json()["repo_id"]
        raw = self.client.get(f"/repositories/{repo_id}/content", params={"path": ".env"})
        self.assertEqual(raw.status, 403)

    def test_search_skips_them_and_source_is_served(self):
        found = self.client.post("/content/files/search", {"query": "LEAKED_FROM"}).json()
        self.assertEqual([r["relative_path"] for r in found["results"]], ["app.py"])
        self.assertNotIn("LEAKED_FROM_ENV_FILE", json.dumps(found))
        source = self.read("read", "app.py")
        self.assertEqual(source.status, 200)
        self.assertIn("def main", source.json()["content"])

    def test_the_operator_option_serves_them_after_the_next_index(self):
        os.environ[SERVE_ENV] = "1"
        self.assertTrue(self.index().ok)  # same files: the changed option re-reads them
        response = self.read("read", ".env")
        self.assertEqual(response.status, 200)
        self.assertIn("LEAKED_FROM_ENV_FILE", response.json()["content"])


class FilesWithoutTextTests(SynchronousTestCase):
    """A binary or too-large file reads as no text, and the answer says why; a search says
    which files it could not read."""

    def setUp(self):
        self.repo = Path(tempfile.mkdtemp(prefix="eshu-no-text-"))
        self.addCleanup(shutil.rmtree, self.repo, True)
        (self.repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 40)
        (self.repo / "dump.json").write_text('["needle"]\n' * 100_000)  # over 1 MiB
        (self.repo / "app.py").write_text("def needle():\n    pass\n")
        self.db = str(self.repo.parent / (self.repo.name + ".sqlite"))
        self.addCleanup(lambda: [os.remove(p) for p in glob.glob(self.db + "*")])
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        self.client = ApiClient(self, self.db)

    def read(self, route, path, **extra):
        body = {"repo_id": self.repo.name, "relative_path": path, **extra}
        return self.client.post("/content/files/" + route, body, envelope=True).json()

    def test_a_binary_file_read_says_it_is_binary_and_its_size_not_empty(self):
        body = self.read("read", "logo.png")
        self.assertEqual((body["data"]["content"], body["data"]["line_count"]), ("", 0))
        reason = body["truth"]["reason"]
        self.assertEqual(reason, "a binary file (640 bytes): the index keeps no text for it")
        summary = summarize_envelope("get_file_content", body)
        self.assertIn("logo.png: 0 lines", summary)
        self.assertTrue(summary.endswith(": " + reason), summary)
        self.assertNotIn("(empty)", summary)

    def test_a_line_range_of_a_too_large_file_has_no_lines_and_says_why(self):
        body = self.read("lines", "dump.json", start_line=1, end_line=3)
        self.assertEqual((body["data"]["content"], body["data"]["line_count"]), ("", 0))
        self.assertEqual(
            body["truth"]["reason"],
            "too large to keep as text (1100000 bytes): the index keeps no text for it",
        )
        summary = summarize_envelope("get_file_lines", body)
        self.assertIn("dump.json: 0 lines", summary)
        self.assertIn("too large to keep as text", summary)

    def test_a_backwards_line_range_says_it_holds_no_line(self):
        body = self.read("lines", "app.py", start_line=2, end_line=1)
        self.assertEqual((body["data"]["content"], body["data"]["line_count"]), ("", 0))
        reason = "start_line 2 comes after end_line 1: the range holds no line"
        self.assertEqual(body["truth"]["reason"], reason)
        summary = summarize_envelope("get_file_lines", body)
        self.assertTrue(summary.endswith("app.py: 0 lines: " + reason), summary)

    def test_reading_a_folder_says_it_is_a_folder_and_how_to_list_it(self):
        (self.repo / "pkg").mkdir()
        (self.repo / "pkg" / "a.py").write_text("A = 1\n")
        (self.repo / "pkg" / "b.py").write_text("B = 2\n")
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        for path in ("pkg", "pkg/"):
            response = self.client.post(
                "/content/files/read", {"repo_id": self.repo.name, "relative_path": path}
            )
            self.assertEqual(response.status, 404)
            self.assertEqual(
                response.json()["detail"],
                "file not found: pkg is a folder of 2 indexed files"
                " (list them with list_repository_files)",
            )
        response = self.client.post(
            "/content/files/read", {"repo_id": self.repo.name, "relative_path": "pk"}
        )
        self.assertNotIn("folder", response.json()["detail"])

    def test_a_text_file_read_keeps_the_plain_reason(self):
        body = self.read("lines", "app.py", start_line=1, end_line=1)
        self.assertEqual(body["data"]["content"], "def needle():")
        self.assertEqual(body["truth"]["reason"], "resolved from exact file line lookup")

    def test_a_search_names_the_files_too_large_to_search(self):
        body = self.client.post(
            "/content/files/search",
            {"query": "needle", "repo_ids": [self.repo.name]},
            envelope=True,
        ).json()
        self.assertEqual([r["relative_path"] for r in body["data"]["results"]], ["app.py"])
        self.assertIn(
            "1 file too large to keep as text was not searched: dump.json",
            body["truth"]["reason"],
        )
        summary = summarize_envelope("search_file_content", body)
        self.assertTrue(
            summary.splitlines()[0].endswith(
                "1 matching file; 1 file too large to keep as text was not searched: dump.json"
            ),
            summary,
        )

    def test_the_clause_counts_every_file_and_names_the_first_three(self):
        paths = ["a.json", "b.json", "c.json", "d.json", "e.json"]
        self.assertEqual(
            unsearched_clause(paths),
            "5 files too large to keep as text were not searched: a.json, b.json, c.json (+2 more)",
        )

    def test_a_search_without_such_files_says_nothing_more(self):
        (self.repo / "dump.json").unlink()
        self.assertTrue(index_repositories(self.db, [self.repo], workers=1).ok)
        body = self.client.post("/content/files/search", {"query": "needle"}, envelope=True).json()
        self.assertNotIn("not searched", body["truth"]["reason"])
        self.assertNotIn("not searched", summarize_envelope("search_file_content", body))
