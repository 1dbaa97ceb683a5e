"""Differentiation rules for ``toolkit/lax/parallel.py`` (collectives; ``shard_map``'s are ``shard_map.py``).

Collectives are linear; their transposes are JAX's: ``all_gather`` <->
``psum_scatter``, ``all_gather_invariant`` -> this device's block of the
cotangent (``dynamic_slice`` at ``axis_index``), ``ppermute`` -> the inverse permutation, ``all_to_all`` ->
``all_to_all`` with split and concat swapped, ``pvary`` -> ``psum_invariant``
-> ``pvary`` (``check_vma=True``), and ``psum`` -> ``psum`` (``check_vma=False``).
A transpose keeps the equation's ``axis_index_groups``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.ad.jvp import deflinear
from toolkit.ad.registry import JVP_RULES, NO_JVP
from toolkit.ad.values import Zero
from toolkit.core.avals import aval_of
from toolkit.lax import elementwise, parallel, structural
from toolkit.ad.jvp import DifferentiationError


def _zero_or(ct: Any, fun) -> Any:
    return None if isinstance(ct, Zero) else fun(ct)


def _groups(params: dict) -> dict:
    """The ``axis_index_groups`` parameter, carried over to the transpose when the equation has it."""
    return {"axis_index_groups": params["axis_index_groups"]} if "axis_index_groups" in params else {}


def _psum_transpose(ct, x, *, axes, env, **params):
    return [_zero_or(ct, lambda c: parallel.psum_p.bind(c, axes=axes, env=env, **_groups(params)))]


def _all_gather_transpose(ct, x, *, axes, env, axis, tiled, **params):
    return [_zero_or(ct, lambda c: parallel.psum_scatter_p.bind(c, axes=axes, env=env, scatter_dimension=axis,
                                                                tiled=tiled, **_groups(params)))]


def _all_gather_invariant_transpose(ct, x, *, axes, env, axis, tiled):
    """JAX's: the cotangent is the same on every device of ``axes``, so each keeps its own block of it (the
    gather's input was this device's block); untiled, the block's size-1 gathered axis is squeezed away."""
    def block(c: Any) -> Any:
        size = env.size(axes)
        slice_size = aval_of(c).shape[axis] // size
        start = elementwise.mul(parallel.position_along(axes, env), np.int32(slice_size))
        out = structural.dynamic_slice_in_dim(c, start, slice_size, axis)
        return out if tiled else structural.squeeze(out, (axis,))
    return [_zero_or(ct, block)]


def _psum_scatter_transpose(ct, x, *, axes, env, scatter_dimension, tiled, **params):
    return [_zero_or(ct, lambda c: parallel.all_gather_p.bind(c, axes=axes, env=env, axis=scatter_dimension,
                                                              tiled=tiled, **_groups(params)))]


def _all_to_all_transpose(ct, x, *, axes, env, split_axis, concat_axis, **params):
    return [_zero_or(ct, lambda c: parallel.all_to_all_p.bind(c, axes=axes, env=env, split_axis=concat_axis,
                                                              concat_axis=split_axis, **_groups(params)))]


deflinear(parallel.psum_p, _psum_transpose)
deflinear(parallel.psum_invariant_p,
          lambda ct, x, *, axes, env: [_zero_or(ct, lambda c: parallel.pvary_p.bind(c, axes=axes, env=env))])
deflinear(parallel.pvary_p,
          lambda ct, x, *, axes, env: [_zero_or(ct, lambda c: parallel.psum_invariant_p.bind(c, axes=axes, env=env))])
deflinear(parallel.all_gather_p, _all_gather_transpose)
deflinear(parallel.all_gather_invariant_p, _all_gather_invariant_transpose)
deflinear(parallel.psum_scatter_p, _psum_scatter_transpose)
deflinear(parallel.ppermute_p, lambda ct, x, *, axes, env, perm: [_zero_or(
    ct, lambda c: parallel.ppermute_p.bind(c, axes=axes, env=env, perm=tuple((d, s) for s, d in perm)))])
deflinear(parallel.all_to_all_p, _all_to_all_transpose)


def _pmax_pmin_jvp(primals, tangents, **params):
    raise DifferentiationError("pmax/pmin are not differentiable (as in JAX); use psum-based formulations")


JVP_RULES[parallel.pmax_p] = _pmax_pmin_jvp
JVP_RULES[parallel.pmin_p] = _pmax_pmin_jvp



NO_JVP[parallel.axis_index_p] = ("no operands and an integer result: there is no tangent to propagate, and the "
                                 "interpreter never asks for one")
