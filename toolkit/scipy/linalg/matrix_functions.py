"""``jax.scipy.linalg``'s matrix functions: ``expm`` (JAX's Pade approximant with scaling and squaring)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit import lax
from toolkit import numpy as tnp
from toolkit.batching.api import vmap
from toolkit.numpy import linalg as np_linalg
from toolkit.scipy.linalg.factorizations import _inexact, solve_triangular

__all__ = ["expm"]


_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}


def _pade(order: int):
    b = _PADE[order]

    def approximant(A: Any) -> tuple[Any, Any]:
        ident = tnp.eye(A.shape[0], A.shape[1], dtype=A.dtype)
        A2 = A @ A
        if order == 13:
            A4 = A2 @ A2
            A6 = A4 @ A2
            U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
            V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
            return U, V
        powers = [ident, A2]
        while len(powers) < order // 2 + 1:
            powers.append(powers[-1] @ A2 if len(powers) > 2 else A2 @ A2)
        U = A @ sum(b[2 * i + 1] * powers[i] for i in range(len(powers)))
        V = sum(b[2 * i] * powers[i] for i in range(len(powers)))
        return U, V
    return approximant


def _expm_2d(A: Any, upper_triangular: bool, max_squarings: int) -> Any:
    A_L1 = np_linalg.norm(A, 1)
    orders: tuple[int, ...]
    if A.dtype in (np.float64, np.complex128):
        maxnorm, conds, orders = 5.371920351148152, [0.01495585217958292, 0.253939833006323, 0.9504178996162932,
                                                      2.097847961257068], (3, 5, 7, 9, 13)
    else:
        maxnorm, conds, orders = 3.92572478313866, [0.4258730016922831, 1.880152677804762], (3, 5, 7)
    n_squarings = tnp.maximum(0, tnp.floor(tnp.log2(A_L1 / maxnorm)))
    A = A / (2 ** n_squarings).astype(A.dtype)
    idx = tnp.digitize(A_L1, tnp.asarray(np.asarray(conds, A_L1.dtype)))
    U, V = lax.switch(idx, [_pade(o) for o in orders], A)
    P, Q = U + V, -U + V
    if upper_triangular:
        R = solve_triangular(Q, P)
    else:
        R = np_linalg.solve(Q, P)

    def step(c: Any, i: Any) -> tuple[Any, None]:
        return lax.cond(i < n_squarings, lambda x: x @ x, lambda x: x, c), None
    R, _ = lax.scan(step, R, tnp.arange(max_squarings, dtype=n_squarings.dtype))
    return lax.cond(n_squarings > max_squarings, lambda r: tnp.full_like(r, np.nan), lambda r: r, R)


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential of (batches of) square matrices: JAX's Pade approximant with scaling and
    squaring (NaNs when more than ``max_squarings`` squarings would be needed)."""
    (A,) = _inexact("expm", A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={tuple(A.shape)!r}.")
    fn = lambda x: _expm_2d(x, upper_triangular, max_squarings)  # noqa: E731
    for _ in range(A.ndim - 2):
        fn = vmap(fn)
    return fn(A)
