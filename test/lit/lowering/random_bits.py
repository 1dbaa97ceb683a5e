# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/random_bits.py: `stablehlo.rng_bit_generator` on a u64[2] state.

import numpy as np

import toolkit
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def rng_u32_key():
    # CHECK-LABEL: TEST: rng_u32_key
    # CHECK: %[[R:.*]] = stablehlo.reshape %arg0 : (tensor<4xui32>) -> tensor<2x2xui32>
    # CHECK: %[[S:.*]] = stablehlo.bitcast_convert %[[R]] : (tensor<2x2xui32>) -> tensor<2xui64>
    # CHECK: %output_state, %output = stablehlo.rng_bit_generator %[[S]], algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui8>)
    # CHECK: stablehlo.bitcast_convert %output_state : (tensor<2xui64>) -> tensor<2x2xui32>
    # CHECK: stablehlo.reshape %{{.*}} : (tensor<2x2xui32>) -> tensor<4xui32>
    print(lowered_text(lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8, lax.RandomAlgorithm.RNG_THREE_FRY),
                       spec((4,), "uint32")))


@run
def rng_u64_key_default():
    # CHECK-LABEL: TEST: rng_u64_key_default
    # CHECK-NOT: bitcast_convert
    # CHECK: stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5xui32>)
    with toolkit.enable_x64():  # a uint64 state needs 64-bit types (off by default, as in JAX)
        print(lowered_text(lambda k: lax.rng_bit_generator(k, (5,)), spec((2,), "uint64")))
