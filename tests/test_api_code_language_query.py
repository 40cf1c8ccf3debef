"""Tests for /code/language-query."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import call, error_of
from tests.test_api_code_search import build


class LanguageQueryTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = build(self)
        self.conn = self.index.reader()

    def test_functions_of_a_language_with_name_filter(self):
        data = call(
            self.conn,
            "/code/language-query",
            {
                "language": "python",
                "entity_type": "function",
                "query": "charge",
                "repo_id": "payments",
            },
        ).data
        self.assertEqual([r["name"] for r in data["results"]], ["create_charge", "charge"])
        self.assertEqual(
            (data["language"], data["entity_type"], data["query"]), ("python", "function", "charge")
        )

    def test_files_of_a_language(self):
        data = call(
            self.conn, "/code/language-query", {"language": "typescript", "entity_type": "file"}
        ).data
        self.assertEqual([r["relative_path"] for r in data["results"]], ["web/button.tsx"])

    def test_entity_type_is_required_and_checked(self):
        self.assertEqual(
            error_of(self.conn, "/code/language-query", {"language": "go"}).detail,
            "entity_type is required",
        )
        self.assertEqual(
            error_of(
                self.conn, "/code/language-query", {"language": "go", "entity_type": "spaceship"}
            ).detail,
            'unsupported entity_type "spaceship"',
        )
