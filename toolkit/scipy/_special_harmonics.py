"""Spherical harmonics ``sph_harm_y`` of ``toolkit.scipy.special`` (JAX 0.10.2's algorithm).

The normalized associated Legendre functions ``P_l^m(cos theta)`` for every ``l, m <= n_max`` come from
JAX's three-term recurrence in ``l`` (a ``fori_loop`` over the whole table, with precomputed masked
coefficients); the harmonic picks ``P_n^|m|`` per point, times ``exp(i |m| phi)``, conjugated with
``(-1)**m`` for negative orders.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.core import dtypes

__all__ = ["sph_harm_y"]


def _recurrence_masks(l_max: int, dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    """The normalized recurrence's coefficients, masked to the triangle and arranged per step (NumPy constants)."""
    m_mat, l_mat = np.meshgrid(np.arange(l_max + 1, dtype=dtype), np.arange(l_max + 1, dtype=dtype), indexing="ij")
    c0, c1 = l_mat * l_mat, m_mat * m_mat
    c2, c3 = 2.0 * l_mat, (l_mat - 1.0) * (l_mat - 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        d0 = np.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = np.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1)))
    d0_mask = np.zeros((l_max + 1, l_max + 1), dtype)
    d1_mask = np.zeros((l_max + 1, l_max + 1), dtype)
    i0, i1 = np.triu_indices(l_max + 1, 1), np.triu_indices(l_max + 1, 2)
    d0_mask[i0], d1_mask[i1] = d0[i0], d1[i1]
    i, j, k = np.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    return (np.einsum("jk,ijk->ijk", d0_mask, mask).astype(dtype),
            np.einsum("jk,ijk->ijk", d1_mask, mask).astype(dtype))


def _normalized_legendre(l_max: int, x: Any) -> Any:
    """``P[m, l, i]``: the normalized associated Legendre function of degree ``l``, order ``m`` at ``x[i]``."""
    dtype = x.dtype
    p = tnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=dtype)
    a_idx = np.arange(1, l_max + 1, dtype=dtype)
    b_idx = np.arange(l_max, dtype=dtype)
    initial_value = 0.5 / np.sqrt(np.pi)
    f_a = np.cumprod(-1 * np.sqrt(1.0 + 0.5 / a_idx)).astype(dtype)
    f_b = np.sqrt(2.0 * b_idx + 3.0).astype(dtype)
    p = p.at[0, 0].set(initial_value)
    y = tnp.cumprod(tnp.broadcast_to(tnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial_value * tnp.einsum("i,ij->ij", f_a, y)
    diag = np.diag_indices(l_max + 1)
    p = p.at[diag[0][1:], diag[1][1:]].set(p_diag)
    p_offdiag = tnp.einsum("ij,ij->ij", tnp.einsum("i,j->ij", f_b, x), p[np.diag_indices(l_max)])
    p = p.at[diag[0][:l_max], diag[1][:l_max] + 1].set(p_offdiag)
    d0_mask_3d, d1_mask_3d = _recurrence_masks(l_max, dtype)

    def body(i, p_val):
        coeff_0, coeff_1 = tnp.asarray(d0_mask_3d)[i], tnp.asarray(d1_mask_3d)[i]
        h = (tnp.einsum("ij,ijk->ijk", coeff_0, tnp.einsum("ijk,k->ijk", tnp.roll(p_val, shift=1, axis=1), x))
             - tnp.einsum("ij,ijk->ijk", coeff_1, tnp.roll(p_val, shift=2, axis=1)))
        return p_val + h

    if l_max > 1:
        p = lax.fori_loop(2, l_max + 1, body, p)
    return p


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None, n_max: int | None = None) -> Any:
    """The spherical harmonic ``Y_n^m(theta, phi)`` (``theta`` the polar angle, ``phi`` the azimuth), as SciPy's
    ``sph_harm_y``. ``n``, ``m`` are integer arrays of one length with ``theta`` and ``phi``; ``n_max`` (the
    largest degree, a concrete int) defaults to ``max(n)``, which must then be concrete. ``diff_n`` is JAX's
    ``NotImplementedError``."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if tnp.isscalar(theta):
        theta = tnp.array([theta])
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n)))
        except Exception as error:  # a traced n has no concrete maximum
            raise TypeError("The `n_max` argument of `sph_harm_y` must be statically specified to use it within "
                            "toolkit transformations.") from error
    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)):
        raise TypeError(f"n_max must be a concrete integer, got {n_max!r}")
    n, m = tnp.asarray(n), tnp.asarray(m)
    theta, phi = tnp.asarray(theta), tnp.asarray(phi)
    if not dtypes.is_inexact(theta.dtype):
        theta = theta.astype(float)
    legendre = _normalized_legendre(int(n_max), tnp.cos(theta))
    legendre_val = legendre.at[abs(m), n, tnp.arange(len(n))].get(mode="clip")
    angle = abs(m) * phi
    harmonics = lax.complex(legendre_val * tnp.cos(angle), legendre_val * tnp.sin(angle))
    return tnp.where(m < 0, (-1.0) ** abs(m) * tnp.conjugate(harmonics), harmonics)
