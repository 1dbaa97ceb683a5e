"""Differentiation of ``toolkit.lax.compiler_controls``, JAX's rules.

``reduce_precision`` is treated as linear (its tangent and cotangent are reduced the same way);
``optimization_barrier``'s JVP puts the primals and, separately, the tangents behind barriers, and
its transpose puts the cotangents behind one; ``rng_uniform`` has no derivative in JAX either.
``dce_sink`` has no results: its JVP keeps the sink of the primal and has no tangents (JAX's is linear
with a transpose that returns nothing, so no sink reaches the backward pass either).
"""

from __future__ import annotations

from toolkit.ad.jvp import deflinear
from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES
from toolkit.ad.values import Zero, instantiate
from toolkit.lax import compiler_controls


def _reduce_precision_transpose(ct, x, *, exponent_bits, mantissa_bits):
    if isinstance(ct, Zero):
        return [None]
    return [compiler_controls.reduce_precision_p.bind(ct, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)]


deflinear(compiler_controls.reduce_precision_p, _reduce_precision_transpose)


def _optimization_barrier_jvp(primals, tangents):
    outs = compiler_controls.optimization_barrier_p.bind(*primals)
    return list(outs), list(compiler_controls.optimization_barrier_p.bind(*(instantiate(t) for t in tangents)))


def _optimization_barrier_transpose(cts, *xs):
    del xs
    return list(compiler_controls.optimization_barrier_p.bind(*(instantiate(ct) for ct in cts)))


JVP_RULES[compiler_controls.optimization_barrier_p] = _optimization_barrier_jvp
TRANSPOSE_RULES[compiler_controls.optimization_barrier_p] = _optimization_barrier_transpose
NO_JVP[compiler_controls.rng_uniform_p] = ("XLA's stateful generator has no derivative (JAX defines none); "
                                           "differentiate through toolkit.random instead")


def _dce_sink_jvp(primals, tangents, *, prevent_mlir_dce):
    compiler_controls.dce_sink_p.bind(*primals, prevent_mlir_dce=prevent_mlir_dce)
    return [], []


JVP_RULES[compiler_controls.dce_sink_p] = _dce_sink_jvp
