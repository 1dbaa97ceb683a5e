"""The special values automatic differentiation passes around.

``Zero(aval)`` is a *symbolic* zero tangent or cotangent: it costs nothing,
and rules skip the work it would feed. ``UndefinedPrimal(aval)`` marks, in a
transpose rule, the operand the program is linear in: its value is unknown,
only its cotangent is wanted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.lax import structural
from toolkit.core import sharding_types
from toolkit.lax import elementwise


class Zero:
    """A tangent or cotangent known to be all zeros, of type ``aval``."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
    """The linear operand of a primitive being transposed (type ``aval``, value unknown)."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x: Any) -> bool:
    return isinstance(x, UndefinedPrimal)


def is_differentiable(aval: ShapedArray) -> bool:
    """Only floating and complex values carry tangents; integers and booleans have zero ones."""
    return dtypes.is_inexact(aval.dtype)


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    return aval.strip_weak_type() if hasattr(aval, "strip_weak_type") else aval


def zeros(aval: ShapedArray) -> Any:
    """A materialized zero array of ``aval``: a broadcast of a scalar literal, cheap in any trace.

    An explicitly sharded ``aval`` gives zeros of that type (as JAX's ``zeros_like_aval``), so a
    cotangent accumulated into them (gather's transpose, say) keeps the primal's sharding.
    """
    if getattr(aval, "sharding", None) is None:
        return structural.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())
    with sharding_types.out_sharding_override("broadcast_in_dim", aval.sharding):
        return structural.broadcast_in_dim(np.zeros((), aval.dtype), aval.shape, ())


def instantiate(value: Any, aval: ShapedArray | None = None) -> Any:
    """``value`` itself, or real zeros when it is a symbolic ``Zero``."""
    if isinstance(value, Zero):
        return zeros(value.aval)
    return value


def add_any(a: Any, b: Any) -> Any:
    """The sum of two (co)tangents of the same type, either of which may be a symbolic zero."""
    if isinstance(a, Zero):
        return b
    if isinstance(b, Zero):
        return a
    return elementwise.add(a, b)


def value_aval(x: Any) -> ShapedArray:
    if isinstance(x, (Zero, UndefinedPrimal)):
        return x.aval
    return aval_of(x)
