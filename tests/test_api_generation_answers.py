"""Answers kept per active generation: computed once, recomputed after a build, bounded."""

import sqlite3

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.generation_answers import GenerationAnswers


def index_file(case: SynchronousTestCase) -> sqlite3.Connection:
    conn = sqlite3.connect(case.mktemp())
    case.addCleanup(conn.close)
    conn.execute("CREATE TABLE repositories (repo_id TEXT, active_generation_id TEXT)")
    conn.executemany("INSERT INTO repositories VALUES (?, ?)", [("a", "g1"), ("b", "g1")])
    conn.commit()
    return conn


class GenerationAnswersTests(SynchronousTestCase):
    def test_an_answer_is_computed_once_until_its_repository_gets_a_new_generation(self):
        conn, kept, runs = index_file(self), GenerationAnswers(), []

        def compute():
            runs.append(1)
            return [len(runs)]

        self.assertEqual(kept.answer(conn, "q", {"x": 1}, "a", compute), [1])
        self.assertEqual(kept.answer(conn, "q", {"x": 1}, "a", compute), [1])
        self.assertEqual(kept.answer(conn, "q", {"x": 2}, "a", compute), [2])  # another question
        conn.execute("UPDATE repositories SET active_generation_id = 'g2' WHERE repo_id = 'b'")
        self.assertEqual(kept.answer(conn, "q", {"x": 1}, "a", compute), [1])  # b's build
        conn.execute("UPDATE repositories SET active_generation_id = 'g2' WHERE repo_id = 'a'")
        self.assertEqual(kept.answer(conn, "q", {"x": 1}, "a", compute), [3])

    def test_the_kept_rows_are_bounded_least_recently_used_first_out(self):
        conn, kept = index_file(self), GenerationAnswers(max_rows=10)
        kept.answer(conn, "big", {}, "a", lambda: (list(range(6)), "rows"))
        kept.answer(conn, "other", {}, "a", lambda: list(range(6)))  # 12 rows: big goes
        runs = []
        kept.answer(conn, "big", {}, "a", lambda: runs.append(1) or (list(range(6)), "rows"))
        self.assertEqual(runs, [1])
