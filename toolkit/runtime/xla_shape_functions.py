"""XLA's shape functions that jaxlib exposes and that toolkit's shape rules need (installed into the layers below
the runtime by ``toolkit.stages``, as the eager handlers are).

* :func:`approx_top_k_reduction_output_size` is XLA's ``ApproxTopKReductionOutputSize``: the size of the reduced
  dimension of ``approx_top_k`` with ``aggregate_to_topk=False`` (the approximate candidates TPU keeps; the
  exact fallback elsewhere sorts and keeps as many). JAX's shape rule calls the same function.
"""

from __future__ import annotations

from jaxlib import _jax


def approx_top_k_reduction_output_size(input_size: int, rank: int, k: int, recall_target: float,
                                       aggregate_to_topk: bool, input_size_override: int) -> int:
    """The reduced dimension's size; XLA's own ``INVALID_ARGUMENT`` errors (a recall target outside (0, 1], an
    override below the input size) come through as jaxlib raises them, as in JAX."""
    size, _ = _jax.approx_top_k_reduction_output_size(input_size, rank, k, recall_target, aggregate_to_topk,
                                                      input_size_override)
    return int(size)
