"""``toolkit.typing``: annotation types for code that takes arrays and dtypes (``jax.typing``).

``ArrayLike`` is what toolkit's functions accept as an array: toolkit Arrays and tracers, numpy arrays and
scalars, and Python scalars (not lists, nor strings, as JAX's). ``DTypeLike`` is what they accept as a dtype.

Example::

    from toolkit.typing import ArrayLike, DTypeLike

    def scale(x: ArrayLike, dtype: DTypeLike = "float32") -> toolkit.Array:
        return toolkit.numpy.asarray(x, dtype) * 2
"""

from __future__ import annotations

import typing
from typing import Any, Protocol, Union

import numpy as np

from toolkit.array import Array
from toolkit.core.tracing import Tracer

__all__ = ["ArrayLike", "DTypeLike", "SupportsDType"]


@typing.runtime_checkable
class SupportsDType(Protocol):
    """Anything with a ``dtype`` (``toolkit.numpy.float32`` and other scalar types)."""

    @property
    def dtype(self, /) -> np.dtype:
        """The dtype it names."""


#: A dtype, or what names one: ``"float32"``, ``np.float32``, ``float``, ``np.dtype("int8")``, ``tnp.bfloat16``.
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

#: What converts to a toolkit array implicitly: Arrays, tracers, numpy arrays and scalars, Python scalars.
ArrayLike = Union[Array, Tracer, np.ndarray, np.bool_, np.number, bool, int, float, complex]
