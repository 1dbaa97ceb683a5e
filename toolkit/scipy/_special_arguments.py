"""Argument handling shared by ``toolkit.scipy.special``'s modules: JAX's ``promote_args_inexact``, and
Horner's rule (``jnp.polyval``) for the rational approximations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.numpy._core import check_arraylike, promote_and_broadcast, promote_inexact


def inexact(name: str, *args: Any, real: bool = False) -> list[Any]:
    """``args`` as arrays of their common inexact dtype, broadcast together (JAX's promote_args_inexact).

    Lists and tuples are JAX's ``TypeError``; ``real=True`` refuses complex values with JAX's ``ValueError``.
    """
    check_arraylike(name, *args)  # JAX's TypeError and message for a list or tuple
    out = promote_inexact(*args)
    if len(out) > 1:
        out = promote_and_broadcast(*out, fun_name=name)
    out = [tnp.asarray(a) for a in out]
    if real and dtypes.is_complex(out[0].dtype):
        raise ValueError(f"{name} does not support complex-valued inputs.")
    return out


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """JAX's ``promote_dtypes_inexact``: the arguments as arrays of their common inexact dtype, not broadcast;
    lists and tuples have no dtype there (JAX's ``TypeError``)."""
    for a in args:
        if isinstance(a, (list, tuple)):
            raise TypeError(f"Cannot determine dtype of {a}")
    return [tnp.asarray(a) for a in promote_inexact(*args)]


def polyval(coefficients: Sequence[float] | np.ndarray, x: Any) -> Any:
    """``sum c[i] x**(n-1-i)`` by Horner's rule, highest degree first: ``jnp.polyval`` of the coefficients in
    ``x``'s dtype, as JAX's special functions call it (so an eager call is one program there as here, and the
    special function called eagerly rounds as JAX's does)."""
    x = tnp.asarray(x)
    return tnp.polyval(np.asarray(coefficients).astype(x.dtype), x)
