"""Tests for eshu_mcp.query.local.index.store.writer: a parsed file's rows as stored."""

import json
import sqlite3

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.parse.rows import parse_file
from eshu_mcp.query.local.index.store import writer
from eshu_mcp.query.local.index.store.generations import payload_hash
from eshu_mcp.query.local.index.store.identity import entity_id

SOURCE = '''"""Fées — a module with non-ASCII text."""


class Tarif:
    """Prix en €."""

    def total(self, montant: float = 1.5) -> float:
        return montant * 2  # ×2


def libellé():
    return "naïve"
'''


class PrepareRowsTests(SynchronousTestCase):
    def test_rows_carry_eshu_ids_sorted_metadata_and_source_payloads(self) -> None:
        parsed = parse_file("pkg/fees.py", SOURCE.encode("utf-8"))
        prepared = writer.prepare_rows(parsed, "repository:r_12345678")
        source = SOURCE.encode("utf-8")
        self.assertEqual(
            {row[1] for row in prepared.entity_rows}, {"Tarif", "total", "libellé", "pkg.fees"}
        )
        for entity in parsed.entities:
            eid = entity_id(
                "repository:r_12345678",
                "pkg/fees.py",
                entity["entity_type"],
                entity["entity_name"],
                entity["start_line"],
            )
            row = prepared.entity_rows[prepared.entity_ids.index(eid)]
            metadata = json.dumps(entity["metadata"], sort_keys=True)
            self.assertEqual(row[writer.METADATA], metadata)
            body = source[entity["start_byte"] : entity["end_byte"]].decode("utf-8", "replace")
            self.assertEqual(prepared.payloads[eid], payload_hash(body, metadata))

    def test_metadata_json_is_json_dumps_with_sorted_keys(self) -> None:
        for value in (
            {},
            {"b": [1, 2.5, None, True], "a": {"z": 'é€\n"', "y": float("inf")}},
            {"docstring": "line\u2028break \U0001f600", "n": -0.0, "big": 10**30},
        ):
            self.assertEqual(writer.metadata_json(value), json.dumps(value, sort_keys=True))
        with self.assertRaises(TypeError):
            writer.metadata_json({"a": {1, 2}})

    def test_payload_of_a_span_is_the_hash_of_its_decoded_text(self) -> None:
        source = "aé€😀z".encode()  # 1, 2, 3 and 4 byte characters
        for start in range(-1, len(source) + 2):
            for end in range(-1, len(source) + 2):
                body = source[start:end].decode("utf-8", "replace")
                self.assertEqual(
                    writer.source_payload_hash(source, start, end, '{"k": 1}'),
                    payload_hash(body, '{"k": 1}'),
                    (start, end),
                )


class NodeNumbersTests(SynchronousTestCase):
    def test_many_numbers_like_new_one_by_one(self) -> None:
        conn = sqlite3.connect(":memory:")
        self.addCleanup(conn.close)
        conn.execute("CREATE TABLE nodes (nid INTEGER PRIMARY KEY, node_id TEXT)")
        conn.execute("INSERT INTO nodes VALUES (7, 'file:1')")
        one_by_one, at_once = writer.NodeNumbers(conn), writer.NodeNumbers(conn)
        ids = ["content-entity:e_a", "content-entity:e_b", "file:2"]
        self.assertEqual([one_by_one.new(i) for i in ids], [8, 9, 10])
        self.assertEqual(at_once.many(ids), [8, 9, 10])
        self.assertEqual(at_once.many([]), [])
        self.assertEqual(at_once.new("file:3"), 11)
        self.assertEqual(at_once.pending, [*one_by_one.pending, (11, "file:3")])
