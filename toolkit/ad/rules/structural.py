"""JVP and transpose rules for ``toolkit/lax/structural.py``: every data-movement primitive is linear
in its array operands; index operands (dynamic slicing) are not differentiated."""

from __future__ import annotations

import numpy as np

from toolkit.ad.jvp import deflinear, zero_tangent_jvp
from toolkit.ad.registry import JVP_RULES, TRANSPOSE_RULES
from toolkit.ad.values import Zero, instantiate, is_undefined, tangent_aval, value_aval, zeros
from toolkit.lax import reductions
from toolkit.lax import structural


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    if isinstance(ct, Zero):
        return [None]
    in_shape = x.aval.shape
    kept = set(broadcast_dimensions)
    summed = [d for d in range(len(shape)) if d not in kept]
    summed += [d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1]
    out = reductions.reduce_sum(ct, tuple(sorted(summed))) if summed else ct
    # No identity reshape when the sum already has x's shape (a bias's cotangent), as JAX's transpose.
    return [out if tuple(value_aval(out).shape) == tuple(in_shape) else structural.reshape(out, in_shape)]


def _reshape_transpose(ct, x, *, new_sizes):
    return [None if isinstance(ct, Zero) else structural.reshape(ct, x.aval.shape)]


def _transpose_transpose(ct, x, *, permutation):
    return [None if isinstance(ct, Zero) else structural.transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    if isinstance(ct, Zero):
        return [None]
    in_shape = x.aval.shape
    strides = strides or (1,) * len(in_shape)
    out_shape = value_aval(ct).shape
    if any(n == 0 for n in out_shape):
        return [zeros(x.aval)]
    config = []
    for size, start, stride, count in zip(in_shape, start_indices, strides, out_shape):
        last = start + (count - 1) * stride  # the last element read
        config.append((start, size - 1 - last, stride - 1))
    return [structural.pad(ct, np.zeros((), x.aval.dtype), config)]


def _pad_transpose(ct, x, padding_value, *, padding_config):
    if isinstance(ct, Zero):
        return [None, None]
    unpadded = structural.pad(ct, np.zeros((), value_aval(ct).dtype), [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    ct_x = structural.slice(unpadded, (0,) * len(padding_config), value_aval(unpadded).shape,
                    tuple(interior + 1 for _, _, interior in padding_config))
    ct_pad = None
    if is_undefined(padding_value):
        everything = tuple(range(len(padding_config)))
        ct_pad = reductions.reduce_sum(ct, everything) - reductions.reduce_sum(ct_x, everything)
    return [ct_x if is_undefined(x) else None, ct_pad]


def _concatenate_transpose(ct, *xs, dimension):
    if isinstance(ct, Zero):
        return [None] * len(xs)
    cts, offset = [], 0
    shape = value_aval(ct).shape
    for x in xs:
        size = value_aval(x).shape[dimension]
        if is_undefined(x):
            start = [0] * len(shape)
            limit = list(shape)
            start[dimension], limit[dimension] = offset, offset + size
            cts.append(structural.slice(ct, tuple(start), tuple(limit)))
        else:
            cts.append(None)
        offset = offset + size
    return cts


def _split_transpose(cts, x, *, sizes, axis):
    # JAX's rule: the pieces' cotangents joined by one concatenate (a missing one is zeros of its shape).
    if all(isinstance(ct, Zero) for ct in cts):
        return [None]
    return [structural.concatenate([instantiate(ct) for ct in cts], axis)]


def _rev_transpose(ct, x, *, dimensions):
    return [None if isinstance(ct, Zero) else structural.rev(ct, dimensions)]


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *indices = primals
    out = structural.dynamic_slice_p.bind(x, *indices, slice_sizes=slice_sizes)
    if isinstance(tangents[0], Zero):
        return out, Zero(tangent_aval(value_aval(out)))
    return out, structural.dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *indices, slice_sizes):
    if isinstance(ct, Zero):
        return [None] * (1 + len(indices))
    return [structural.clamped_dynamic_update_slice(zeros(x.aval), ct, indices)] + [None] * len(indices)


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *indices = primals
    out = structural.clamped_dynamic_update_slice(x, update, indices)
    tx, tu = tangents[0], tangents[1]
    if isinstance(tx, Zero) and isinstance(tu, Zero):
        return out, Zero(tangent_aval(value_aval(out)))
    return out, structural.clamped_dynamic_update_slice(instantiate(tx), instantiate(tu), indices)


def _dynamic_update_slice_transpose(ct, x, update, *indices):
    if isinstance(ct, Zero):
        return [None] * (2 + len(indices))
    update_aval = value_aval(update)
    ct_x = structural.clamped_dynamic_update_slice(ct, zeros(update_aval), indices) if is_undefined(x) else None
    ct_update = structural.clamped_dynamic_slice(ct, indices, update_aval.shape) if is_undefined(update) else None
    return [ct_x, ct_update] + [None] * len(indices)


deflinear(structural.broadcast_in_dim_p, _broadcast_in_dim_transpose)
deflinear(structural.reshape_p, _reshape_transpose)
deflinear(structural.transpose_p, _transpose_transpose)
deflinear(structural.slice_p, _slice_transpose)
deflinear(structural.pad_p, _pad_transpose)
deflinear(structural.concatenate_p, _concatenate_transpose)
deflinear(structural.rev_p, _rev_transpose)
deflinear(structural.split_p, _split_transpose)
JVP_RULES[structural.dynamic_slice_p] = _dynamic_slice_jvp
TRANSPOSE_RULES[structural.dynamic_slice_p] = _dynamic_slice_transpose
JVP_RULES[structural.dynamic_update_slice_p] = _dynamic_update_slice_jvp
TRANSPOSE_RULES[structural.dynamic_update_slice_p] = _dynamic_update_slice_transpose
zero_tangent_jvp(structural.iota_p)
zero_tangent_jvp(structural.dimension_size_p)
