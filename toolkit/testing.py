"""Small helpers for FileCheck tests written as Python scripts (the MLIR-bindings idiom).

Example (a file under ``test/lit/``)::

    # RUN: %PYTHON %s | filecheck %s
    from toolkit.testing import run, lowered_text, spec

    @run
    def add():
        # CHECK-LABEL: TEST: add
        # CHECK: stablehlo.add
        print(lowered_text(lambda x, y: x + y, spec((2,), "float32"), spec((2,), "float32")))
"""

from __future__ import annotations

from typing import Any, Callable

from toolkit.core.avals import ShapeDtypeStruct
from toolkit.stages import jit


def run(case: Callable[[], Any]) -> Callable[[], Any]:
    """Print ``TEST: <name>`` and run the case at once (so CHECK-LABEL can anchor on it)."""
    print(f"TEST: {case.__name__}", flush=True)
    case()
    print(flush=True)
    return case


def spec(shape: Any, dtype: Any = "float32") -> ShapeDtypeStruct:
    """``ShapeDtypeStruct(shape, dtype)``: an abstract argument for ``trace``/``lower``/``export`` in tests."""
    return ShapeDtypeStruct(shape, dtype)


def lowered_text(fun: Callable[..., Any], *args: Any, debug_info: bool = False, **jit_kwargs: Any) -> str:
    """The StableHLO text of ``jit(fun)`` lowered for ``args``."""
    return jit(fun, **jit_kwargs).lower(*args).as_text(debug_info=debug_info)


def traced_text(fun: Callable[..., Any], *args: Any, **jit_kwargs: Any) -> str:
    """The traced program of ``jit(fun)`` for ``args``."""
    return jit(fun, **jit_kwargs).trace(*args).as_text()
