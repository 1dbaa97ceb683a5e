"""``jax.scipy.linalg``'s special matrices, built from their defining entries.

From vectors (batched over leading dimensions, as JAX's ``jnp.vectorize`` of the one-vector case):
``toeplitz``, ``hankel``, ``circulant``, ``leslie``, ``companion``, ``fiedler``, ``fiedler_companion``,
``convolution_matrix``; from blocks: ``block_diag``; from a size alone (the size is static, as JAX's ``jit``
makes it): ``hilbert``, ``invhilbert``, ``pascal``, ``invpascal``, ``helmert``, ``hadamard``, ``dft``.

JAX's algorithms are kept, so the values agree with JAX's bit for bit where the arithmetic is the same:
Toeplitz and Hankel matrices are the patches of a convolution (an identity kernel at HIGHEST precision, so an
infinite entry spreads NaN along its window as in JAX), binomial coefficients come from ``lgamma`` (inexact for
large sizes, SciPy's ``exact=True`` is not offered), and nothing is checked at run time (a zero leading
coefficient gives ``companion`` infinities, not SciPy's error).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy._core import check_arraylike, convert, promote_inexact, result_dtype
from toolkit.scipy.special import comb

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion",
           "hadamard", "hankel", "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal", "toeplitz"]

_KINDS = ["symmetric", "lower", "upper"]


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of ``arrs`` (each at most two-dimensional), in their promoted dtype."""
    if len(arrs) == 0:
        arrs = (tnp.zeros((1, 0)),)
    arrays = [tnp.asarray(a) for a in arrs]
    bad = [i for i, a in enumerate(arrays) if a.ndim > 2]
    if bad:
        raise ValueError(f"Arguments to toolkit.scipy.linalg.block_diag must have at most 2 dimensions, got "
                         f"{arrays[bad[0]]} at argument {bad[0]}.")
    dtype = tnp.result_type(*arrays)
    arrays = [tnp.atleast_2d(a).astype(dtype) for a in arrays]
    total = sum(a.shape[1] for a in arrays)
    rows, col = [], 0
    for a in arrays:
        rows.append(tnp.pad(a, ((0, 0), (col, total - a.shape[1] - col))))
        col += a.shape[1]
    return tnp.concatenate(rows, axis=0)


# --- matrices from vectors ------------------------------------------------------------------------------------
# Each public function checks and converts its arguments, then calls a one-vector builder vectorized over the
# leading dimensions. The builders are compiled whole so an eager call is one program (JAX runs them op by op;
# the values are the same).

def _sliding_windows(values: Any, width: int) -> Any:
    """Row ``t`` is ``values[t:t + width]``: the patches of a VALID convolution with an identity kernel (JAX's
    way, kept so the arithmetic, and what an infinity does to its window, is the same)."""
    patches = lax.conv_general_dilated_patches(
        tnp.reshape(values, (1, values.shape[0], 1)), (width,), (1,), "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"), precision=lax.Precision.HIGHEST)
    return patches[0]


def _toeplitz_1d(c: Any, r: Any) -> Any:
    rows, cols = c.shape[0], r.shape[0]
    if rows == 0 or cols == 0:
        return tnp.empty((rows, cols), dtype=tnp.promote_types(c.dtype, r.dtype))
    # Windows of width cols over (c reversed, r[1:]); the last window is the first row, so flip.
    return tnp.flip(_sliding_windows(tnp.concatenate((c[::-1], r[1:])), cols), axis=0)


_toeplitz = compiled_whole()(tnp.vectorize(_toeplitz_1d, signature="(m),(n)->(m,n)"))


def toeplitz(c: Any, r: Any | None = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (``r[0]`` ignored): ``A[i, j]`` is
    ``c[i - j]`` below and on the diagonal, ``r[j - i]`` above it. ``r`` defaults to ``conj(c)`` (a Hermitian
    matrix when ``c[0]`` is real). Leading dimensions of ``c`` (``(..., N)``) and ``r`` (``(..., M)``)
    broadcast: the result is ``(..., N, M)``, in their promoted dtype."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = tnp.conjugate(tnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return _toeplitz(tnp.atleast_1d(tnp.asarray(c)), tnp.atleast_1d(tnp.asarray(r)))


def _hankel_1d(c: Any, r: Any) -> Any:
    rows, cols = c.shape[0], r.shape[0]
    if rows == 0 or cols == 0:
        return tnp.empty((rows, cols), dtype=tnp.result_type(c, r))
    return _sliding_windows(tnp.concatenate((c, r[1:])), cols)


_hankel = compiled_whole()(tnp.vectorize(_hankel_1d, signature="(m),(n)->(m,n)"))


def hankel(c: Any, r: Any | None = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (``r[0]`` ignored): ``H[i, j] = v[i + j]``
    for ``v = concatenate([c, r[1:]])``. ``r`` defaults to ``zeros_like(c)``. Both must be at least 1-D (a
    ``ValueError`` otherwise); leading dimensions broadcast, giving ``(..., N, M)``."""
    if r is None:
        check_arraylike("hankel", c)
        c = tnp.asarray(c)
        r = tnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = tnp.asarray(c), tnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    # Equal ranks, as JAX aligns them, so vectorize broadcasts without implicit rank promotion.
    if c.ndim < r.ndim:
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    return _hankel(c, r)


def _circulant_1d(c: Any) -> Any:
    n = c.shape[0]
    return c[(tnp.arange(n)[:, None] - tnp.arange(n)[None, :]) % n]


_circulant = compiled_whole()(tnp.vectorize(_circulant_1d, signature="(n)->(n,n)"))


def circulant(c: Any) -> Any:
    """The circulant matrix with first column ``c``: ``A[i, j] = c[(i - j) mod n]``; ``(..., N)`` gives
    ``(..., N, N)`` in ``c``'s dtype (a weakly typed scalar stays weak, as in JAX)."""
    check_arraylike("circulant", c)
    return _circulant(tnp.atleast_1d(tnp.asarray(c)))


def _leslie_1d(f: Any, s: Any) -> Any:
    dtype, weak = result_dtype(f, s)
    f, s = convert(f, dtype, weak), convert(s, dtype, weak)
    return tnp.diag(s, k=-1).at[0].set(f)


_leslie = compiled_whole()(tnp.vectorize(_leslie_1d, signature="(n),(m)->(n,n)"))


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities ``f`` (``(..., N)``, ``N >= 2``) as the first row, survivals ``s``
    (``(..., N - 1)``) on the first subdiagonal, zeros elsewhere; ``(..., N, N)`` in the promoted dtype."""
    check_arraylike("leslie", f, s)
    f_arr, s_arr = tnp.atleast_1d(f), tnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one less than "
                         f"the length of f; got f shape {f_arr.shape} and s shape {s_arr.shape}.")
    return _leslie(f_arr, s_arr)


def _companion_1d(a: Any) -> Any:
    first_row = -a[1:] / a[0]
    size = a.shape[0] - 1
    return tnp.eye(size, size, k=-1, dtype=first_row.dtype).at[0].set(first_row)


_companion = compiled_whole()(tnp.vectorize(_companion_1d, signature="(n)->(m,m)"))


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a`` (``(..., N)``, ``N >= 2``, highest
    power first): first row ``-a[1:] / a[0]``, ones on the first subdiagonal; ``(..., N - 1, N - 1)``, floating.
    ``a[0] == 0`` is not checked (infinities or NaN follow, as in JAX)."""
    check_arraylike("companion", a)
    (a,) = promote_inexact(tnp.asarray(a))
    a = tnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {a.shape}.")
    return _companion(a)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrix ``F[i, j] = |a[i] - a[j]|`` of ``a`` (``(..., N)`` gives ``(..., N, N)``;
    ``abs`` makes a complex ``a`` real)."""
    check_arraylike("fiedler", a)
    arr = tnp.atleast_1d(a)
    return tnp.abs(arr[..., None] - arr[..., None, :])


def _fiedler_companion_1d(a: Any) -> Any:
    n = a.shape[0] - 1
    if n == 0:
        return tnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -tnp.reshape(a[1:], (1, 1))
    # Every cell chosen on the full grid (static shapes under jit and vectorize). The pentadiagonal layout:
    #   [0, 0] = -a[1], [1, 0] = 1; for even i: [i, i+1] = -a[i+2], [i, i+2] = 1, and (i >= 2) [i, i-1] = -a[i+1];
    #   for odd i >= 3: [i, i-2] = 1.
    i = tnp.arange(n)[:, None]
    j = tnp.arange(n)[None, :]
    # Indices clipped so every lookup is in range; the conditions pick the cells that use them.
    above = -a[tnp.minimum(i + 2, n)]
    below = -a[tnp.minimum(i + 1, n)]
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = tnp.array(1, dtype=a.dtype), tnp.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even, (j == i + 2) & even,
                  (j == i - 1) & even & (i >= 2), (j == i - 2) & odd & (i >= 3)]
    return tnp.select(conditions, [-a[1], one, above, one, below, one], default=zero)


_fiedler_companion = compiled_whole()(tnp.vectorize(_fiedler_companion_1d, signature="(n)->(m,m)"))


def fiedler_companion(a: Any) -> Any:
    """The Fiedler companion matrix of the polynomial with coefficients ``a`` (``(..., N)``, highest power
    first): pentadiagonal, with the polynomial's roots as eigenvalues; ``(..., N - 1, N - 1)``, floating
    (``(0, 0)`` for ``N == 1``; a ``ValueError`` for ``N == 0``). ``a[0] == 0`` is not checked."""
    check_arraylike("fiedler_companion", a)
    (a,) = promote_inexact(tnp.asarray(a))
    a = tnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
                         f"array of shape {a.shape}.")
    return _fiedler_companion(a)


@compiled_whole(static_argnames=("n", "mode"))
def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrix ``A`` with ``n`` columns for which ``A @ v`` is ``convolve(a, v, mode)``.

    ``a`` is ``(..., m)`` with ``m >= 1``; the rows are ``m + n - 1`` (``'full'``), ``max(m, n)`` (``'same'``)
    or ``max(m, n) - min(m, n) + 1`` (``'valid'``). ``n`` must be a positive int.
    """
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = tnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad_widths = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    padded = tnp.pad(a_arr, pad_widths)
    padded_reversed = tnp.pad(tnp.flip(a_arr, axis=-1), pad_widths)
    full_rows = m + n - 1
    # How many rows of the 'full' matrix each mode drops at the top and at the bottom.
    if mode == "same":
        trimmed = min(n, m) - 1
        top = trimmed // 2
        bottom = trimmed - top
    elif mode == "valid":
        top = bottom = min(n, m) - 1
    else:
        top = bottom = 0
    first_column = lax.slice_in_dim(padded, top, full_rows - bottom, axis=-1)
    first_row = lax.slice_in_dim(padded_reversed, full_rows - n - top, full_rows - top, axis=-1)
    return toeplitz(first_column, first_row)


# --- matrices of a size -----------------------------------------------------------------------------------------

@compiled_whole(static_argnames=("n",))
def hilbert(n: int) -> Any:
    """The ``n x n`` Hilbert matrix ``H[i, j] = 1 / (i + j + 1)`` (0-based), in the default float type."""
    index = lax.broadcasted_iota(dtypes.default_float_dtype(), (n, 1), 0)
    return 1 / (index + index.T + 1)


@compiled_whole(static_argnames=("n",))
def invhilbert(n: int) -> Any:
    """The inverse of the ``n x n`` Hilbert matrix, from its closed form in binomial coefficients
    ``(-1)^(i+j) (i+j+1) C(n+i, n-j-1) C(n+j, n-i-1) C(i+j, i)^2``, in the default float type (``comb`` through
    ``lgamma``: inexact, and soon out of range, for large ``n``; SciPy's ``exact=True`` is not offered)."""
    index = tnp.arange(n, dtype=dtypes.default_float_dtype())
    i = index[:, None]
    j = index[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * comb(s, i) ** 2


def _binomial(n: Any, k: Any) -> Any:
    """``C(n, k)`` as ``exp(lgamma(n+1) - lgamma(n-k+1) - lgamma(k+1))``: 0 where ``k > n`` (lgamma is infinite
    at non-positive integers)."""
    return lax.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _check_kind(kind: str | None, message: str) -> str:
    if kind is None:
        return "symmetric"
    if kind not in _KINDS:
        raise ValueError(message.format(_KINDS, kind))
    return kind


@compiled_whole(static_argnames=("n", "kind"))
def pascal(n: int, kind: str | None = None) -> Any:
    """The ``n x n`` Pascal matrix: ``kind='lower'`` has ``C(i, j)``, ``'upper'`` its transpose, ``'symmetric'``
    (the default) ``lower @ upper`` (``C(i + j, i)``). Binomials through ``lgamma``, in float32 whatever the x64
    mode (as JAX)."""
    # JAX's message, its typo included.
    kind = _check_kind(kind, "Expected kind to be on of: {}; got {}")
    index = tnp.arange(n, dtype=np.float32)
    lower = _binomial(index[:, None], index[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return tnp.dot(lower, lower.T)


@compiled_whole(static_argnames=("n", "kind"))
def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of :func:`pascal`'s matrix of the same ``kind``: ``lower``'s is ``(-1)^(i-j) C(i, j)``,
    ``upper``'s its transpose, the symmetric one ``upper^-1 @ lower^-1``; in the default float type."""
    kind = _check_kind(kind, "Expected kind to be one of: {}; got {}")
    index = tnp.arange(n, dtype=dtypes.default_float_dtype())
    i = index[:, None]
    j = index[None, :]
    lower_inverse = (-1.0) ** (i - j) * _binomial(i, j)
    if kind == "lower":
        return lower_inverse
    if kind == "upper":
        return lower_inverse.T
    return tnp.dot(lower_inverse.T, lower_inverse)


@compiled_whole(static_argnames=("n", "full"))
def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of orthonormal contrasts: row ``k - 1`` (``k = 1 .. n - 1``) is
    ``(1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1))`` with ``k`` ones; ``(n - 1, n)``, or ``(n, n)`` with
    ``full=True``, whose first row is ``1 / sqrt(n)``. In the default float type; ``n >= 1``."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = tnp.arange(n - 1)[:, None]
    j = tnp.arange(n)[None, :]
    k = i + 1
    k_float = k.astype(dtypes.default_float_dtype())
    norm = tnp.sqrt(k_float * (k_float + 1))
    matrix = tnp.where(j <= i, 1.0 / norm, tnp.where(j == k, -k_float / norm, tnp.zeros_like(norm)))
    if full:
        first_row = tnp.full((1, n), 1.0 / tnp.sqrt(n), dtype=matrix.dtype)
        matrix = tnp.concatenate([first_row, matrix], axis=0)
    return matrix


@compiled_whole(static_argnames=("n", "dtype"))
def hadamard(n: int, dtype: Any = int) -> Any:
    """The ``n x n`` Hadamard matrix of Sylvester's construction (``H_1 = [[1]]``,
    ``H_2m = [[H_m, H_m], [H_m, -H_m]]``), so ``H @ H.T == n I``; ``n`` a positive power of 2. In ``dtype``
    (the default int type by default; a type without negation, bool, raises as JAX's does)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    matrix = tnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        matrix = tnp.block([[matrix, matrix], [matrix, -matrix]])
    return matrix


@compiled_whole(static_argnames=("n", "scale", "dtype"))
def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The ``n x n`` discrete Fourier transform matrix ``W[i, j] = exp(-2 pi i j sqrt(-1) / n)``, unscaled
    (``scale=None``), unitary (``'sqrtn'``: divided by ``sqrt(n)``) or divided by ``n`` (``'n'``). ``dtype``
    must be complex (the default complex type by default)."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.canonicalize_explicit_dtype(dtype, "dft")
        if not np.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    index = tnp.arange(n, dtype=dtype)
    # -2j * np.pi is a numpy complex128 scalar (not weakly typed), as in JAX's expression.
    omegas = tnp.exp(-2j * np.pi * index[:, None] * index[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / tnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
