"""The tool contract as shipped in this package (``data/tools.json``)."""

import json
from functools import cache
from importlib import resources


@cache
def load_contract() -> tuple[dict, ...]:
    """
    Return the catalog's tool records, in the order clients must see them.

    Each record holds ``name``, ``description``, ``group``, ``domain``,
    ``data_source``, ``input_schema`` and ``route``. The records are shared:
    callers must not mutate them.
    """
    text = resources.files("eshu_mcp.catalog").joinpath("data/tools.json").read_text("utf-8")
    return tuple(json.loads(text))
