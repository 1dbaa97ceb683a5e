"""Rounding half to even: ``jnp.round``/``around`` to decimal places and ``rint``, with JAX's types and errors
(``round`` keeps integers and refuses booleans, ``rint`` makes them floats; complex numbers round part by part).
``trunc`` and ``modf`` are in ``toolkit.numpy.ufuncs``."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import elementwise as lax_elementwise
from toolkit.numpy._core import asarray, check_arraylike, is_array
from toolkit.numpy.ufuncs import constant_like


@compiled_whole(static_argnames=("decimals",))
def round(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Round half to even to ``decimals`` places, as ``jnp.round``: integers are returned as they are (negative
    ``decimals`` on them is JAX's ``NotImplementedError``), booleans are JAX's ``ValueError``, complex numbers
    round their real and imaginary parts, float16 scales in float32, and ``decimals`` beyond the type's range is
    a no-op (not ``inf / inf``). ``out`` is numpy's; JAX accepts only None (``NotImplementedError`` otherwise)."""
    check_arraylike("round", a)
    decimals = operator.index(decimals)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    x = asarray(a) if not is_array(a) else a
    if dtypes.is_integer(x.dtype):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return x
    if not dtypes.is_inexact(x.dtype):
        raise ValueError(f"data type {x.dtype.type} not inexact")  # JAX's (from finfo)
    if decimals > np.log10(float(dtypes.finfo(x.dtype).max)):
        return x

    def round_real(part: Any) -> Any:
        if decimals == 0:
            return lax_elementwise.round(part, 1)
        wide = lax_elementwise.convert_element_type(part, dtypes.float32, weak_type=part.weak_type) \
            if part.dtype == dtypes.float16 else part
        factor = constant_like(wide, 10.0 ** decimals)
        out = lax_elementwise.div(lax_elementwise.round(lax_elementwise.mul(wide, factor), 1), factor)
        return lax_elementwise.convert_element_type(out, part.dtype, weak_type=part.weak_type) \
            if part.dtype == dtypes.float16 else out
    if dtypes.is_complex(x.dtype):
        return lax_elementwise.complex(round_real(lax_elementwise.real(x)), round_real(lax_elementwise.imag(x)))
    return round_real(x)


@compiled_whole(static_argnames=("decimals",))
def around(a: Any, decimals: int = 0, out: None = None) -> Any:
    """Alias of :func:`round` (``jnp.around``; its ``out`` error names ``jnp.round``, as JAX's)."""
    return round(a, decimals, out)


@compiled_whole()
def rint(x: Any, /) -> Any:
    """Round half to even; integers and bools become the default float, as in JAX."""
    check_arraylike("rint", x)
    x = asarray(x)
    if not dtypes.is_inexact(x.dtype):
        return lax_elementwise.convert_element_type(x, dtypes.default_float_dtype())
    if dtypes.is_complex(x.dtype):
        return lax_elementwise.complex(lax_elementwise.round(lax_elementwise.real(x), 1),
                                       lax_elementwise.round(lax_elementwise.imag(x), 1))
    return lax_elementwise.round(x, 1)
