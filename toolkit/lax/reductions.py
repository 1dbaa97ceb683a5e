"""Reductions over axes with a fixed monoid (sum, product, max, min, and, or) and argmax/argmin."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes, sharding_types
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.config import flag_value
from toolkit.core.families import Family
from toolkit.core.primitive import Primitive
from toolkit.lax.shape_rules import check_axes, check_dtype

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("reductions")


def _reduction(name: str, kinds: str) -> Primitive:
    def rule(x: ShapedArray, *, axes: tuple) -> ShapedArray:
        check_dtype(name, x, kinds)
        check_axes(name, axes, x.ndim)
        if (name == "reduce_sum" and x.dtype in (dtypes.float16, dtypes.bfloat16)
                and not flag_value("jax_allow_f16_reductions") and any(x.shape[a] != 1 for a in axes)):
            raise ValueError(f"reduce_sum on operand {x.str_short()} is not allowed when "
                             "jax_allow_f16_reductions=False.")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type)
    return family.primitive(name, shape_rule=rule)


reduce_sum_p = _reduction("reduce_sum", "iufc")
reduce_prod_p = _reduction("reduce_prod", "iufc")
reduce_max_p = _reduction("reduce_max", "biufc")  # complex: by real, then imaginary part
reduce_min_p = _reduction("reduce_min", "biufc")
reduce_and_p = _reduction("reduce_and", "biu")
reduce_or_p = _reduction("reduce_or", "biu")
reduce_xor_p = _reduction("reduce_xor", "biu")


def _make(p: Primitive):
    def reduce(operand: Any, axes: Sequence[int]) -> Any:
        return p.bind(operand, axes=tuple(sorted(int(a) for a in axes)))
    reduce.__name__ = p.name
    reduce.__doc__ = f"``{p.name}`` of ``operand`` over ``axes``."
    return family.function(reduce, binds=(p,))


reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or, reduce_xor = map(
    _make, (reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p, reduce_or_p, reduce_xor_p))


@family.function(binds=(reduce_sum_p,))
def reduce_sum(operand: Any, axes: Sequence[int], *, out_sharding: Any = None) -> Any:
    """The sum of ``operand`` over ``axes`` (in its dtype: narrow types are not widened, as in JAX).

    ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec`` under ``toolkit.set_mesh``): the result's
    type on Explicit mesh axes, as JAX's (it replaces what the sharding rule infers, e.g. a dimension
    sharded after the sum).
    """
    axes = tuple(sorted(int(a) for a in axes))
    if out_sharding is not None:
        shape = tuple(d for i, d in enumerate(aval_of(operand).shape) if i not in axes)
        return sharding_types.with_out_sharding(_reduce_sum, (operand,), {"axes": axes}, out_sharding,
                                                "reduce_sum", shape, primitive="reduce_sum")
    return reduce_sum_p.bind(operand, axes=axes)


def _reduce_sum(operand: Any, axes: tuple[int, ...]) -> Any:
    return reduce_sum_p.bind(operand, axes=axes)


def _arg_rule(name: str):
    def rule(x: ShapedArray, *, axis: int, index_dtype: np.dtype) -> ShapedArray:
        check_dtype(name, x, "biuf")
        check_axes(name, (axis,), x.ndim)
        if x.shape[axis] == 0:
            raise ValueError(f"{name} of an empty dimension {axis} (shape {x.shape}) has no answer")
        return ShapedArray(tuple(d for i, d in enumerate(x.shape) if i != axis), index_dtype)
    return rule


argmax_p = family.primitive("argmax", shape_rule=_arg_rule("argmax"))
argmin_p = family.primitive("argmin", shape_rule=_arg_rule("argmin"))


@family.function(binds=(argmax_p,))
def argmax(operand: Any, axis: int, index_dtype: Any = dtypes.int32) -> Any:
    """Index of the first maximum along ``axis`` (NaN counts as the maximum, as in numpy)."""
    return argmax_p.bind(operand, axis=int(axis), index_dtype=dtypes.canonicalize_dtype(index_dtype))


@family.function(binds=(argmin_p,))
def argmin(operand: Any, axis: int, index_dtype: Any = dtypes.int32) -> Any:
    """Index of the first minimum along ``axis`` (NaN counts as the minimum, as in numpy)."""
    return argmin_p.bind(operand, axis=int(axis), index_dtype=dtypes.canonicalize_dtype(index_dtype))
