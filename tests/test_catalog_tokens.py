"""scripts/catalog_tokens.py: the tools/list size report, and what the default costs."""

import importlib.util
import io
import json
from pathlib import Path

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog import (
    PROTOCOL_REVISIONS,
    ToolCatalog,
    available_toolsets,
    embedded_backend_answers,
)
from eshu_mcp.query.local.backend import LocalQueryBackend
from eshu_mcp.service import select_catalog

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "catalog_tokens.py"

# What the embedded backend's default tools/list cost before issue 10, in bytes of the
# compact result (tokens ~ bytes/4): the ``available`` selection, 52 tools, measured
# with scripts/catalog_tokens.py at commit f887127 (8750 tokens at 2024-11-05, 12453 at
# 2025-11-25). The default must cost at most half of this at every revision.
OLD_DEFAULT_LISTING_BYTES = {
    "2024-11-05": 35002,
    "2025-03-26": 42104,
    "2025-06-18": 49812,
    "2025-11-25": 49812,
    "2026-07-28": 49812,
}


def _load_script():
    spec = importlib.util.spec_from_file_location("catalog_tokens", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _embedded_default() -> ToolCatalog:
    """The catalog a daemon on the embedded backend serves when no --toolsets is given."""
    backend = LocalQueryBackend(str(Path("no-such-dir") / "index.sqlite"), reactor=Clock())
    return select_catalog(None, (), backend)


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

    def test_report_prints_all_available_and_core(self):
        out = io.StringIO()
        self.assertEqual(self.script.main([], out), 0)
        lines = out.getvalue().splitlines()
        self.assertIn("2024-11-05", lines[0])
        self.assertIn("2025-11-25", lines[0])
        self.assertTrue(lines[1].startswith("all"))
        self.assertIn(" 162 ", lines[1])
        full = ToolCatalog.full()
        for line, name in zip(lines[2:4], ("available", "core"), strict=True):
            self.assertTrue(line.startswith(name))
            count = len(full.select(name, answers=embedded_backend_answers))
            self.assertIn(f" {count} ", line)
        self.assertTrue(lines[4].startswith("tokens ~ bytes/4"))

    def test_a_chosen_selection_gets_its_own_row(self):
        out = io.StringIO()
        self.script.main(["--toolsets", "code", "--exclude", "find_code"], out)
        row = out.getvalue().splitlines()[4]
        self.assertTrue(row.startswith("code -find_code"))
        self.assertIn(f" {len(ToolCatalog.full().select('code')) - 1} ", row)

    def test_per_toolset_rows_cover_every_toolset(self):
        out = io.StringIO()
        self.script.main(["--per-toolset"], out)
        labels = [line.split()[0] for line in out.getvalue().splitlines()[1:-1]]
        self.assertEqual(labels, ["all", "available", "core", *available_toolsets()])

    def test_rst_table_has_a_row_per_selection_with_bytes_and_tokens(self):
        out = io.StringIO()
        self.script.main(["--rst", "--per-toolset"], out)
        lines = out.getvalue().splitlines()
        self.assertTrue(set(lines[0]) <= {"=", " "})
        self.assertEqual(lines[0], lines[2])
        self.assertEqual(lines[0], lines[-1])
        self.assertIn("~tokens 2025-11-25", lines[1])
        core = next(line for line in lines if line.startswith("``core``"))
        size = self.script.listing_bytes(_embedded_default(), "2024-11-05")
        self.assertIn(f"{size:,}", core)
        self.assertIn(f"{size // 4:,}", core)


class DefaultSurfaceCostTests(SynchronousTestCase):
    def setUp(self):
        self.script = _load_script()
        self.default = _embedded_default()

    def test_the_old_figures_cover_every_revision(self):
        self.assertEqual(set(OLD_DEFAULT_LISTING_BYTES), set(PROTOCOL_REVISIONS))

    def test_embedded_default_costs_at_most_half_of_the_old_default_at_every_revision(self):
        for revision, old in OLD_DEFAULT_LISTING_BYTES.items():
            size = self.script.listing_bytes(self.default, revision)
            self.assertLessEqual(size, old // 2, f"{revision}: {size} bytes against {old}")

    def test_embedded_default_is_the_core_selection(self):
        core = ToolCatalog.full().select("core")
        self.assertEqual(self.default.names, core.names)
        self.assertLess(len(core), 52)
