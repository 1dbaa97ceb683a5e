"""Sharding rules of ``toolkit.lax.compiler_controls``: specs pass through; rng_uniform's result is replicated;
dce_sink has no results to type."""

from __future__ import annotations

from toolkit.core.sharding_types import register_sharding_rule
from toolkit.lax import compiler_controls


@register_sharding_rule(compiler_controls.reduce_precision_p)
def _reduce_precision_rule(specs_in, avals_in, avals_out, **params):
    return [specs_in[0]]


@register_sharding_rule(compiler_controls.optimization_barrier_p)
def _optimization_barrier_rule(specs_in, avals_in, avals_out):
    return list(specs_in)


@register_sharding_rule(compiler_controls.rng_uniform_p)
def _rng_uniform_rule(specs_in, avals_in, avals_out, *, shape):
    # JAX types the result with the current mesh's default (replicated) sharding.
    return [(None,) * len(shape)]


@register_sharding_rule(compiler_controls.dce_sink_p)
def _dce_sink_rule(specs_in, avals_in, avals_out, *, prevent_mlir_dce):
    return []
