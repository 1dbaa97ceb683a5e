"""``log(exp(x) + exp(y))`` and its base-2 form without overflow, real and complex, as JAX computes them.

JAX's ``jax._src.lax.other.logaddexp``/``logaddexp2`` (what ``jnp.logaddexp``, ``jnp.logaddexp2`` and
``lax.cumlogsumexp`` use), op for op, so results agree bit for bit: for real operands the larger one plus
``log1p(exp(-|x - y|))``, with ``x + y`` where ``x - y`` is NaN (NaNs, or infinities of one sign); for complex
ones the larger by JAX's lexicographic order plus ``log1p(exp(x + y - 2 max))``, the imaginary part wrapped into
``[-pi, pi]`` (``[-pi/log 2, pi/log 2]`` in base 2).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise as lax
from toolkit.lax import structural


def _wrap_between(x: Any, bound: float) -> Any:
    """``x`` wrapped into ``[-bound, bound]`` (JAX's ``_wrap_between``)."""
    shifted = lax.rem(lax.add(x, structural.typed_scalar(x, bound)), structural.typed_scalar(x, 2 * bound))
    shifted = lax.select(lax.lt(shifted, structural.typed_scalar(x, 0)), lax.add(shifted, structural.typed_scalar(x, 2 * bound)), shifted)
    return lax.sub(shifted, structural.typed_scalar(x, bound))


def _checked(name: str, x: Any, y: Any) -> np.dtype:
    dtype, other = aval_of(x).dtype, aval_of(y).dtype
    if dtype != other:
        raise TypeError(f"{name} requires operands of one dtype, got {dtype.name} and {other.name}")
    if not dtypes.is_inexact(dtype):
        raise ValueError(f"{name} requires floating-point or complex inputs; got {dtype.name}")
    return dtype


def logaddexp(x: Any, y: Any) -> Any:
    """``log(exp(x) + exp(y))`` of two operands of one floating or complex dtype."""
    dtype = _checked("logaddexp", x, y)
    amax = lax.max(x, y)
    if not dtypes.is_complex(dtype):
        delta = lax.sub(x, y)
        return lax.select(lax.ne(delta, delta), lax.add(x, y),
                          lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(delta))))))
    delta = lax.sub(lax.add(x, y), lax.mul(amax, structural.typed_scalar(amax, 2)))
    out = lax.add(amax, lax.log1p(lax.exp(delta)))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi))


def logaddexp2(x: Any, y: Any) -> Any:
    """``log2(exp2(x) + exp2(y))`` of two operands of one floating or complex dtype."""
    dtype = _checked("logaddexp2", x, y)
    amax = lax.max(x, y)
    inverse_log2 = structural.typed_scalar(amax, 1 / np.log(2))
    if not dtypes.is_complex(dtype):
        delta = lax.sub(x, y)
        return lax.select(lax.ne(delta, delta), lax.add(x, y),
                          lax.add(amax, lax.mul(inverse_log2, lax.log1p(lax.exp2(lax.neg(lax.abs(delta)))))))
    delta = lax.sub(lax.add(x, y), lax.mul(amax, structural.typed_scalar(amax, 2)))
    out = lax.add(amax, lax.mul(inverse_log2, lax.log1p(lax.exp2(delta))))
    return lax.complex(lax.real(out), _wrap_between(lax.imag(out), np.pi / np.log(2)))
