"""``TOOLKIT_DUMP_IR_TO=dir``: one numbered file per compilation stage.

The jit pipeline calls :func:`maybe_dump` at each stage (after lowering,
after each pipeline, before compiling). With the variable unset it costs one
environment lookup.

Example::

    maybe_dump("jit_f.after_lowering", module)   # -> dir/0001_jit_f.after_lowering.mlir
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from typing import Any

_counter = itertools.count(1)
_lock = threading.Lock()

#: The environment variable naming the dump folder.
DUMP_ENV = "TOOLKIT_DUMP_IR_TO"


def dump_dir() -> str | None:
    """The folder from ``TOOLKIT_DUMP_IR_TO``, or None when dumping is off."""
    return os.environ.get(DUMP_ENV) or None


def maybe_dump(stage_name: str, module_or_text: Any) -> str | None:
    """Write ``module_or_text`` to the dump folder if one is set; return the path.

    ``module_or_text`` is an ``ir.Module``, an ``ir.Operation``, ``str`` or
    ``bytes`` (bytecode is written as ``.mlirbc``). Files are numbered in call
    order across the process so the stages of one compilation sort together.
    """
    folder = dump_dir()
    if folder is None:
        return None
    os.makedirs(folder, exist_ok=True)
    with _lock:
        number = next(_counter)
    safe = re.sub(r"[^A-Za-z0-9_.\-]+", "_", stage_name).strip("_") or "stage"
    if isinstance(module_or_text, (bytes, bytearray)):
        path = os.path.join(folder, f"{number:04d}_{safe}.mlirbc")
        with open(path, "wb") as f:
            f.write(module_or_text)
        return path
    text = module_or_text if isinstance(module_or_text, str) else str(module_or_text)
    path = os.path.join(folder, f"{number:04d}_{safe}.mlir")
    with open(path, "w") as f:
        f.write(text)
    return path
