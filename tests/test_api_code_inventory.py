"""Tests for /code/structure/inventory: structural predicates and file counts."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from tests.test_api_code_common import CodeIndex, call, error_of, scratch_dir

ROUTE = "/code/structure/inventory"
MODELS = """\
@dataclass
class Order:
    total: int


class Special(Order):
    def __init__(self):
        super().__init__()

    def save(self):
        \"\"\"Persist the order.\"\"\"
        return 1


@app.get("/orders")
def list_orders():
    return []
"""


def inventory_index(case: SynchronousTestCase):
    index = CodeIndex(scratch_dir(case))
    repo = index.repository("orders")
    file_id = index.file(repo, "orders/models.py", MODELS)
    index.entity(file_id, "Class", "Order", 2, 3, metadata={"decorators": ["@dataclass"]})
    special = index.entity(file_id, "Class", "Special", 6, 13)
    index.entity(file_id, "Function", "__init__", 7, 8, parent=special, class_context="Special")
    index.entity(
        file_id,
        "Function",
        "save",
        10,
        12,
        parent=special,
        class_context="Special",
        metadata={"docstring": "Persist the order."},
    )
    index.entity(
        file_id,
        "Function",
        "list_orders",
        17,
        18,
        metadata={"decorators": [{"name": 'app.get("/orders")'}]},
    )
    other = index.file(repo, "orders/util.py", "def one():\n    return 1\n")
    index.entity(other, "Function", "one", 1, 2)
    index.writer.commit()
    return index, repo


class InventoryTests(SynchronousTestCase):
    def setUp(self):
        self.index, self.repo = inventory_index(self)
        self.conn = self.index.reader()

    def names(self, **body):
        data = call(self.conn, ROUTE, {"repo_id": "orders", **body}).data
        return [row.get("name", row.get("relative_path")) for row in data["results"]]

    def test_dataclasses(self):
        self.assertEqual(self.names(inventory_kind="dataclass"), ["Order"])

    def test_documented_functions(self):
        self.assertEqual(self.names(inventory_kind="documented_function"), ["save"])

    def test_decorated_with_a_decorator_filter(self):
        self.assertEqual(self.names(inventory_kind="decorated"), ["Order", "list_orders"])
        self.assertEqual(
            self.names(inventory_kind="decorated", decorator="app.get"), ["list_orders"]
        )

    def test_class_with_method(self):
        data = call(
            self.conn,
            ROUTE,
            {"repo_id": "orders", "inventory_kind": "class_with_method", "method_name": "save"},
        ).data
        self.assertEqual(
            [(r["name"], r["class_name"]) for r in data["results"]], [("save", "Special")]
        )

    def test_super_calls_and_top_level(self):
        self.assertEqual(self.names(inventory_kind="super_call"), ["Special", "__init__"])
        self.assertEqual(
            self.names(inventory_kind="top_level", entity_kind="function"), ["list_orders", "one"]
        )

    def test_function_count_by_file(self):
        data = call(
            self.conn, ROUTE, {"repo_id": "orders", "inventory_kind": "function_count_by_file"}
        ).data
        self.assertEqual(
            [(r["relative_path"], r["function_count"]) for r in data["results"]],
            [("orders/models.py", 3), ("orders/util.py", 1)],
        )

    def test_entity_rows_are_shaped_and_paged(self):
        answer = call(self.conn, ROUTE, {"repo_id": "orders", "limit": 2, "offset": 1})
        data = answer.data
        self.assertEqual([r["rank"] for r in data["results"]], [2, 3])
        self.assertTrue(data["truncated"])
        self.assertEqual(data["next_offset"], 3)
        self.assertEqual(data["matches"], data["results"])
        row = data["results"][0]
        self.assertEqual(row["match_kind"], "entity")
        self.assertIn("source_cache", row)
        self.assertEqual(answer.truth["capability"], "code_inventory.structural")

    def test_a_page_states_how_many_rows_there_are_in_all(self):
        whole = call(self.conn, ROUTE, {"repo_id": "orders", "limit": 200}).data
        self.assertEqual(whole["total"], len(whole["results"]))
        page = call(self.conn, ROUTE, {"repo_id": "orders", "limit": 2, "offset": 1}).data
        self.assertEqual((page["count"], page["total"]), (2, whole["total"]))
        last = {"repo_id": "orders", "limit": 2, "offset": whole["total"] - 1}
        self.assertEqual(call(self.conn, ROUTE, last).data["total"], whole["total"])
        files = {"repo_id": "orders", "inventory_kind": "function_count_by_file", "limit": 1}
        self.assertEqual(call(self.conn, ROUTE, files).data["total"], 2)

    def test_validation(self):
        cases = [
            ({"repo_id": "orders", "limit": 201}, "limit must be <= 200"),
            (
                {"repo_id": "orders", "inventory_kind": "x"},
                "inventory_kind must be one of: entity,"
                " top_level, dataclass, documented, documented_function, decorated,"
                " class_with_method, super_call, function_count_by_file",
            ),
            (
                {"repo_id": "orders", "inventory_kind": "class_with_method"},
                "method_name is required for class_with_method inventory",
            ),
            (
                {
                    "repo_id": "orders",
                    "inventory_kind": "function_count_by_file",
                    "entity_kind": "class",
                },
                "entity_kind must be function for function_count_by_file inventory",
            ),
            ({}, "one of repo_id, file_path, language, entity_kind, or symbol is required"),
        ]
        for body, detail in cases:
            self.assertEqual(error_of(self.conn, ROUTE, body).detail, detail)
