"""Entity names searched in memory, and reloaded when the index snapshot changes."""

import sqlite3

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.api.code.names import EntityNames, names_containing


class EntityNamesTests(SynchronousTestCase):
    def test_substring_hits_are_row_ids_once_per_name(self):
        names = EntityNames([("parse_config", 1), ("config", 2), ("configconfig", 3), ("main", 4)])
        self.assertEqual(names.containing("config", 10), [1, 2, 3])
        self.assertEqual(names.containing("Config", 10), [])
        self.assertEqual(names.containing("main", 10), [4])

    def test_too_many_hits_defers_to_sql(self):
        names = EntityNames([(f"name{n}", n) for n in range(10)])
        self.assertIsNone(names.containing("name", 5))


class SnapshotTests(SynchronousTestCase):
    def setUp(self):
        path = self.mktemp()
        self.conn = sqlite3.connect(path)
        self.conn.executescript(
            "CREATE TABLE repositories (repo_id TEXT, active_generation_id TEXT);"
            "CREATE TABLE entities (rid INTEGER PRIMARY KEY, entity_name TEXT);"
            "INSERT INTO repositories VALUES ('r', 'g1');"
            "INSERT INTO entities VALUES (1, 'charge'), (2, 'refund');"
        )
        self.conn.commit()

    def test_a_new_generation_reloads_the_names(self):
        self.assertEqual(names_containing(self.conn, "fund"), [2])
        self.conn.executescript(
            "INSERT INTO entities VALUES (3, 'refund_fee');"
            "UPDATE repositories SET active_generation_id = 'g2';"
        )
        self.conn.commit()
        self.assertEqual(names_containing(self.conn, "fund"), [2, 3])

    def test_needles_spanning_lines_are_left_to_sql(self):
        self.assertIsNone(names_containing(self.conn, "charge\nrefund"))
