"""StableHLO for ``toolkit.lax.random_bits``: ``stablehlo.rng_bit_generator``.

The op wants a ``ui64[2]`` state; a ``ui32[4]`` key is bitcast to it and back
(the same convention as JAX, so keys and bits agree with ``jax.lax``).
"""

from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core.avals import is_static_shape
from toolkit.lax import random_bits as rb
from toolkit.lowering.registry import register_lowering

_ALGORITHMS = {rb.RandomAlgorithm.RNG_DEFAULT: "DEFAULT", rb.RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
               rb.RandomAlgorithm.RNG_PHILOX: "PHILOX"}


@register_lowering(rb.rng_bit_generator_p)
def _rng_bit_generator(ctx, key, *, shape, dtype, algorithm):
    if not is_static_shape(shape):
        # JAX emits custom_call @stablehlo.dynamic_rng_bit_generator here, which only StableHLO's C++
        # canonicalization turns back into the op; toolkit-refine-shapes does not, so say so up front.
        raise NotImplementedError(
            f"rng_bit_generator of symbolic shape ({', '.join(map(str, shape))}) is not supported: the op needs "
            "a static shape; generate bits for a static shape and slice or reshape them")
    u32, u64 = ir.IntegerType.get_unsigned(32), ir.IntegerType.get_unsigned(64)
    key_type, bits_type = ctx.out_types
    is_u32_key = ctx.avals_in[0].dtype.itemsize == 4
    state = key
    if is_u32_key:
        pairs = stablehlo.ReshapeOp(ir.RankedTensorType.get([2, 2], u32), key).result
        state = stablehlo.BitcastConvertOp(ir.RankedTensorType.get([2], u64), pairs).result
    op = stablehlo.RngBitGeneratorOp(state.type, bits_type, stablehlo.RngAlgorithmAttr.get(_ALGORITHMS[algorithm]),
                                     state)
    new_state, bits = op.results
    if is_u32_key:
        pairs = stablehlo.BitcastConvertOp(ir.RankedTensorType.get([2, 2], u32), new_state).result
        new_state = stablehlo.ReshapeOp(key_type, pairs).result
    return [new_state, bits]
