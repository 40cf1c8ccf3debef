"""
The embedded ``/api/v0`` route families, in rooms by what they answer.

Importing this package imports every module in it and its rooms, so each one registers
its handlers into :data:`eshu_mcp.query.local.api.platform.framework.ROUTES`.
"""

import importlib
import pkgutil

for _module in sorted(info.name for info in pkgutil.walk_packages(__path__, f"{__name__}.")):
    importlib.import_module(_module)
