"""The local collectors, in precedence order (the first whose path test accepts wins)."""

from __future__ import annotations

from . import Collector
from .codeowners import CODEOWNERS_COLLECTOR
from .docs import DOCUMENTATION_COLLECTOR
from .packages import (
    PACKAGE_LOCKFILE_COLLECTOR,
    PACKAGE_MANIFEST_COLLECTOR,
    REQUIREMENTS_COLLECTOR,
)

COLLECTORS: tuple[Collector, ...] = (
    # collect-deps: ownership, packages, documentation
    CODEOWNERS_COLLECTOR,
    PACKAGE_MANIFEST_COLLECTOR,
    PACKAGE_LOCKFILE_COLLECTOR,
    REQUIREMENTS_COLLECTOR,
    DOCUMENTATION_COLLECTOR,
)
