"""Tests for /code/topics/investigate: terms, scoring, evidence groups."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.topics import search_terms
from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir

ROUTE = "/code/topics/investigate"
AUTH = """\
def verify_token(token):
    return token.startswith("ghs_")


def refresh_installation(app_id):
    return app_id
"""
LOCKS = "def acquire_lock(name):\n    return name\n"


def topics_index(case: SynchronousTestCase):
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("bot")
    auth = index.file(repo, "bot/auth.py", AUTH)
    index.entity(auth, "Function", "verify_token", 1, 2)
    index.entity(auth, "Function", "refresh_installation", 5, 6)
    locks = index.file(repo, "bot/locking.py", LOCKS)
    index.entity(locks, "Function", "acquire_lock", 1, 2)
    index.writer.commit()
    return index, repo


class TopicTermsTests(SynchronousTestCase):
    def test_tokens_drop_stop_words_and_add_synonyms(self):
        terms = search_terms("Where is GitHub authentication", "show the code", ["JWT"])
        self.assertEqual(
            terms, ["app", "auth", "authentication", "github", "installation", "jwt", "token"]
        )

    def test_terms_are_capped_at_sixteen(self):
        topic = " ".join(f"word{i:02d}" for i in range(30))
        self.assertEqual(len(search_terms(topic, "", [])), 16)


class TopicInvestigationTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = topics_index(self)
        self.conn = self.index.reader()

    def test_github_authentication_finds_auth_file_first(self):
        answer = call(self.conn, ROUTE, {"topic": "github authentication", "repo_id": "bot"})
        data = answer.data
        top = data["evidence_groups"][0]
        self.assertEqual(top["relative_path"], "bot/auth.py")
        self.assertEqual(top["source_kind"], "file")
        self.assertEqual(top["matched_terms"], ["app", "auth", "installation", "token"])
        self.assertEqual(top["score"], 4)
        self.assertEqual(top["source_handle"]["end_line"], 6)
        symbols = {g["entity_name"] for g in data["matched_symbols"]}
        self.assertEqual(symbols, {"verify_token", "refresh_installation"})
        self.assertEqual(len(data["call_graph_handles"]), 2)
        self.assertNotIn("bot/locking.py", [g["relative_path"] for g in data["evidence_groups"]])
        self.assertEqual(data["coverage"]["query_shape"], "content_topic_investigation")
        self.assertEqual(data["answer_metadata"]["schema_version"], "answer_metadata.v1")
        self.assertEqual(answer.truth["capability"], "code_search.topic_investigation")

    def test_locking_matches_lock_synonym(self):
        data = call(self.conn, ROUTE, {"topic": "locking"}).data
        self.assertIn("acquire_lock", {g.get("entity_name") for g in data["evidence_groups"]})

    def test_paging_and_required_topic(self):
        data = call(self.conn, ROUTE, {"topic": "github authentication", "limit": 1}).data
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 1)
        self.assertEqual(error_of(self.conn, ROUTE, {"intent": "x"}).detail, "topic is required")
