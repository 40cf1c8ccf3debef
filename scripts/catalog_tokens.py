"""
Measure what the tool catalog costs a client: the bytes of the ``tools/list`` result.

Prints the compact JSON size of ``{"tools": [...]}`` (as the server encodes it) and
bytes/4 as a rough token estimate, per MCP revision, for the whole catalog, the
named selections (``core``, the embedded backend's default, and ``available``) and
optionally a chosen selection and every toolset. ``--rst`` writes the same table as
reStructuredText for the README. A 2024-11-05 tool carries only name, description and
inputSchema; 2025-03-26 adds annotations, 2025-06-18 a title and, on envelope tools,
the outputSchema, which a client may or may not pass on to its model. Run from a
checkout::

    PYTHONPATH=. python scripts/catalog_tokens.py
    PYTHONPATH=. python scripts/catalog_tokens.py --per-toolset --rst
    PYTHONPATH=. python scripts/catalog_tokens.py --toolsets code,content --exclude find_code
"""

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from attrs import frozen

from eshu_mcp.catalog import (
    PROTOCOL_REVISIONS,
    ToolCatalog,
    available_toolsets,
    embedded_backend_answers,
)
from eshu_mcp.encoding import dumpb

DEFAULT_REVISIONS = ("2024-11-05", "2025-11-25")

#: Rows every report starts with: the whole catalog and the named selections.
STANDARD_SELECTIONS = ("all", "available", "core")


def listing_bytes(catalog: ToolCatalog, revision: str) -> int:
    """Size in bytes of the compact ``tools/list`` result for ``catalog``."""
    return len(dumpb({"tools": list(catalog.mcp_tools(revision))}))


def estimated_tokens(size: int) -> int:
    """The rough token estimate used throughout: four bytes a token."""
    return size // 4


@frozen
class Row:
    """One selection's cost: its label, tool count and bytes per revision."""

    label: str
    tools: int
    sizes: tuple[int, ...]


def measure(label: str, catalog: ToolCatalog, revisions: Sequence[str]) -> Row:
    """The cost of one selection at each revision."""
    return Row(label, len(catalog), tuple(listing_bytes(catalog, rev) for rev in revisions))


def rows(
    toolsets: str, exclude: Sequence[str], revisions: Sequence[str], per_toolset: bool
) -> list[Row]:
    """All, the named selections, the chosen selection if different, and each toolset."""
    full = ToolCatalog.full()
    found = [
        measure(name, full.select(name, answers=embedded_backend_answers), revisions)
        for name in STANDARD_SELECTIONS
    ]
    chosen = full.select(toolsets, exclude, answers=embedded_backend_answers)
    if exclude or toolsets not in STANDARD_SELECTIONS:
        label = toolsets if not exclude else f"{toolsets} -{','.join(exclude)}"
        found.append(measure(label, chosen, revisions))
    if per_toolset:
        found.extend(measure(name, full.select(name), revisions) for name in available_toolsets())
    return found


def _text(table: list[Row], revisions: Sequence[str], out: TextIO) -> None:
    out.write(f"{'selection':<28}{'tools':>5}  " + "  ".join(f"{rev:>19}" for rev in revisions))
    out.write("\n")
    for row in table:
        cells = "  ".join(f"{size:>8} B {estimated_tokens(size):>6} tok" for size in row.sizes)
        out.write(f"{row.label:<28}{row.tools:>5}  {cells}\n")
    tokens = estimated_tokens(table[0].sizes[-1])
    out.write(
        f"tokens ~ bytes/4; the full catalog costs about {tokens} tokens per turn "
        f"at {revisions[-1]}\n"
    )


def _rst(table: list[Row], revisions: Sequence[str], out: TextIO) -> None:
    header = ["selection", "tools"]
    for revision in revisions:
        header += [f"bytes {revision}", f"~tokens {revision}"]
    body = []
    for row in table:
        cells = [f"``{row.label}``", str(row.tools)]
        for size in row.sizes:
            cells += [f"{size:,}", f"{estimated_tokens(size):,}"]
        body.append(cells)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    rule = "  ".join("=" * width for width in widths)

    def line(cells: list[str]) -> str:
        return "  ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    out.write("\n".join([rule, line(header), rule, *map(line, body), rule]) + "\n")


def report(
    toolsets: str,
    exclude: Sequence[str],
    revisions: Sequence[str],
    per_toolset: bool,
    out: TextIO,
    rst: bool = False,
) -> None:
    """Write the size table: plain text, or reStructuredText when ``rst``."""
    table = rows(toolsets, exclude, revisions, per_toolset)
    (_rst if rst else _text)(table, revisions, out)


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument(
        "--toolsets",
        default="core",
        help="comma list of toolsets, 'core', 'available' or 'all' to measure as well "
        "(default: core, the embedded backend's default)",
    )
    parser.add_argument(
        "--exclude", action="append", default=[], help="tool or toolset to leave out"
    )
    parser.add_argument(
        "--revision",
        action="append",
        choices=PROTOCOL_REVISIONS,
        help="MCP revision(s) to measure; default: " + " and ".join(DEFAULT_REVISIONS),
    )
    parser.add_argument("--per-toolset", action="store_true", help="also one row per toolset")
    parser.add_argument("--rst", action="store_true", help="write a reStructuredText table")
    options = parser.parse_args(argv)
    revisions = options.revision or list(DEFAULT_REVISIONS)
    try:
        report(options.toolsets, options.exclude, revisions, options.per_toolset, out, options.rst)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
