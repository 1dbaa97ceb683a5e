"""Shared pieces of shape rules: operand checks with messages that name the operand."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.shape_poly import InconclusiveDimensionOperation, max_dim


def same_shapes(name: str, *avals: ShapedArray) -> tuple:
    shape = avals[0].shape
    for i, a in enumerate(avals[1:], 1):
        if a.shape != shape:
            shapes = ", ".join(str(x.shape) for x in avals)
            raise TypeError(f"{name} requires operands of equal shapes, got {shapes} (operand {i} differs)")
    return shape


def same_dtypes(name: str, *avals: ShapedArray) -> np.dtype:
    dtype = avals[0].dtype
    for i, a in enumerate(avals[1:], 1):
        if a.dtype != dtype:
            kinds = ", ".join(x.dtype.name for x in avals)
            raise TypeError(f"{name} requires operands of equal dtypes, got {kinds} (operand {i} differs)")
    return dtype


def all_weak(*avals: ShapedArray) -> bool:
    return all(a.weak_type for a in avals)


def check_dtype(name: str, aval: ShapedArray, allowed: str, what: str = "operand") -> None:
    """``allowed`` is a string of kinds: b(ool) i(nt) u(nsigned) f(loat) c(omplex)."""
    dtype = aval.dtype
    kind = dtypes.kind_of(dtype) if dtype != dtypes.float0 else dtype.kind  # ml_dtypes' types: numpy says "V"
    if kind not in allowed:
        names = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "floating", "c": "complex"}
        wanted = " or ".join(names[k] for k in allowed)
        raise TypeError(f"{name} requires a {wanted} {what}, got {dtype.name}")


def check_axes(name: str, axes: Sequence[int], ndim: int, what: str = "axis") -> None:
    for a in axes:
        if not 0 <= a < ndim:
            raise ValueError(f"{name}: {what} {a} is out of bounds for an operand of rank {ndim}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated {what} in {tuple(axes)}")


def canonical_params(params: dict[str, Any]) -> dict[str, Any]:
    """Lists to tuples, so parameters hash (jit caches eager primitive calls by them)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()}


def known_false(predicate: Callable[[], Any]) -> bool:
    """True when ``predicate()`` is definitely false.

    A comparison of symbolic dimensions that the constraints cannot decide
    (``b >= 2`` for a bare ``b``) counts as not known false: shape rules use
    this for bounds checks, so a symbolic size is trusted where a static one
    would be checked (JAX does the same; the run-time shapes are checked when
    the module is specialized).

    Example::

        if known_false(lambda: 0 <= start <= limit <= size):
            raise TypeError("slice out of bounds")
    """
    try:
        return not predicate()
    except InconclusiveDimensionOperation:
        return False


def dim_param(v: Any) -> Any:
    """A size or offset parameter: an int, or a symbolic dimension kept as is (``x.shape[0] - 1``).

    Example::

        slice_sizes = tuple(dim_param(s) for s in slice_sizes)
    """
    if getattr(v, "_is_symbolic_dim", False):
        return v
    return int(v)


def window_count(size: Any, window: Any, stride: int) -> Any:
    """How many windows of ``window`` elements, ``stride`` apart, fit in ``size`` (0 when none does).

    For symbolic sizes this is ``max((size - window) // stride + 1, 0)``, which
    needs no decision: the quotient is at most 0 exactly when ``size < window``.

    Example::

        window_count(5, 2, 2)   # -> 2
    """
    if type(size) is int and type(window) is int:
        return 0 if size < window else (size - window) // stride + 1
    return max_dim((size - window) // stride + 1, 0)
