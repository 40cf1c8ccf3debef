"""
Measure what the tool catalog costs a client: the bytes of the ``tools/list`` result.

Prints the compact JSON size of ``{"tools": [...]}`` (as the server encodes it) and
bytes/4 as a rough token estimate, for the whole catalog and for a selection
(default: the tools the embedded local backend answers, ``available``), per MCP
revision. Run from a checkout::

    PYTHONPATH=. python scripts/catalog_tokens.py
    PYTHONPATH=. python scripts/catalog_tokens.py --toolsets code,content --per-toolset
"""

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from eshu_mcp.catalog import (
    PROTOCOL_REVISIONS,
    ToolCatalog,
    available_toolsets,
    embedded_backend_answers,
)
from eshu_mcp.encoding import dumpb


def listing_bytes(catalog: ToolCatalog, revision: str) -> int:
    """Size in bytes of the compact ``tools/list`` result for ``catalog``."""
    return len(dumpb({"tools": list(catalog.mcp_tools(revision))}))


def _row(label: str, catalog: ToolCatalog, revisions: Sequence[str]) -> str:
    cells = []
    for revision in revisions:
        size = listing_bytes(catalog, revision)
        cells.append(f"{size:>8} B {size // 4:>6} tok")
    return f"{label:<28}{len(catalog):>5}  " + "  ".join(cells)


def report(
    toolsets: str,
    exclude: Sequence[str],
    revisions: Sequence[str],
    per_toolset: bool,
    out: TextIO,
) -> None:
    """Write the size table for the full catalog and the chosen selection."""
    full = ToolCatalog.full()
    chosen = full.select(toolsets, exclude, answers=embedded_backend_answers)
    header = f"{'selection':<28}{'tools':>5}  " + "  ".join(f"{rev:>19}" for rev in revisions)
    out.write(header + "\n")
    out.write(_row("all", full, revisions) + "\n")
    label = toolsets if not exclude else f"{toolsets} -{','.join(exclude)}"
    out.write(_row(label, chosen, revisions) + "\n")
    if per_toolset:
        for name in available_toolsets():
            out.write(_row(f"  {name}", full.select(name), revisions) + "\n")
    tokens = listing_bytes(full, revisions[-1]) // 4
    out.write(
        f"tokens ~ bytes/4; the full catalog costs about {tokens} tokens per turn "
        f"at {revisions[-1]}\n"
    )


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument(
        "--toolsets",
        default="available",
        help="comma list of toolsets, 'all' or 'available' (embedded backend); default: available",
    )
    parser.add_argument(
        "--exclude", action="append", default=[], help="tool or toolset to leave out"
    )
    parser.add_argument(
        "--revision",
        action="append",
        choices=PROTOCOL_REVISIONS,
        help="MCP revision(s) to measure; default: 2024-11-05 and 2025-11-25",
    )
    parser.add_argument("--per-toolset", action="store_true", help="also one row per toolset")
    options = parser.parse_args(argv)
    revisions = options.revision or ["2024-11-05", "2025-11-25"]
    try:
        report(options.toolsets, options.exclude, revisions, options.per_toolset, out)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
