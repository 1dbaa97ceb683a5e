# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/structural.py.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def broadcast_in_dim():
    # CHECK-LABEL: TEST: broadcast_in_dim
    # CHECK: stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
    print(lowered_text(lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), spec((3,))))


@run
def reshape_transpose():
    # CHECK-LABEL: TEST: reshape_transpose
    # CHECK: stablehlo.reshape %arg0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
    print(lowered_text(lambda x: lax.reshape(x, (3, 2)), spec((2, 3))))
    # CHECK: stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    print(lowered_text(lambda x: lax.transpose(x, (1, 0)), spec((2, 3))))


@run
def slice_pad_rev():
    # CHECK-LABEL: TEST: slice_pad_rev
    # CHECK: stablehlo.slice %arg0 [1:5:2] : (tensor<6xf32>) -> tensor<2xf32>
    print(lowered_text(lambda x: lax.slice(x, (1,), (5,), (2,)), spec((6,))))
    # CHECK: stablehlo.pad %arg0, %arg1, low = [1], high = [2], interior = [1] : (tensor<3xf32>, tensor<f32>) -> tensor<8xf32>
    print(lowered_text(lambda x, v: lax.pad(x, v, [(1, 2, 1)]), spec((3,)), spec(())))
    # CHECK: stablehlo.reverse %arg0, dims = [0] : tensor<6xf32>
    print(lowered_text(lambda x: lax.rev(x, (0,)), spec((6,))))


@run
def concatenate_iota():
    # CHECK-LABEL: TEST: concatenate_iota
    # CHECK: stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
    print(lowered_text(lambda x, y: lax.concatenate([x, y], 0), spec((2,)), spec((3,))))
    # CHECK: stablehlo.iota dim = 1 : tensor<2x4xi32>
    print(lowered_text(lambda: lax.broadcasted_iota(np.int32, (2, 4), 1)))


@run
def dynamic_slices():
    # CHECK-LABEL: TEST: dynamic_slices
    # A negative start counts from the end, as JAX's (allow_negative_indices): start + size where start < 0.
    # CHECK: %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<i32>
    # CHECK: %[[NEG_I:.*]] = stablehlo.compare LT, %arg1, %[[ZERO]], SIGNED
    # CHECK: %[[FOUR:.*]] = stablehlo.constant dense<4> : tensor<i32>
    # CHECK: %[[WRAPPED_I:.*]] = stablehlo.add %arg1, %[[FOUR]]
    # CHECK: %[[I:.*]] = stablehlo.select %[[NEG_I]], %[[WRAPPED_I]], %arg1
    # CHECK: %[[NEG_J:.*]] = stablehlo.compare LT, %arg2, %[[ZERO]], SIGNED
    # CHECK: %[[FIVE:.*]] = stablehlo.constant dense<5> : tensor<i32>
    # CHECK: %[[WRAPPED_J:.*]] = stablehlo.add %arg2, %[[FIVE]]
    # CHECK: %[[J:.*]] = stablehlo.select %[[NEG_J]], %[[WRAPPED_J]], %arg2
    # CHECK: stablehlo.dynamic_slice %arg0, %[[I]], %[[J]], sizes = [2, 2] : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    print(lowered_text(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), spec((4, 5)), spec((), "int32"),
                       spec((), "int32")))
    # CHECK: %[[NEG:.*]] = stablehlo.compare LT, %arg2
    # CHECK: %[[WRAPPED:.*]] = stablehlo.add %arg2
    # CHECK: %[[K:.*]] = stablehlo.select %[[NEG]], %[[WRAPPED]], %arg2
    # CHECK: stablehlo.dynamic_update_slice %arg0, %arg1, %[[K]] : (tensor<4xf32>, tensor<2xf32>, tensor<i32>) -> tensor<4xf32>
    print(lowered_text(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), spec((4,)), spec((2,)),
                       spec((), "int32")))
    # allow_negative_indices=False: the start as given (XLA clamps it).
    # CHECK-NOT: stablehlo.select
    # CHECK: stablehlo.dynamic_slice %arg0, %arg1, sizes = [2] : (tensor<4xf32>, tensor<i32>) -> tensor<2xf32>
    print(lowered_text(lambda x, i: lax.dynamic_slice(x, (i,), (2,), allow_negative_indices=False), spec((4,)),
                       spec((), "int32")))


@run
def dimension_size():
    # CHECK-LABEL: TEST: dimension_size
    # A symbolic dimension used as a value: computed from the argument's shape at run time.
    # CHECK: %[[D:.*]] = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    # CHECK: %[[B:.*]] = stablehlo.convert %[[D]] : (tensor<i32>) -> tensor<i64>
    # CHECK: %[[I32:.*]] = stablehlo.convert %[[B]] : (tensor<i64>) -> tensor<i32>
    # CHECK: %[[F:.*]] = stablehlo.convert %[[I32]] : (tensor<i32>) -> tensor<f32>
    # CHECK: stablehlo.divide %{{.*}}, %[[F]] : tensor<f32>
    from toolkit.core.shape_poly import symbolic_shape
    b, = symbolic_shape("b")
    print(lowered_text(lambda x: x.sum() / x.shape[0], spec((b,))))
