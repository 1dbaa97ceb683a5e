"""``jax.lax.linalg.qdwh``: the polar decomposition by the QR-based dynamically weighted Halley iteration.

QDWH (Nakatsukasa, Bai and Gygi, "Optimizing Halley's iteration for computing the matrix polar
decomposition", SIAM J. Matrix Anal. Appl. 31(5), 2010) computes ``x = u h`` with ``u`` having
orthonormal columns and ``h`` Hermitian positive semidefinite, without inverting a matrix: each step
is a weighted Halley update of the iterate ``u`` written with a QR decomposition (while the weight
``c`` is large, where a Cholesky factorization of ``c u^H u + I`` would be ill conditioned) or with a
Cholesky factorization and two triangular solves (once ``c`` is small).

This is JAX 0.10.2's algorithm (``jax/_src/tpu/linalg/qdwh.py``) step for step: the same scaling by
``1 / sqrt(|x|_1 |x|_inf)``, the same weights computed on the host from the lower bound ``l = eps``,
the same QR/Cholesky switch (``c > 100``), the same convergence test
``|u_k - u_{k-1}|_F > cbrt(5 eps)``, the same Halley continuation and the final Newton-Schulz step,
with matrix products at ``Precision.HIGHEST`` (JAX runs it under ``default_matmul_precision('float32')``).

It is written with ``toolkit.lax`` primitives only (``lax`` may not import ``toolkit.numpy``: the
``lax`` contract of ``[tool.importlinter]``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import aval_of
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import control_flow, elementwise, reductions, structural
from toolkit.lax.convolution import Precision
from toolkit.lax.decompositions import cholesky, qr, real_dtype, triangular_solve

__all__ = ["qdwh"]

#: Above this weight ``c`` a step uses QR; at or below it, Cholesky (JAX's ``CHOLESKY_CUTOFF``).
CHOLESKY_CUTOFF = 100

#: The iteration limit when ``max_iterations`` is not given (JAX's).
DEFAULT_MAX_ITERATIONS = 10


# --- small lax helpers (the jnp idioms JAX's version uses) ------------------------------------------


def _matmul(a: Any, b: Any) -> Any:
    """``a @ b`` for matrices, at the precision JAX's ``default_matmul_precision('float32')`` gives."""
    # function-level: toolkit.lax.linalg re-exports qdwh (jax.lax.linalg.qdwh), so importing it at module level
    # would make the cycle toolkit.lax.linalg -> toolkit.lax.qdwh -> toolkit.lax.linalg.
    from toolkit.lax.linalg import dot_general
    return dot_general(a, b, (((1,), (0,)), ((), ())), precision=Precision.HIGHEST)


def _conj(a: Any) -> Any:
    """The complex conjugate; real values as they are (``jnp.conj`` binds nothing for them either)."""
    return elementwise.conj(a) if dtypes.is_complex(aval_of(a).dtype) else a


def _adjoint(a: Any) -> Any:
    """``a^H`` of a matrix."""
    return _conj(structural.transpose(a, (1, 0)))


def _eye(n: int, dtype: Any) -> Any:
    rows = structural.broadcasted_iota(np.int32, (n, n), 0)
    columns = structural.broadcasted_iota(np.int32, (n, n), 1)
    return elementwise.convert_element_type(elementwise.eq(rows, columns), dtype)


def _scalar(value: Any, dtype: Any) -> Any:
    """A host constant (a Python number) as a 0-d value of ``dtype``."""
    return np.asarray(value, dtype=dtype)


def _index(value: Any) -> Any:
    """A (possibly traced) size as an int32 scalar, to compare with an int32 iota."""
    if isinstance(value, (int, np.integer)):
        return np.int32(value)  # not a Python int: with x64 on that would be a weak int64
    return elementwise.convert_element_type(value, np.int32)


def _mask(x: Any, dims: tuple[Any, ...], alternative: Any = 0) -> Any:
    """``x`` where every index is inside the dynamic shape ``dims``, ``alternative`` (a scalar or an array
    of ``x``'s shape) elsewhere: the entries padding added beyond the true matrix."""
    shape = aval_of(x).shape
    inside = None
    for axis, size in enumerate(dims):
        if size is not None:
            in_axis = elementwise.lt(structural.broadcasted_iota(np.int32, shape, axis), _index(size))
            inside = in_axis if inside is None else elementwise.bitwise_and(inside, in_axis)
    if inside is None:
        return x
    dtype = aval_of(x).dtype
    if isinstance(alternative, (int, float, complex)):
        alternative = structural.full(shape, alternative, dtype)
    return elementwise.select(inside, x, alternative)


def _stack_rows(a: Any, b: Any, rows_of_a: Any) -> Any:
    """``a`` (whose true row count is ``rows_of_a``) with ``b`` stacked below its true rows."""
    dtype = aval_of(a).dtype
    padded = structural.pad(a, _scalar(0, dtype), [(0, aval_of(b).shape[0], 0), (0, 0, 0)])
    return structural.dynamic_update_slice_in_dim(padded, b, _index(rows_of_a), 0)


def _one_norm(x: Any) -> Any:
    """``max_j sum_i |x_ij|`` (the largest column sum; 0 for an empty matrix, as ``jnp.linalg.norm``)."""
    column_sums = reductions.reduce_sum(elementwise.abs(x), (0,))
    return elementwise.max(_scalar(0, real_dtype(aval_of(x).dtype)), reductions.reduce_max(column_sums, (0,)))


def _inf_norm(x: Any) -> Any:
    """``max_i sum_j |x_ij|`` (the largest row sum)."""
    row_sums = reductions.reduce_sum(elementwise.abs(x), (1,))
    return elementwise.max(_scalar(0, real_dtype(aval_of(x).dtype)), reductions.reduce_max(row_sums, (0,)))


def _frobenius_norm(x: Any) -> Any:
    squares = elementwise.mul(x, _conj(x))
    if dtypes.is_complex(aval_of(x).dtype):
        squares = elementwise.real(squares)
    return elementwise.sqrt(reductions.reduce_sum(squares, (0, 1)))


# --- the two kinds of step --------------------------------------------------------------------------


def _qr_step(u: Any, m: Any, n: Any, params: tuple[Any, Any, Any]) -> Any:
    """One weighted Halley step by QR: ``[sqrt(c) u; I] = [q1; q2] r`` and
    ``u <- e u + (a - e) / sqrt(c) q1 q2^H``. ``u`` is ``M x N`` (padded from ``m x n``)."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    rows, columns = aval_of(u).shape
    dtype = aval_of(u).dtype
    stacked = _stack_rows(elementwise.mul(sqrt_c, u), _eye(columns, dtype), m)
    q, _ = qr(stacked, full_matrices=False)
    q1 = _mask(structural.slice(q, (0, 0), (rows, columns)), (m, n))
    q2 = structural.dynamic_slice_in_dim(q, _index(m), columns, 0)
    q2 = _adjoint(_mask(q2, (n, n)))
    return elementwise.add(elementwise.mul(e, u), elementwise.mul(a_minus_e_by_sqrt_c, _matmul(q1, q2)))


def _cholesky_step(u: Any, m: Any, n: Any, params: tuple[Any, Any, Any]) -> Any:
    """One weighted Halley step by Cholesky: ``c u^H u + I = y y^H`` and
    ``u <- e u + (a - e) u (y y^H)^{-1}`` by two triangular solves."""
    a_minus_e, c, e = params
    columns = aval_of(u).shape[1]
    dtype = aval_of(u).dtype
    gram = elementwise.add(elementwise.mul(c, _matmul(_adjoint(u), u)), _eye(columns, dtype))
    # The identity in the padded lower-right corner keeps the matrix positive definite there.
    gram = _mask(gram, (n, n), _eye(columns, dtype))
    y = cholesky(gram, symmetrize_input=False)
    z = _conj(triangular_solve(y, structural.transpose(u, (1, 0)), left_side=True, lower=True, conjugate_a=True))
    z = _adjoint(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True))
    return elementwise.add(elementwise.mul(e, u), elementwise.mul(a_minus_e, z))


def _qr_params(a: float, b: float, c: float) -> tuple[float, float, float]:
    e = b / c
    sqrt_c = c ** (1 / 2)
    return ((a - e) / sqrt_c, sqrt_c, e)


def _cholesky_params(a: float, b: float, c: float) -> tuple[float, float, float]:
    e = b / c
    return (a - e, c, e)


def _weights(eps: float, max_iterations: int) -> tuple[list[tuple[float, float, float]],
                                                       list[tuple[float, float, float]]]:
    """The dynamic weights ``(a, b, c)`` of each step, computed on the host from the lower bound ``l`` on
    the smallest singular value of the scaled matrix, which starts at ``eps`` and tends to 1: the
    parameters of the QR steps, then of the Cholesky steps."""
    qr_steps: list[tuple[float, float, float]] = []
    cholesky_steps: list[tuple[float, float, float]] = []
    lower_bound = eps
    tol_l = 10.0 * eps / 2.0
    k = 0
    while lower_bound + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lower_bound * lower_bound
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower_bound = lower_bound * (a + b * l2) / (1 + c * l2)
        if c > CHOLESKY_CUTOFF:
            qr_steps.append(_qr_params(a, b, c))
        else:
            cholesky_steps.append(_cholesky_params(a, b, c))
    return qr_steps, cholesky_steps


def _iterate(x: Any, m: Any, n: Any, max_iterations: int, eps: float | None) -> tuple[Any, Any, Any, Any]:
    dtype = aval_of(x).dtype
    real = real_dtype(dtype)
    if eps is None:
        eps = float(dtypes.finfo(dtype).eps)

    # Scale by an estimate alpha >= |x|_2, so that the singular values of u lie in (0, 1].
    one_norm = _one_norm(x)
    inf_norm = _inf_norm(x)
    alpha_inverse = elementwise.mul(elementwise.rsqrt(one_norm), elementwise.rsqrt(inf_norm))
    alpha_inverse = elementwise.select(elementwise.eq(one_norm, _scalar(0, real)), _scalar(1, real), alpha_inverse)
    u = elementwise.mul(x, elementwise.convert_element_type(alpha_inverse, dtype))

    # JAX computes cbrt(5 eps) on the device in the default float type, then compares in u's real type.
    tol_norm = elementwise.convert_element_type(
        elementwise.cbrt(_scalar(10.0 * eps / 2.0, dtypes.default_float_dtype())), real)

    def step(params: tuple[Any, Any, Any], u: Any, update: Any, test_convergence: bool) -> tuple[Any, Any]:
        u_next = update(u, m, n, params)
        if not test_convergence:
            return u_next, np.bool_(True)
        return u_next, elementwise.gt(_frobenius_norm(elementwise.sub(u_next, u)), tol_norm)

    def run(u: Any, steps: list[tuple[float, float, float]], update: Any,
            test_convergence: bool) -> tuple[Any, Any]:
        if not steps:
            return u, np.bool_(True)
        table = np.asarray(steps).astype(dtype)  # the host's float64 weights, rounded to u's dtype (as JAX's)

        def body(k: Any, state: tuple[Any, Any]) -> tuple[Any, Any]:
            row = structural.dynamic_index_in_dim(table, k, keepdims=False)
            params = tuple(structural.index_in_dim(row, i, keepdims=False) for i in range(3))
            return step(params, state[0], update, test_convergence)  # type: ignore[arg-type]

        return control_flow.fori_loop(0, len(steps), body, (u, np.bool_(True)))

    qr_steps, cholesky_steps = _weights(eps, max_iterations)
    u, _ = run(u, qr_steps, _qr_step, test_convergence=False)
    u, is_not_converged = run(u, cholesky_steps, _cholesky_step, test_convergence=True)

    # Once l has reached 1 the weights are Halley's (a, b, c) = (3, 1, 3); continue with them until u converges.
    halley = tuple(_scalar(value, dtype) for value in _cholesky_params(3, 1, 3))

    def unconverged(state: tuple[Any, Any, Any]) -> Any:
        k, _, is_not_converged = state
        return elementwise.bitwise_and(is_not_converged, elementwise.lt(k, max_iterations))

    def halley_step(state: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        k, u, _ = state
        u, is_not_converged = step(halley, u, _cholesky_step, test_convergence=True)
        return elementwise.add(k, 1), u, is_not_converged

    num_iters, u, is_not_converged = control_flow.while_loop(
        unconverged, halley_step, (len(qr_steps) + len(cholesky_steps), u, is_not_converged))

    # One Newton-Schulz step for accuracy: u <- 1.5 u - 0.5 u u^H u.
    u = elementwise.sub(elementwise.mul(_scalar(1.5, dtype), u),
                        _matmul(elementwise.mul(_scalar(0.5, dtype), u), _matmul(_adjoint(u), u)))
    h = _matmul(_adjoint(u), x)
    h = elementwise.div(elementwise.add(h, _adjoint(h)), _scalar(2, dtype))
    return u, h, num_iters, elementwise.bitwise_not(is_not_converged)


@compiled_whole(static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None, eps: float | None = None,
         dynamic_shape: tuple[int, int] | None = None) -> tuple[Any, Any, Any, Any]:
    """The polar decomposition ``x = u h`` by the QR-based dynamically weighted Halley iteration
    (``jax.lax.linalg.qdwh``).

    ``x``: an ``M x N`` matrix with ``M >= N``, full rank (float32/float64/complex64/complex128), possibly
    padded from a true shape ``dynamic_shape = (m, n)`` (the padding is ignored; it may be traced).
    ``is_hermitian`` is accepted and unused, as in JAX. ``eps`` (default: the machine epsilon of ``x``'s
    dtype) sets the tolerance: iteration stops once ``|u_k - u_{k-1}|_F <= cbrt(5 eps)``, or after
    ``max_iterations`` (default 10) steps.

    Returns ``(u, h, num_iters, is_converged)``: ``u`` (``M x N``, orthonormal columns), ``h``
    (``N x N``, Hermitian positive semidefinite), the number of steps taken (a weakly typed int32) and
    whether the tolerance was met within ``max_iterations``.
    """
    is_hermitian = bool(is_hermitian)  # unused, as in JAX (kept for backward compatibility there)
    max_iterations = DEFAULT_MAX_ITERATIONS if max_iterations is None else int(max_iterations)
    shape = aval_of(x).shape
    if len(shape) != 2:
        raise ValueError(f"qdwh: the input must be a matrix of shape M x N, got shape {tuple(shape)}")
    rows, columns = shape
    if rows < columns:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = rows, columns
    return _iterate(x, m, n, max_iterations, eps)
