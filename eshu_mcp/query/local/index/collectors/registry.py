"""The local collectors, in precedence order (the first whose path test accepts wins)."""

from __future__ import annotations

from . import Collector

COLLECTORS: tuple[Collector, ...] = ()
