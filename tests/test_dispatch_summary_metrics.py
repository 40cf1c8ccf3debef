"""Call-graph metrics summaries: the text names each function and its numbers."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import derived


def metric_row(name: str, path: str, line: int, **fields) -> dict:
    """A row as /code/call-graph/metrics returns it."""
    return {
        "repo_id": "repository:r_1",
        "file_path": path,
        "language": "python",
        "function_id": "content-entity:e_" + name,
        "function_name": name,
        "start_line": line,
        "end_line": line + 3,
        "rank": 1,
        **fields,
    }


def metrics(metric_type: str, rows: list[dict]) -> dict:
    return {
        "metric_type": metric_type,
        "functions": rows,
        "count": len(rows),
        "limit": 25,
        "offset": 0,
        "truncated": False,
    }


class MetricsSummaryTests(SynchronousTestCase):
    def test_hub_lines_name_the_function_and_its_degrees(self):
        row = metric_row(
            "assertEqual", "t/trial/_synctest.py", 430, incoming_calls=310, outgoing_calls=2
        )
        text = summarize_envelope(
            "inspect_call_graph_metrics", derived(metrics("hub_functions", [row]))
        )
        self.assertIn("t/trial/_synctest.py:430 assertEqual fan-in 310, fan-out 2", text)

    def test_recursive_lines_say_who_calls_back(self):
        rows = [
            metric_row(
                "walk", "t/python/filepath.py", 90, partner_name="walk", recursion_kind="self_call"
            ),
            metric_row("ping", "t/a.py", 3, partner_name="pong", recursion_kind="mutual_call"),
        ]
        lines = summarize_envelope(
            "inspect_call_graph_metrics", derived(metrics("recursive_functions", rows))
        ).splitlines()
        self.assertEqual(
            lines[1:],
            [
                "t/python/filepath.py:90 walk calls itself",
                "t/a.py:3 ping calls pong, which calls it back",
            ],
        )
