"""StableHLO for ``toolkit.lax.random_bits``: ``stablehlo.rng_bit_generator`` (for a symbolic shape,
JAX's ``custom_call @stablehlo.dynamic_rng_bit_generator``).

The op wants a ``ui64[2]`` state; a ``ui32[4]`` key is bitcast to it and back
(the same convention as JAX, so keys and bits agree with ``jax.lax``).
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax import random_bits
from toolkit.lowering.registry import register_lowering

_ALGORITHMS = {random_bits.RandomAlgorithm.RNG_DEFAULT: "DEFAULT", random_bits.RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
               random_bits.RandomAlgorithm.RNG_PHILOX: "PHILOX"}


@register_lowering(random_bits.rng_bit_generator_p)
def _rng_bit_generator(ctx, key, *, shape, dtype, algorithm):
    u32, u64 = ir.IntegerType.get_unsigned(32), ir.IntegerType.get_unsigned(64)
    key_type, bits_type = ctx.out_types
    is_u32_key = ctx.avals_in[0].dtype.itemsize == 4
    state = key
    if is_u32_key:
        pairs = stablehlo.ReshapeOp(ir.RankedTensorType.get([2, 2], u32), key).result
        state = stablehlo.BitcastConvertOp(ir.RankedTensorType.get([2], u64), pairs).result
    algorithm_attr = stablehlo.RngAlgorithmAttr.get(_ALGORITHMS[algorithm])
    if is_static_shape(shape):
        op = stablehlo.RngBitGeneratorOp(state.type, bits_type, algorithm_attr, state)
    else:
        # The op has no dynamic form: JAX's custom call, which toolkit-refine-shapes turns back into
        # the op once the shape is known.
        op = stablehlo.CustomCallOp([state.type, bits_type], [state, ctx.shape_value(shape)],
                                    "stablehlo.dynamic_rng_bit_generator",
                                    api_version=ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2))
        op.attributes["rng_algorithm"] = algorithm_attr
    new_state, bits = op.results
    if is_u32_key:
        pairs = stablehlo.BitcastConvertOp(ir.RankedTensorType.get([2, 2], u32), new_state).result
        new_state = stablehlo.ReshapeOp(key_type, pairs).result
    return [new_state, bits]
