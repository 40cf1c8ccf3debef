"""scripts/catalog_tokens.py: the tools/list size report."""

import importlib.util
import io
import json
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import ToolCatalog, embedded_backend_answers

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "catalog_tokens.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("catalog_tokens", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CatalogTokensTests(SynchronousTestCase):
    def setUp(self):
        self.script = _load_script()

    def test_listing_bytes_is_the_compact_tools_list_result(self):
        catalog = ToolCatalog.full().select("kubernetes")
        listing = {"tools": list(catalog.mcp_tools("2024-11-05"))}
        expected = len(json.dumps(listing, separators=(",", ":"), ensure_ascii=False).encode())
        self.assertEqual(self.script.listing_bytes(catalog, "2024-11-05"), expected)

    def test_newer_revisions_cost_more_than_2024_11_05(self):
        full = ToolCatalog.full()
        old = self.script.listing_bytes(full, "2024-11-05")
        new = self.script.listing_bytes(full, "2025-11-25")
        self.assertGreater(new, old)

    def test_report_prints_all_and_the_available_selection(self):
        out = io.StringIO()
        self.assertEqual(self.script.main([], out), 0)
        lines = out.getvalue().splitlines()
        self.assertIn("2024-11-05", lines[0])
        self.assertIn("2025-11-25", lines[0])
        self.assertTrue(lines[1].startswith("all"))
        self.assertIn(" 162 ", lines[1])
        self.assertTrue(lines[2].startswith("available"))
        available = len(ToolCatalog.full().select("available", answers=embedded_backend_answers))
        self.assertIn(f" {available} ", lines[2])

    def test_per_toolset_rows_cover_every_toolset(self):
        out = io.StringIO()
        self.script.main(["--toolsets", "code", "--per-toolset"], out)
        self.assertIn("  supply_chain", out.getvalue())
