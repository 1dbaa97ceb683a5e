"""numpy's polynomial functions as ``jax.numpy`` has them (coefficients highest power first): ``poly``,
``polyadd``, ``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``polyval``, ``polyfit``
and ``roots`` (eigenvalues of the companion matrix).

Example::

    tnp.polyval(tnp.asarray([1.0, 0.0, -2.0]), 3.0)     # 3**2 - 2 = 7
    tnp.roots(tnp.asarray([1.0, -3.0, 2.0]))             # [2, 1] (complex)
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.tracing import ConcretizationTypeError, known_value
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy import creation, diagonals, linalg, reductions, scatter, shapes, signal, sorting, tensor_contractions, ufuncs
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array, promote_inexact, result_dtype
from toolkit.numpy.array_editing import trim_zeros


def _arrays(name: str, *xs: Any) -> list[Any]:
    check_arraylike(name, *xs)
    return [x if is_array(x) else asarray(x) for x in xs]


def _inexact(name: str, *xs: Any) -> list[Any]:
    return [asarray(x) for x in promote_inexact(*_arrays(name, *xs))]


def _promoted(name: str, *xs: Any) -> list[Any]:
    arrays = _arrays(name, *xs)
    dtype, weak = result_dtype(*arrays)
    return [asarray(convert(x, dtype, weak)) for x in arrays]


def _static_index(value: Any, what: str) -> int:
    if known_value(value) is None:
        raise ConcretizationTypeError(f"the {what} must be static (a Python int), not a traced value")
    return operator.index(value)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    if dtypes.is_complex(dtype):
        return dtype
    return dtypes.canonicalize_dtype(np.complex128 if dtype == np.float64 else np.complex64)


@compiled_whole()
def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (or a square matrix's characteristic
    polynomial), as ``jnp.poly``."""
    (zeros,) = _inexact("poly", seq_of_zeros)
    zeros = shapes.atleast_1d(zeros)
    if zeros.ndim == 2 and zeros.shape[0] == zeros.shape[1] and zeros.shape[0] != 0:
        zeros = linalg.eigvals(zeros)
    if zeros.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = zeros.dtype
    if zeros.shape[0] == 0:
        return creation.ones((), dt)
    a = creation.ones((1,), dt)
    for k in range(zeros.shape[0]):
        a = signal.convolve(a, shapes.stack([asarray(np.ones((), dt)), ufuncs.negative(zeros[k])]), mode="full")
    return a


@compiled_whole(static_argnames=("unroll",))
def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """``p`` evaluated at ``x`` by Horner's rule (``p``'s trailing axes broadcast with ``x``), as
    ``jnp.polyval``; ``unroll`` is accepted for JAX's signature (the loop is unrolled at trace time)."""
    p, x = _promoted("polyval", p, x)
    shape = tuple(np.broadcast_shapes(tuple(p.shape[1:]), tuple(x.shape)))
    # JAX's accumulator: full_like(x, 0, dtype=x.dtype), strong even for a weak x, so the result is never weak.
    y = creation.zeros(shape, x.dtype)
    for k in range(p.shape[0]):
        y = ufuncs.add(ufuncs.multiply(y, x), p[k])
    return y


@compiled_whole()
def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (the shorter padded at the front), as ``jnp.polyadd``."""
    a1, a2 = _promoted("polyadd", a1, a2)
    if a2.shape[0] <= a1.shape[0]:
        return scatter.at_property(a1)[a1.shape[0] - a2.shape[0]:].add(a2)
    return scatter.at_property(a2)[a2.shape[0] - a1.shape[0]:].add(a1)


@compiled_whole()
def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials, as ``jnp.polysub``."""
    a1, a2 = _promoted("polysub", a1, a2)
    return polyadd(a1, ufuncs.negative(a2))


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (a convolution), as ``jnp.polymul``; ``trim_leading_zeros`` needs
    concrete inputs."""
    a1, a2 = _inexact("polymul", a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = creation.zeros((1,), a2.dtype)
    if a2.shape[0] == 0:
        a2 = creation.zeros((1,), a1.dtype)
    return signal.convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """``(quotient, remainder)`` of the polynomial division ``u / v``, as ``jnp.polydiv`` (the remainder
    keeps ``u``'s length unless ``trim_leading_zeros``, which needs concrete inputs)."""
    u, v = _inexact("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = ufuncs.divide(np.ones((), u.dtype), v[0])
    q = creation.zeros((max(m - n + 1, 1),), u.dtype)
    for k in range(0, m - n + 1):
        d = ufuncs.multiply(scale, u[k])
        q = scatter.at_property(q)[k].set(d)
        u = scatter.at_property(u)[k:k + n + 1].add(ufuncs.negative(ufuncs.multiply(d, v)))
    if trim_leading_zeros:
        values = known_value(u)  # a concrete trace (eager grad) knows it
        if values is None:
            raise ConcretizationTypeError("polydiv(trim_leading_zeros=True) needs concrete inputs")
        values = np.asarray(values)
        tol = np.sqrt(dtypes.finfo(u.dtype).eps)
        big = np.flatnonzero(np.abs(values) >= tol)
        u = u[int(big[0]):] if big.size else u[u.shape[0]:]
    return q, u


@compiled_whole(static_argnames=("m",))
def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of ``p``, as ``jnp.polyder``; a negative ``m`` is a ``ValueError``."""
    (p,) = _inexact("polyder", p)
    m = _static_index(m, "'m' argument of jnp.polyder")
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    coeff = (np.arange(m, n)[np.newaxis] - np.arange(m)[:, np.newaxis]).prod(0)[::-1]
    return ufuncs.multiply(p[:n - m], asarray(coeff.astype(p.dtype)))


@compiled_whole(static_argnames=("m",))
def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of ``p`` with integration constants ``k`` (a scalar or ``m`` values),
    as ``jnp.polyint``."""
    m = _static_index(m, "'m' argument of jnp.polyint")
    p, k = _inexact("polyint", p, 0 if k is None else k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = shapes.atleast_1d(k)
    if k.shape[0] == 1:
        k = creation.full((m,), k[0], k.dtype)
    if tuple(k.shape) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    grid = np.arange(p.shape[0] + m)[np.newaxis] - np.arange(m)[:, np.newaxis]
    coeff = np.maximum(1, grid).prod(0)[::-1]
    return ufuncs.true_divide(shapes.concatenate([p, k]), asarray(coeff.astype(p.dtype)))


@compiled_whole(static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: bool | str = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through ``(x, y)`` (``y`` 1-D or one column per
    fit), optionally weighted by ``w``, as ``jnp.polyfit``; ``full`` adds the residuals, rank, singular
    values and ``rcond``, ``cov`` the coefficients' covariance."""
    x, y = _arrays("polyfit", x, y)
    deg = _static_index(deg, "deg of jnp.polyfit")
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    (x_inexact,) = promote_inexact(x)
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(asarray(x_inexact).dtype).eps)
    lhs = creation.vander(x, order)
    rhs = y
    if w is not None:
        (w,) = _inexact("polyfit", w)
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = ufuncs.multiply(lhs, w[:, None])
        rhs = ufuncs.multiply(rhs, w[:, None] if rhs.ndim == 2 else w)
    scale = ufuncs.sqrt(reductions.sum(ufuncs.multiply(lhs, lhs), axis=0))
    lhs = ufuncs.divide(lhs, scale[None, :])
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = shapes.transpose(ufuncs.divide(shapes.transpose(c), scale[None, :])) if c.ndim > 1 else ufuncs.divide(c, scale)
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = ufuncs.divide(linalg.inv(tensor_contractions.dot(shapes.transpose(lhs), lhs)),
                              tensor_contractions.outer(scale, scale))
        if cov == "unscaled":
            fac = asarray(1.0)
        else:
            if x.shape[0] <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = ufuncs.divide(resids, x.shape[0] - order)
        if y.ndim == 1:
            return c, ufuncs.multiply(vbase, shapes.atleast_1d(fac)[None])
        return c, ufuncs.multiply(vbase[:, :, None], shapes.atleast_1d(fac)[None, None, :])
    return c


def _roots_no_zeros(p: Any) -> Any:
    if p.shape[0] < 2:
        return creation.zeros((0,), _complex_dtype(p.dtype))
    a = diagonals.diag(creation.ones((p.shape[0] - 2,), p.dtype), -1)
    a = scatter.at_property(a)[0, :].set(ufuncs.divide(ufuncs.negative(p[1:]), p[0]))
    return linalg.eigvals(a)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The complex roots of the polynomial ``p`` (eigenvalues of its companion matrix), as ``jnp.roots``.
    With ``strip_zeros`` leading zeros are removed (``p`` must be concrete); without, under ``jit``, the
    roots they would hide come back as NaN."""
    (p,) = _inexact("roots", p)
    p = shapes.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = p.shape[0]
    if n < 2:
        return creation.zeros((0,), _complex_dtype(p.dtype))
    is_zero = ufuncs.equal(p, 0)
    leading = ufuncs.where(reductions.all(is_zero), n, reductions.argmin(is_zero))
    if strip_zeros:
        if known_value(leading) is None:
            raise ConcretizationTypeError(
                "The error occurred in the jnp.roots() function. To use this within a JIT-compiled context, pass "
                "strip_zeros=False, but be aware that leading zeros will result in some returned roots being set "
                "to NaN.")
        return _roots_no_zeros(p[int(leading):])
    p = ufuncs.where(ufuncs.equal(leading, n), np.ones((), p.dtype), p)
    found = _roots_no_zeros(shapes.roll(p, ufuncs.negative(leading)))
    order = sorting.argsort(ufuncs.equal(found, 0), stable=True)
    found = found[order]
    valid = ufuncs.less(asarray(np.arange(found.shape[0])), ufuncs.subtract(found.shape[0], leading))
    return ufuncs.where(valid, found, asarray(np.asarray(complex(np.nan, np.nan), found.dtype)))
