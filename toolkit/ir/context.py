"""The MLIR context every part of toolkit builds and parses IR in.

Creating a context with the StableHLO, CHLO, Shardy and MHLO dialects costs
about 4 ms, so lowering reuses one. But a context keeps every uniqued type and
attribute for as long as it lives, so the shared one is retired after
``MAX_USES`` uses and a fresh one takes its place; modules made in the old one
keep it alive for as long as they need it.

Example::

    from toolkit.ir import context
    with context.shared_context() as ctx, ir.Location.unknown():
        module = ir.Module.parse(text)
"""

from __future__ import annotations

import threading

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
from jaxlib.mlir.dialects import chlo, mhlo, sdy, stablehlo

#: How many times the shared context is handed out before it is replaced.
MAX_USES = 200

_passes_registered = False
_lock = threading.Lock()


def _register_passes_once() -> None:
    global _passes_registered
    if not _passes_registered:
        stablehlo.register_stablehlo_passes()
        _passes_registered = True


def make_context() -> ir.Context:
    """A new context with every dialect toolkit reads or writes loaded."""
    _register_passes_once()
    context = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    chlo.register_dialect(context)
    sdy.register_dialect(context)
    mhlo.register_mhlo_dialect(context)
    # Errors from passes that still succeed would otherwise be dropped.
    context.emit_error_diagnostics = True
    return context


class _SharedContext:
    def __init__(self) -> None:
        self.context: ir.Context | None = None
        self.uses = 0

    def get(self) -> ir.Context:
        with _lock:
            if self.context is None or self.uses >= MAX_USES:
                self.context = make_context()
                self.uses = 0
            self.uses += 1
            return self.context


_shared = _SharedContext()


def shared_context() -> ir.Context:
    """The process-wide context, replaced after ``MAX_USES`` hand-outs.

    Use it as ``with shared_context():`` so builders find it implicitly.
    """
    return _shared.get()
