"""JVP and transpose rules for ``toolkit/lax/reductions.py``."""

from __future__ import annotations

import numpy as np

from toolkit import numpy as tnp
from toolkit.ad.jvp import defjvp, deflinear, zero_tangent_jvp
from toolkit.ad.values import Zero, value_aval
from toolkit.lax import elementwise
from toolkit.lax import reductions
from toolkit.lax import structural


def _kept_dims(ndim, axes):
    return tuple(d for d in range(ndim) if d not in axes)


def _reduce_sum_transpose(ct, x, *, axes):
    if isinstance(ct, Zero):
        return [None]
    shape = x.aval.shape
    return [structural.broadcast_in_dim(ct, shape, _kept_dims(len(shape), axes))]


def _chooser_term(t, ans, x, *, axes):
    # The tangent of the chosen element, averaged over ties (JAX's convention for reduce_max/min).
    shape = value_aval(x).shape
    kept = _kept_dims(len(shape), axes)
    location = elementwise.eq(x, structural.broadcast_in_dim(ans, shape, kept)).astype(value_aval(t).dtype)
    counts = reductions.reduce_sum(location, axes)
    return reductions.reduce_sum(t * location, axes) / counts


def _prod_term(t, ans, x, *, axes):
    # d prod / dx_i = product of all other elements: exclusive cumulative products from both sides,
    # correct even where x has zeros.
    aval = value_aval(x)
    ndim = len(aval.shape)
    kept = _kept_dims(ndim, axes)
    moved = structural.transpose(x, tuple(axes) + kept)
    reduced_size = 1
    for a in axes:
        reduced_size *= aval.shape[a]
    flat = structural.reshape(moved, (reduced_size,) + tuple(aval.shape[d] for d in kept))
    one = structural.broadcast_in_dim(np.ones((), aval.dtype), (1,) + tuple(flat.shape[1:]), ())
    before = tnp.concatenate([one, tnp.cumprod(flat, axis=0)[:-1]], axis=0)
    after = tnp.flip(tnp.concatenate([one, tnp.cumprod(tnp.flip(flat, 0), axis=0)[:-1]], axis=0), 0)
    others = structural.reshape(before * after, moved.shape)
    others = structural.transpose(others, tuple(int(i) for i in np.argsort(tuple(axes) + kept)))
    return reductions.reduce_sum(t * others, axes)


deflinear(reductions.reduce_sum_p, _reduce_sum_transpose)
defjvp(reductions.reduce_max_p, _chooser_term)
defjvp(reductions.reduce_min_p, _chooser_term)
defjvp(reductions.reduce_prod_p, _prod_term)
for _p in (reductions.argmax_p, reductions.argmin_p, reductions.reduce_and_p, reductions.reduce_or_p, reductions.reduce_xor_p):
    zero_tangent_jvp(_p)
