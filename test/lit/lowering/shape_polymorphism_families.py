# RUN: %PYTHON %s | filecheck %s
# Golden lowering of the dynamic forms each primitive family uses for symbolic shapes.

import numpy as np

import toolkit.numpy as tnp
from toolkit import ShapeDtypeStruct, lax
from toolkit.core.shape_poly import symbolic_shape
from toolkit.testing import lowered_text, run


def poly(spec, dtype=np.float32, constraints=()):
    return ShapeDtypeStruct(symbolic_shape(spec, constraints=constraints), dtype)


@run
def slice_with_bounds():
    # CHECK-LABEL: TEST: slice_with_bounds
    # x[1:] on a symbolic dimension: start 1, limit b, as a real_dynamic_slice with a b - 1 result.
    # CHECK: stablehlo.real_dynamic_slice %arg0, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x4xf32>
    print(lowered_text(lambda x: x[1:], poly("b, 4")))
    # x[::-2]: reverse, then a strided slice.
    # CHECK: stablehlo.reverse %arg0, dims = [0] : tensor<?x4xf32>
    # CHECK: stablehlo.real_dynamic_slice
    print(lowered_text(lambda x: x[::-2], poly("b, 4")))


@run
def slice_limit_assertion():
    # CHECK-LABEL: TEST: slice_limit_assertion
    # A static limit that the symbolic size may not reach is checked when the module is specialized.
    # CHECK: stablehlo.compare GE
    # CHECK: stablehlo.custom_call @shape_assertion({{.*}}) {error_message = "slice: limit of dimension 0: needs 'b' >= 3, got 'b' = {0}."
    # CHECK: stablehlo.slice %arg0 [1:3] : (tensor<?xf32>) -> tensor<2xf32>
    print(lowered_text(lambda x: lax.slice(x, (1,), (3,)), poly("b")))


@run
def dynamic_slice_symbolic_size():
    # CHECK-LABEL: TEST: dynamic_slice_symbolic_size
    # real_dynamic_slice does not clamp: the starts are clamped to [0, shape - size] first (as JAX emits).
    # CHECK: %[[CLAMPED:.*]] = stablehlo.clamp %{{.*}}, %{{.*}}, %{{.*}} : tensor<2xi64>
    # CHECK: %[[LIMIT:.*]] = stablehlo.add %[[CLAMPED]], %{{.*}} : tensor<2xi64>
    # CHECK: stablehlo.real_dynamic_slice %arg0, %[[CLAMPED]], %[[LIMIT]], %{{.*}} : (tensor<?x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x2xf32>
    print(lowered_text(lambda x, i: lax.dynamic_slice(x, (i, np.int32(0)), (x.shape[0] - 1, 2)),
                       poly("b, 4"), ShapeDtypeStruct((), np.int32)))


@run
def static_pad_of_symbolic_operand():
    # CHECK-LABEL: TEST: static_pad_of_symbolic_operand
    # CHECK: stablehlo.pad %arg0, %{{.*}}, low = [1, 0], high = [2, 0], interior = [1, 0] : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
    print(lowered_text(lambda x: lax.pad(x, np.float32(0), [(1, 2, 1), (0, 0, 0)]), poly("b, 4")))


@run
def scan_symbolic_length():
    # CHECK-LABEL: TEST: scan_symbolic_length
    # The trip count is b (as i32), computed from the argument's shape.
    # CHECK: %[[B:.*]] = stablehlo.convert %{{.*}} : (tensor<i32>) -> tensor<i64>
    # CHECK: stablehlo.while
    # CHECK: cond {
    # CHECK: %[[LIMIT:.*]] = stablehlo.convert %[[B]] : (tensor<i64>) -> tensor<i32>
    # CHECK: stablehlo.compare LT, %{{.*}}, %[[LIMIT]], SIGNED
    # CHECK: stablehlo.dynamic_slice
    # CHECK: stablehlo.dynamic_update_slice
    print(lowered_text(lambda x: lax.scan(lambda c, xi: (c + xi, c), tnp.zeros(4, np.float32), x), poly("b, 4")))
    # Scanned slices of a symbolic size: real_dynamic_slice, then dynamic_reshape to drop the leading 1.
    # CHECK: stablehlo.while
    # CHECK: stablehlo.real_dynamic_slice {{.*}} -> tensor<1x?xf32>
    # CHECK: stablehlo.dynamic_reshape {{.*}} -> tensor<?xf32>
    print(lowered_text(lambda x: lax.scan(lambda c, xi: (c + xi, c), tnp.zeros(x.shape[0], np.float32), x.T)[1],
                       poly("b, 4")))


@run
def cumsum_symbolic_axis():
    # CHECK-LABEL: TEST: cumsum_symbolic_axis
    # A prefix scan: ceil(log2 b) = 32 - clz(b - 1) steps; each combines with the operand shifted by 2^step,
    # read from [identity..., y] with a real_dynamic_slice.
    # CHECK: stablehlo.count_leading_zeros
    # CHECK: stablehlo.while
    # CHECK: stablehlo.shift_left
    # CHECK: stablehlo.concatenate %{{.*}}, %{{.*}}, dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    # CHECK: stablehlo.real_dynamic_slice
    # CHECK: stablehlo.add
    print(lowered_text(lambda x: lax.cumsum(x, 0), poly("b, 4")))


@run
def conv_symbolic_padding():
    # CHECK-LABEL: TEST: conv_symbolic_padding
    # 'SAME' with stride 2 over a symbolic size: the padding depends on b, so dynamic_conv takes it as a tensor.
    # CHECK: %[[PADS:.*]] = stablehlo.reshape %{{.*}} : (tensor<4xi64>) -> tensor<2x2xi64>
    # CHECK: stablehlo.dynamic_conv
    # CHECK-SAME: (tensor<1x1x?x4xf32>, tensor<2x1x3x2xf32>, tensor<2x2xi64>) -> tensor<1x2x?x4xf32>
    kernel = np.ones((2, 1, 3, 2), np.float32)
    print(lowered_text(lambda x: lax.conv(x, kernel, (2, 1), "SAME"), poly("1, 1, b, 4")))


@run
def reduce_window_symbolic_padding():
    # CHECK-LABEL: TEST: reduce_window_symbolic_padding
    # reduce_window's padding is an attribute: pad explicitly with the init value, then reduce unpadded.
    # CHECK: %[[PADDED:.*]] = stablehlo.dynamic_pad %arg0, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x4xf32>
    # CHECK: "stablehlo.reduce_window"(%[[PADDED]], %{{.*}}) <{window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 2, 2>}>
    print(lowered_text(lambda x: lax.reduce_window_max(x, (3, 2), (2, 2), "SAME"), poly("b, 4")))
    # Static padding (stride 1) stays an attribute.
    # CHECK: "stablehlo.reduce_window"(%arg0, %{{.*}})
    # CHECK-SAME: padding = dense<{{\[}}[0, 1], [0, 1]]>
    print(lowered_text(lambda x: lax.reduce_window_sum(x, (2, 2), (1, 1), "SAME"), poly("b, 4")))


@run
def top_k_assertion():
    # CHECK-LABEL: TEST: top_k_assertion
    # CHECK: stablehlo.custom_call @shape_assertion({{.*}}) {error_message = "top_k: k=2 and the last dimension: needs 'b' >= 2, got 'b' = {0}."
    # CHECK: chlo.top_k(%{{.*}}, k = 2) : tensor<4x?xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
    print(lowered_text(lambda x: lax.top_k(x, 2), poly("4, b")))


@run
def fori_symbolic_bound():
    # CHECK-LABEL: TEST: fori_symbolic_bound
    # The upper bound x.shape[0] becomes a loop-carried value computed from the argument's shape.
    # CHECK: %[[SIZE:.*]] = stablehlo.get_dimension_size %arg0, dim = 0
    # CHECK: %[[B:.*]] = stablehlo.convert %[[SIZE]] : (tensor<i32>) -> tensor<i64>
    # CHECK: %[[UPPER:.*]] = stablehlo.convert %[[B]] : (tensor<i64>) -> tensor<i32>
    # CHECK: stablehlo.while({{.*}}%[[UPPER]]
    print(lowered_text(lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i], tnp.zeros(4, np.float32)),
                       poly("b, 4")))


@run
def update_window_assertion():
    # CHECK-LABEL: TEST: update_window_assertion
    # An update of symbolic size c into an operand of size b: c <= b is checked at specialization.
    # CHECK: stablehlo.custom_call @shape_assertion({{.*}}) {error_message = "dynamic_update_slice: update size of dimension 0: needs 'b' >= 'c', got 'b' = {0} and 'c' = {1}."
    # CHECK: stablehlo.dynamic_update_slice %arg0, %arg1, {{.*}} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<i32>, tensor<i32>) -> tensor<?x4xf32>
    b, c = symbolic_shape("b, c")
    print(lowered_text(lambda x, y: lax.dynamic_update_slice(x, y, (np.int32(0), np.int32(0))),
                       ShapeDtypeStruct((b, 4), np.float32), ShapeDtypeStruct((c, 4), np.float32)))
