"""``toolkit.errors``: the exception classes JAX users catch, where ``jax.errors`` has them.

The classes are defined where they are raised (the tracer in ``toolkit.core.tracing``, dtype promotion in
``toolkit.core.dtypes``, shape polymorphism in ``toolkit.core.shape_poly``, the others in
``toolkit.core.error_classes``); :class:`JaxRuntimeError` is jaxlib's own class, the one XLA and PJRT errors
(and disallowed transfers) raise — the same object as ``jax.errors.JaxRuntimeError``. This module names them
in one place::

    try:
        toolkit.jit(lambda x: 1 if x > 0 else 2)(1.0)
    except toolkit.errors.TracerBoolConversionError:
        ...
"""

from __future__ import annotations

from toolkit.core.dtypes import TypePromotionError
from toolkit.core.error_classes import (
    JAXIndexError, JAXTypeError, JaxprTypeError, KeyReuseError, NonConcreteBooleanIndexError,
)
from toolkit.core.shape_poly import InconclusiveDimensionOperation
from toolkit.core.tracing import (
    ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError, TracerIntegerConversionError,
    UnexpectedTracerError,
)
from toolkit.runtime import JaxRuntimeError

__all__ = [
    "ConcretizationTypeError", "InconclusiveDimensionOperation", "JAXIndexError", "JAXTypeError",
    "JaxRuntimeError", "JaxprTypeError", "KeyReuseError", "NonConcreteBooleanIndexError",
    "TracerArrayConversionError", "TracerBoolConversionError", "TracerIntegerConversionError",
    "TypePromotionError", "UnexpectedTracerError",
]
