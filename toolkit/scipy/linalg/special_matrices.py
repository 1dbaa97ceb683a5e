"""``jax.scipy.linalg``'s special matrices, built from their defining entries: ``block_diag``."""

from __future__ import annotations

from typing import Any

from toolkit import numpy as tnp

__all__ = ["block_diag"]


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
