# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/windowed.py: `stablehlo.reduce` / `stablehlo.reduce_window` with a traced body.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def reduce_generic():
    # CHECK-LABEL: TEST: reduce_generic
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) across dimensions = [0] : (tensor<5xf32>, tensor<f32>) -> tensor<f32>
    # CHECK-NEXT: reducer(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>)
    # CHECK: %[[SQ:.*]] = stablehlo.multiply %[[B]], %[[B]] : tensor<f32>
    # CHECK: stablehlo.add %[[A]], %[[SQ]] : tensor<f32>
    print(lowered_text(lambda x: lax.reduce(x, np.float32(0), lambda a, b: a + b * b, (0,)), spec((5,))))


@run
def reduce_monoid():
    # CHECK-LABEL: TEST: reduce_monoid
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.maximum across dimensions = [1]
    print(lowered_text(lambda x: lax.reduce(x, -np.inf, lax.max, (1,)), spec((2, 5))))


@run
def reduce_variadic():
    # CHECK-LABEL: TEST: reduce_variadic
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}), (%arg1 init: %{{.*}}) across dimensions = [0] : (tensor<4xf32>, tensor<4xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
    # CHECK: stablehlo.compare GE
    # CHECK: stablehlo.select
    # CHECK: stablehlo.select
    def pick(a, b):
        take = lax.ge(a[0], b[0])
        return lax.select(take, a[0], b[0]), lax.select(take, a[1], b[1])
    print(lowered_text(lambda x, i: lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)), pick, (0,)),
                       spec((4,)), spec((4,), "int32")))


@run
def reduce_window_max_pool():
    # CHECK-LABEL: TEST: reduce_window_max_pool
    # CHECK: "stablehlo.reduce_window"(%arg0, %{{.*}}) <{window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    # CHECK: stablehlo.maximum
    # CHECK: (tensor<2x6x6x3xf32>, tensor<f32>) -> tensor<2x3x3x3xf32>
    print(lowered_text(lambda x: lax.reduce_window_max(x, (1, 2, 2, 1), (1, 2, 2, 1)), spec((2, 6, 6, 3))))


@run
def reduce_window_dilated_padded():
    # CHECK-LABEL: TEST: reduce_window_dilated_padded
    # CHECK: "stablehlo.reduce_window"
    # CHECK-SAME: base_dilations = array<i64: 2>
    # CHECK-SAME: padding = dense<1> : tensor<1x2xi64>
    # CHECK-SAME: window_dilations = array<i64: 2>
    # CHECK: stablehlo.add
    print(lowered_text(lambda x: lax.reduce_window_sum(x, (2,), (1,), ((1, 1),), (2,), (2,)), spec((5,))))


@run
def cumsum():
    # CHECK-LABEL: TEST: cumsum
    # CHECK: "stablehlo.reduce_window"(%arg0, %{{.*}}) <{padding = dense<{{\[}}[0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>}>
    # CHECK: stablehlo.add
    print(lowered_text(lambda x: lax.cumsum(x, axis=1), spec((2, 4))))
    # CHECK: padding = dense<{{\[}}[0, 3]]>
    # CHECK: stablehlo.maximum
    print(lowered_text(lambda x: lax.cummax(x, reverse=True), spec((4,), "int32")))
