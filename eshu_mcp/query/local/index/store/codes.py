"""
The integer codes the compact storage tables use for small vocabularies (edge type,
resolution method, call kind) and confidence in hundredths; ``schema.sql``'s views decode
them with the same numbers. A value outside a vocabulary is stored as its text.
"""

from __future__ import annotations

EDGE_TYPES = {
    "CALLS": 1,
    "IMPORTS": 2,
    "INHERITS": 3,
    "IMPLEMENTS": 4,
    "OVERRIDES": 5,
    "REFERENCES": 6,
    "CONTAINS": 7,
    "INSTANTIATES": 8,
}
METHODS = {
    "declared": 1,
    "same_file": 2,
    "import_binding": 3,
    "type_inferred": 4,
    "scope_unique_name": 5,
    "repo_unique_name": 6,
    "ambiguous": 7,
}
CALL_KINDS = {
    "call": 1,
    "method_call": 2,
    "constructor_call": 3,
    "new_expression": 4,
    "macro": 5,
}
CONFIDENCE = {
    "declared": 95,
    "same_file": 95,
    "import_binding": 95,
    "type_inferred": 95,
    "scope_unique_name": 70,
    "repo_unique_name": 90,
    "ambiguous": 50,
}
"""Confidence of each resolution tier, in hundredths: Eshu's tiers (local-backend §3.3/§5.5)
set to the precision measured for Python calls on the Twisted sources against a runtime trace
of its tests (``scripts/bench_callgraph.py``: import_binding 0.99, same_file 0.99,
type_inferred 1.00, repo_unique_name 0.90). An ambiguous call stores 0.75/n on each of its
n edges (``call_edges.AMBIGUOUS_SHARE``); 50 is the most any of them gets."""
