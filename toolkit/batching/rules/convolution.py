"""Batching rule for ``conv_general_dilated``: fold the batch into a dimension the convolution already has.

* lhs batched: the batch joins the lhs batch dimension (``B*N``), split again in the result;
* rhs batched: the batch joins the kernel's output features (``B*O``), split again in the result;
* both batched: the batch joins the input features (``B*C``) and the kernel's output features
  (``B*O``) and becomes ``feature_group_count``, so each batch element convolves with its own kernel.

Grouped convolutions (``feature_group_count`` or ``batch_group_count`` > 1)
fall back to a loop over the batch.
"""

from __future__ import annotations

from toolkit.batching.interpret import loop_rule, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.lax import convolution
from toolkit.lax import structural


def _merge_before(x, d, position):
    """Move batch dimension ``d`` just before the unbatched dimension ``position`` and merge the two (B-major)."""
    x = moveaxis(x, d, position)
    shape = list(aval_of(x).shape)
    shape[position:position + 2] = [shape[position] * shape[position + 1]]
    return structural.reshape(x, tuple(shape))


def _split(y, position, size):
    """Split dimension ``position`` of ``y`` into (size, rest); the batch dimension is ``position``."""
    shape = list(aval_of(y).shape)
    shape[position:position + 1] = [size, shape[position] // size]
    return structural.reshape(y, tuple(shape))


def _conv(axis, args, dims, **params):
    (lhs, rhs), (dl, dr) = args, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    if params["feature_group_count"] != 1 or params["batch_group_count"] != 1:
        return loop_rule(convolution.conv_general_dilated_p)(axis, args, dims, **params)
    if dr is None:
        y = convolution.conv_general_dilated_p.bind(_merge_before(lhs, dl, lhs_spec[0]), rhs, **params)
        return _split(y, out_spec[0], axis.size), out_spec[0]
    if dl is None:
        y = convolution.conv_general_dilated_p.bind(lhs, _merge_before(rhs, dr, rhs_spec[0]), **params)
        return _split(y, out_spec[1], axis.size), out_spec[1]
    grouped = dict(params, feature_group_count=axis.size)
    y = convolution.conv_general_dilated_p.bind(_merge_before(lhs, dl, lhs_spec[1]), _merge_before(rhs, dr, rhs_spec[0]),
                                         **grouped)
    return _split(y, out_spec[1], axis.size), out_spec[1]


register_batching(convolution.conv_general_dilated_p, _conv)
