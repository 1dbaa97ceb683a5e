# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/compiler_controls.py and lax.mulhi: one op each, as JAX 0.10.2 lowers them.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def reduce_precision():
    # CHECK-LABEL: TEST: reduce_precision
    # CHECK: stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>
    print(lowered_text(lambda x: lax.reduce_precision(x, 5, 10), spec((4,))))


@run
def optimization_barrier():
    # CHECK-LABEL: TEST: optimization_barrier
    # CHECK: %[[B:.*]]:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<3xf32>, tensor<2xi32>
    # CHECK: return %[[B]]#0, %[[B]]#1
    print(lowered_text(lambda x, y: lax.optimization_barrier((x, y)), spec((3,)), spec((2,), "int32")))


@run
def rng_uniform():
    # CHECK-LABEL: TEST: rng_uniform
    # CHECK: %[[SHAPE:.*]] = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
    # CHECK: stablehlo.rng %arg0, %arg1, %[[SHAPE]], distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<2x3xf32>
    print(lowered_text(lambda a, b: lax.rng_uniform(a, b, (2, 3)), spec(()), spec(())))


@run
def mulhi():
    # CHECK-LABEL: TEST: mulhi
    # CHECK: chlo.mulhi %arg0, %arg1 : tensor<4xui32>, tensor<4xui32> -> tensor<4xui32>
    print(lowered_text(lambda x, y: lax.mulhi(x, y), spec((4,), np.uint32), spec((4,), np.uint32)))
