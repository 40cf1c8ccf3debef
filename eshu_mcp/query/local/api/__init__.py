"""
The embedded ``/api/v0`` route families.

Importing this package imports every module in it, so each one registers its handlers
into :data:`eshu_mcp.query.local.api.framework.ROUTES`.
"""

import importlib
import pkgutil

for _module in sorted(info.name for info in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
