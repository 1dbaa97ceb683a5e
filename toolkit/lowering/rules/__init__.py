"""Lowering rules, one module per family of primitives (mirroring ``toolkit/lax/``)."""

import importlib
import pkgutil

# Every module here registers its rules on import.
for _info in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_info.name}")
