"""``toolkit.compute_on``: run the ops of a region on another compute type, as ``jax.experimental.compute_on``.

``with toolkit.compute_on("device_host"): y = g(x)`` (``g`` a ``jit`` function,
called inside a traced function or eagerly) records the compute type on every
equation traced inside (``SourceInfo.compute_type``); the lowering marks their
ops, and the ``func.call`` of a nested ``jit``, with
``mhlo.frontend_attributes = {_xla_compute_type = "host"}`` exactly as JAX
0.10.2 does (``device`` is ``"dense"``, ``tpu_sparsecore`` ``"sparseoffload"``,
``gpu_stream:N`` an ``_xla_stream_annotation``), and XLA places those
computations. jaxlib 0.10.2's CPU backend compiles and runs such a program (its
host is the device), as it does JAX's. Transformations keep an equation's
compute type when they bind it again.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from toolkit.core import tracing

__all__ = ["compute_on", "frontend_attributes"]

#: compute_on's types and the ``_xla_compute_type`` XLA reads (jax/_src/interpreters/mlir.py map_compute_type).
_XLA_COMPUTE_TYPES = {"device_host": "host", "device": "dense", "tpu_sparsecore": "sparseoffload"}


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Equations traced inside run on ``compute_type``: ``"device_host"``, ``"device"``, ``"tpu_sparsecore"`` or
    ``"gpu_stream:<n>"`` (JAX's values and errors: a non-string is a ``TypeError``, another string a
    ``ValueError``). Outside a trace it changes nothing for ops run one by one, as in JAX."""
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in _XLA_COMPUTE_TYPES and not compute_type.startswith("gpu_stream:"):
        raise ValueError(f"Invalid compute type {compute_type}. Current supported values are `device_host`, "
                         "`device`, `tpu_sparsecore`, and `gpu_stream:#`.")
    with tracing.compute_type_context(compute_type):
        yield


def frontend_attributes(compute_type: str) -> dict[str, str]:
    """The ``mhlo.frontend_attributes`` entries JAX writes on an op of ``compute_type``."""
    if compute_type.startswith("gpu_stream:"):
        return {"_xla_stream_annotation": compute_type.split(":", 1)[1], "inlineable": "false"}
    return {"_xla_compute_type": _XLA_COMPUTE_TYPES[compute_type]}
