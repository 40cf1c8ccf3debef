"""Tests for eshu_mcp.query.local.index.resolve.inputs: what resolution reads of each file."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.resolve.inputs import signature_with_return
from tests.indexed import indexed_reader


class SignatureTests(SynchronousTestCase):
    def test_a_read_result_is_added_and_a_parameter_named_returns_is_not_one(self) -> None:
        self.assertEqual(
            signature_with_return("def __enter__(self)", '{"returns": "self"}'),
            "def __enter__(self) -> self",
        )
        self.assertEqual(
            signature_with_return("def typed(values, returns)", '{"args": ["values", "returns"]}'),
            "def typed(values, returns)",
        )

    def test_a_repository_with_a_parameter_named_returns_indexes(self) -> None:
        types_py = (
            "def typed(values, returns) -> None:\n    helper(returns)\n\n"
            "def helper(x):\n    return x\n"
        )
        conn = indexed_reader(self, {"types.py": types_py})
        edges = conn.execute(
            "SELECT s.qualified_name, t.qualified_name FROM edges e"
            " JOIN entities s ON s.entity_id = e.source_id"
            " JOIN entities t ON t.entity_id = e.target_id WHERE e.type = 'CALLS'"
        ).fetchall()
        self.assertEqual([tuple(row) for row in edges], [("typed", "helper")])
