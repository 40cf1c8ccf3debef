"""Tests for the changed-since delta over several generations of fact history."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.platform.freshness import DELTA_SQL, fact_delta
from tests.test_api_resource import ApiIndex


def history_index(directory: str) -> tuple[ApiIndex, str]:
    """
    A repository with four generations whose facts move through every delta class: edited,
    reverted, deleted and brought back, born late, vanished from a living file. A second
    repository holds the same keys, which must never leak into the first one's answer.
    """
    index = ApiIndex(directory)
    repo = index.repository("shop", generations=("superseded",) * 3 + ("active",))
    other = index.repository("mirror")
    for owner in (repo, other):
        key = f"file:{owner}:"
        index.fact(owner, key + "edited.py", "file", "old", 1, 3, "updated")
        index.fact(owner, key + "edited.py", "file", "new", 3)
        index.fact(owner, key + "reverted.py", "file", "same", 1, 2, "updated")
        index.fact(owner, key + "reverted.py", "file", "detour", 2, 3, "updated")
        index.fact(owner, key + "reverted.py", "file", "same", 3)
        index.fact(owner, key + "back.py", "file", "body", 1, 2, "retired")
        index.fact(owner, key + "back.py", "file", "body", 3)
        index.fact(owner, key + "brief.py", "file", "short", 2, 4, "retired")
        index.fact(owner, "content_entity:vanished", "content_entity", "v", 1, 3, "superseded")
        index.fact(owner, "content_entity:edited_then_gone", "content_entity", "a", 1, 2, "updated")
        index.fact(owner, "content_entity:edited_then_gone", "content_entity", "b", 2, 3, "retired")
        index.fact(owner, "content_entity:late", "content_entity", "l", 4)
        index.fact(owner, f"repository:{owner}", "repository", "r", 1)
    index.writer.commit()
    return index, repo


def classes(categories: list[dict]) -> dict[str, dict[str, int]]:
    """Non-zero counts per category."""
    return {
        entry["category"]: {cls: n for cls, n in entry["counts"].items() if n}
        for entry in categories
    }


class DeltaTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = history_index(self.mktemp())
        self.conn = self.index.reader()
        self.addCleanup(self.conn.close)

    def delta(self, since: int, sample_limit: int = 25) -> list[dict]:
        return fact_delta(self.conn, self.repo, since, 4, sample_limit)

    def test_every_class_since_the_first_generation(self):
        self.assertEqual(
            classes(self.delta(1)),
            {
                "files": {"unchanged": 2, "updated": 1},
                "content_entities": {"added": 1, "retired": 1, "superseded": 1},
                "facts": {"unchanged": 1},
            },
        )

    def test_each_since_generation_sees_its_own_baseline(self):
        self.assertEqual(
            classes(self.delta(2)),
            {
                "files": {"added": 1, "updated": 2, "retired": 1},
                "content_entities": {"added": 1, "retired": 1, "superseded": 1},
                "facts": {"unchanged": 1},
            },
        )
        self.assertEqual(
            classes(self.delta(3)),
            {
                "files": {"unchanged": 3, "retired": 1},
                "content_entities": {"added": 1},
                "facts": {"unchanged": 1},
            },
        )
        self.assertEqual(
            classes(self.delta(4)),
            {
                "files": {"unchanged": 3},
                "content_entities": {"unchanged": 1},
                "facts": {"unchanged": 1},
            },
        )

    def test_samples_name_the_keys_in_key_order(self):
        files, entities, _ = self.delta(2)
        key = f"file:{self.repo}:"
        self.assertEqual(
            {cls: [s["stable_fact_key"] for s in rows] for cls, rows in files["samples"].items()},
            {
                "added": [key + "back.py"],
                "updated": [key + "edited.py", key + "reverted.py"],
                "retired": [key + "brief.py"],
            },
        )
        self.assertEqual(
            entities["samples"]["retired"],
            [{"stable_fact_key": "content_entity:edited_then_gone", "fact_kind": "content_entity"}],
        )
        capped = self.delta(2, sample_limit=1)[0]
        self.assertEqual(capped["samples"]["updated"], [files["samples"]["updated"][0]])
        self.assertEqual(capped["truncated"], {"updated": True})

    def test_delta_reads_fact_versions_by_primary_key_only(self):
        plan = " | ".join(
            row[3]
            for row in self.conn.execute(
                "EXPLAIN QUERY PLAN " + DELTA_SQL, {"repo": self.repo, "a": 1, "c": 4}
            )
        )
        self.assertNotIn("AUTOMATIC", plan)
        self.assertNotIn("SCAN fact_versions", plan)
        self.assertIn("SEARCH fact_versions USING PRIMARY KEY (repo_id=?)", plan)
