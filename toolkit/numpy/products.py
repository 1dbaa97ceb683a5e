"""Vector products of ``jax.numpy``: ``cross``, ``kron``, ``vander`` and the
array-API ``vecdot`` (conjugating its first operand), ``matvec`` and ``vecmat``,
all with numpy broadcasting of the batch dimensions. Example::

    tnp.cross(a, b)                # (..., 3) x (..., 3)
    tnp.matvec(m, v)               # (..., n, k) @ (..., k)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.lax import reductions as lax_reductions
from toolkit.lax import structural as lax_structural
from toolkit.numpy._core import asarray, promote_and_broadcast
from toolkit.numpy import linalg, shapes, ufuncs


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """Cross product of 2- or 3-vectors along ``axisa``/``axisb``, result vectors along ``axisc``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a = shapes.moveaxis(asarray(a), axisa, -1)
    b = shapes.moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return ufuncs.subtract(ufuncs.multiply(a[..., 0], b[..., 1]), ufuncs.multiply(a[..., 1], b[..., 0]))
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else ufuncs.multiply(a0, 0)
    b2 = b[..., 2] if b.shape[-1] == 3 else ufuncs.multiply(b0, 0)
    mul, sub = ufuncs.multiply, ufuncs.subtract
    c = shapes.stack(promote_and_broadcast(sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                                           sub(mul(a0, b1), mul(a1, b0))))
    return shapes.moveaxis(c, 0, axisc)


def kron(a: Any, b: Any) -> Any:
    """Kronecker product: blocks ``a[i, j] * b``."""
    a, b = asarray(a), asarray(b)
    if a.ndim < b.ndim:
        a = lax_structural.reshape(a, (1,) * (b.ndim - a.ndim) + tuple(a.shape))
    elif b.ndim < a.ndim:
        b = lax_structural.reshape(b, (1,) * (a.ndim - b.ndim) + tuple(b.shape))
    nd = a.ndim
    a_r = lax_structural.reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b_r = lax_structural.reshape(b, tuple(d for s in b.shape for d in (1, s)))
    out = ufuncs.multiply(a_r, b_r)
    return lax_structural.reshape(out, tuple(a.shape[i] * b.shape[i] for i in range(nd)))


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1), ..., x**0`` (reversed if ``increasing``)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else int(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = np.arange(N) if increasing else np.arange(N - 1, -1, -1)
    cols = [ufuncs.power(x, int(p)) for p in powers]
    if not cols:
        return asarray(np.zeros((x.shape[0], 0), x.dtype))
    return shapes.stack(cols, -1)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``sum(conj(x1) * x2, axis)`` with the batch dimensions broadcast."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with axis={axis}")
    x1, x2 = shapes.moveaxis(x1, axis, -1), shapes.moveaxis(x2, axis, -1)
    x1, x2 = promote_and_broadcast(ufuncs.conj(x1), x2)
    prod = ufuncs.multiply(x1, x2)
    if preferred_element_type is not None:
        prod = asarray(prod, dtypes.canonicalize_dtype(preferred_element_type))
    return lax_reductions.reduce_sum(prod, (prod.ndim - 1,))


def matvec(x1: Any, x2: Any, /) -> Any:
    """Batched matrix-vector product ``(..., n, k) x (..., k) -> (..., n)``."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: operands of rank >= 2 and >= 1 needed, got shapes {x1.shape} and {x2.shape}")
    out = linalg.matmul(x1, shapes.expand_dims(x2, -1))
    return shapes.squeeze(out, -1)


def vecmat(x1: Any, x2: Any, /) -> Any:
    """Batched vector-matrix product ``conj(x1) (..., k) x (..., k, n) -> (..., n)``."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: operands of rank >= 1 and >= 2 needed, got shapes {x1.shape} and {x2.shape}")
    out = linalg.matmul(shapes.expand_dims(ufuncs.conj(x1), -2), x2)
    return shapes.squeeze(out, -2)

