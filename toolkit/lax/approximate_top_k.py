"""``approx_max_k`` / ``approx_min_k``: the ``approx_top_k`` primitive (JAX's ``jax.lax`` ANN search).

On TPU XLA runs the approximate algorithm (arXiv:2206.14286); elsewhere JAX lowers the same
``ApproxTopK`` custom call marked ``is_fallback``, which XLA computes exactly (a sort), and so does
toolkit: on CPU the results equal ``top_k``'s. With ``aggregate_to_topk=False`` the reduced dimension keeps
XLA's ``ApproxTopKReductionOutputSize`` candidates (on CPU: that many of the sorted values), the size JAX's shape
rule also asks XLA for; the runtime's function is installed here by ``toolkit.stages`` (this layer is below it).
"""

from __future__ import annotations

import operator
from typing import Any, Callable

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.shape_poly import is_symbolic_dim
from toolkit.core.families import Family

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("approximate_top_k")

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]

#: XLA's ``ApproxTopKReductionOutputSize`` (``toolkit.runtime.xla_shape_functions``), installed by
#: ``toolkit.stages``.
_reduction_output_size: Callable[[int, int, int, float, bool, int], int] | None = None


def install_reduction_output_size(function: Callable[[int, int, int, float, bool, int], int]) -> None:
    """Size the reduced dimension of ``aggregate_to_topk=False`` calls with ``function`` (XLA's)."""
    global _reduction_output_size
    _reduction_output_size = function


def _approx_top_k_rule(operand: ShapedArray, *, k: int, reduction_dimension: int, recall_target: float,
                       is_max_k: bool, reduction_input_size_override: int,
                       aggregate_to_topk: bool) -> list[ShapedArray]:
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    dims = list(operand.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {dims[reduction_dimension]}, got {k}")
    if not dtypes.is_float(operand.dtype):
        raise ValueError("operand must be a floating type")
    size = dims[reduction_dimension]
    if aggregate_to_topk:
        dims[reduction_dimension] = k
    elif is_symbolic_dim(size) or is_symbolic_dim(k):
        raise NotImplementedError("approx_top_k with aggregate_to_topk=False not yet implemented when either the "
                                  f"`k` ({k}) or the  reduction dimension size ({size}) are symbolic")
    elif _reduction_output_size is None:
        raise RuntimeError("approx_top_k with aggregate_to_topk=False needs XLA's output size; import toolkit")
    else:
        dims[reduction_dimension] = _reduction_output_size(size, len(dims), k, recall_target, False,
                                                           reduction_input_size_override)
    return [ShapedArray(tuple(dims), operand.dtype, operand.weak_type), ShapedArray(tuple(dims), dtypes.int32)]


approx_top_k_p = family.primitive("approx_top_k", shape_rule=_approx_top_k_rule, multiple_results=True)


def _bind(operand: Any, k: int, reduction_dimension: int, recall_target: float, is_max_k: bool,
          reduction_input_size_override: int, aggregate_to_topk: bool) -> tuple[Any, Any]:
    ndim = aval_of(operand).ndim
    dim = operator.index(reduction_dimension)
    if ndim and not -ndim <= dim < ndim:
        raise ValueError(f"reduction_dimension {dim} is out of bounds for an operand of rank {ndim}")
    values, indices = approx_top_k_p.bind(
        operand, k=operator.index(k), reduction_dimension=dim, recall_target=float(recall_target),
        is_max_k=is_max_k, reduction_input_size_override=operator.index(reduction_input_size_override),
        aggregate_to_topk=bool(aggregate_to_topk))
    return values, indices


@family.function(binds=(approx_top_k_p,))
def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` largest values of a float ``operand`` along ``reduction_dimension`` and their indices
    (``jax.lax.approx_max_k``): approximate on TPU, exact elsewhere. ``k`` larger than the dimension, a
    non-float operand or a non-positive ``k`` is a ``ValueError``."""
    return _bind(operand, k, reduction_dimension, recall_target, True, reduction_input_size_override,
                 aggregate_to_topk)


@family.function(binds=(approx_top_k_p,))
def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` smallest values and their indices (``jax.lax.approx_min_k``); as :func:`approx_max_k`."""
    return _bind(operand, k, reduction_dimension, recall_target, False, reduction_input_size_override,
                 aggregate_to_topk)
