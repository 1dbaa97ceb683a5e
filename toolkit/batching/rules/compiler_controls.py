"""Batching rules of ``toolkit.lax.compiler_controls``: elementwise, pass-through, one bigger draw, one sink of the batch."""

from __future__ import annotations

from toolkit.batching.registry import register_batching
from toolkit.lax import compiler_controls


def _reduce_precision(axis, args, dims, *, exponent_bits, mantissa_bits):
    (x,), (d,) = args, dims
    return compiler_controls.reduce_precision_p.bind(x, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits), d


def _optimization_barrier(axis, args, dims):
    # Every operand keeps its batch dimension (or none): the barrier is the identity on each.
    return list(compiler_controls.optimization_barrier_p.bind(*args)), list(dims)




def _rng_uniform(axis, args, dims, *, shape):
    # JAX has no rule at all. Unbatched bounds: one draw of the batched shape. Batched bounds would need
    # per-element ranges the op does not take, so they are refused.
    if any(d is not None for d in dims):
        raise NotImplementedError("toolkit.vmap: rng_uniform with batched bounds is not supported (the op takes "
                                  "scalar bounds; JAX cannot batch it at all): draw in [0, 1) and scale instead")
    return compiler_controls.rng_uniform_p.bind(*args, shape=(axis.size,) + tuple(shape)), 0


def _dce_sink(axis, args, dims, *, prevent_mlir_dce):
    # JAX's rule: the batched value is sunk as it is; there are no results to give a dimension.
    compiler_controls.dce_sink_p.bind(*args, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


register_batching(compiler_controls.reduce_precision_p, _reduce_precision)
register_batching(compiler_controls.dce_sink_p, _dce_sink)
register_batching(compiler_controls.optimization_barrier_p, _optimization_barrier)
register_batching(compiler_controls.rng_uniform_p, _rng_uniform)
