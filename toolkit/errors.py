"""``toolkit.errors``: the exception classes JAX users catch, where ``jax.errors`` has them.

The classes are defined where they are raised (the tracer in ``toolkit.core.tracing``, dtype promotion in
``toolkit.core.dtypes``); this module names them in one place::

    try:
        toolkit.jit(lambda x: 1 if x > 0 else 2)(1.0)
    except toolkit.errors.TracerBoolConversionError:
        ...
"""

from __future__ import annotations

from toolkit.core.dtypes import TypePromotionError
from toolkit.core.tracing import (
    ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError", "TracerArrayConversionError", "TracerBoolConversionError",
    "TracerIntegerConversionError", "TypePromotionError", "UnexpectedTracerError",
]
