"""``toolkit.scipy.cluster.vq``: SciPy's vector quantization (``jax.scipy.cluster.vq``): ``vq``, each
observation's nearest code."""

from __future__ import annotations

from typing import Any

from toolkit import numpy as tnp
from toolkit.batching.api import vmap
from toolkit.numpy._core import check_arraylike, promote_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``(code, dist)``: the index in ``code_book`` (``[K, N]``) of the code nearest (Euclidean) to each
    observation of ``obs`` (``[M, N]``), and that distance (``scipy.cluster.vq.vq``; 1-d arguments are length-1
    vectors). ``check_finite`` is ignored, as in JAX."""
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, book = (tnp.asarray(a) for a in promote_inexact(obs, code_book))
    if obs_arr.ndim != book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_arr.ndim == 1:
        obs_arr, book = obs_arr[..., None], book[..., None]
    if obs_arr.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    # JAX's order of operations (one observation against the whole book, vmapped), so the distances round as its.
    dist = vmap(lambda ob: tnp.linalg.norm(ob[None] - book, axis=-1))(obs_arr)
    code = tnp.argmin(dist, axis=-1)
    return code, vmap(lambda row, i: row[i])(dist, code)
