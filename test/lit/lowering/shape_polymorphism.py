# RUN: %PYTHON %s | filecheck %s
# Golden lowering of symbolic shapes: dimension variables, assertions and dynamic ops.

import numpy as np

import toolkit.numpy as tnp
from toolkit import ShapeDtypeStruct, lax
from toolkit.core.shape_poly import symbolic_shape
from toolkit.testing import lowered_text, run


def poly(spec, dtype=np.float32, constraints=()):
    return ShapeDtypeStruct(symbolic_shape(spec, constraints=constraints), dtype)


@run
def dimension_variables():
    # CHECK-LABEL: TEST: dimension_variables
    # CHECK: module @jit__lambda_ attributes {jax.uses_shape_polymorphism = true
    # CHECK: func.func public @main(%arg0: tensor<?x4xf32>) -> (tensor<?x4xf32>
    # CHECK: %[[SIZE:.*]] = stablehlo.get_dimension_size %arg0, dim = 0
    # CHECK: %[[B:.*]] = stablehlo.convert %[[SIZE]] : (tensor<i32>) -> tensor<i64>
    # CHECK: stablehlo.compare GE, %[[B]]
    # CHECK: stablehlo.custom_call @shape_assertion({{.*}}) {error_message = "{{.*}}Expected value >= 1 for dimension variable 'b'{{.*}}", has_side_effect = true}
    # CHECK: stablehlo.custom_call @shape_assertion({{.*}}Constraint 'b >= 2' is not satisfied.
    print(lowered_text(lambda x: x * 2, poly("b, 4", constraints=("b >= 2",))))


@run
def linear_dimension():
    # CHECK-LABEL: TEST: linear_dimension
    # 2*b + 1: b = (d - 1) // 2, with a remainder check.
    # CHECK: stablehlo.get_dimension_size %arg0, dim = 0
    # CHECK: stablehlo.remainder
    # CHECK: @shape_assertion({{.*}}Division had remainder {0} when computing the value of 'b'
    print(lowered_text(lambda x: x + 1, poly("2*b + 1")))


@run
def dynamic_ops():
    # CHECK-LABEL: TEST: dynamic_ops
    # CHECK: stablehlo.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [] : (tensor<f32>, tensor<2xi64>) -> tensor<?x3xf32>
    print(lowered_text(lambda x: x + 1.0, poly("b, 3")))
    # CHECK: %[[N:.*]] = stablehlo.multiply %{{.*}}, %{{.*}} : tensor<i64>
    # CHECK: stablehlo.dynamic_reshape %arg0, %{{.*}} : (tensor<?x3xf32>, tensor<1xi64>) -> tensor<?xf32>
    print(lowered_text(lambda x: x.reshape(-1), poly("b, 3")))
    # CHECK: stablehlo.dynamic_iota %{{.*}}, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>
    print(lowered_text(lambda x: lax.iota(np.int32, x.shape[0]), poly("b")))
    # CHECK: stablehlo.real_dynamic_slice %arg0, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    print(lowered_text(lambda x: lax.slice(x, (1,), (x.shape[0],)), poly("b")))
    # CHECK: stablehlo.dynamic_pad %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?xf32>, tensor<f32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
    # (static padding amounts keep a static pad of the symbolic operand; symbolic amounts need dynamic_pad)
    print(lowered_text(lambda x: lax.pad(x, np.float32(0), [(1, x.shape[0], 0)]), poly("b")))


@run
def floordiv_dimension():
    # CHECK-LABEL: TEST: floordiv_dimension
    # floordiv rounds towards minus infinity: divide, then step down on a sign mismatch.
    # CHECK: stablehlo.divide
    # CHECK: stablehlo.remainder
    # CHECK: stablehlo.xor
    # CHECK: stablehlo.select
    # CHECK: stablehlo.dynamic_reshape
    print(lowered_text(lambda x: tnp.reshape(x, (x.shape[0] // 2, 2)), poly("2*b")))
