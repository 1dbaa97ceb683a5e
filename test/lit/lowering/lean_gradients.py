# RUN: %PYTHON %s | filecheck %s
# Golden lowerings of issue 25 item 2: toolkit.lax.split (JAX's split primitive) and the
# gradients that now give XLA what JAX gives it (no pads, identity transposes or is_finite checks).

import toolkit
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def split_slices():
    # CHECK-LABEL: TEST: split_slices
    # One slice per piece, each starting where the previous one ended.
    # CHECK: stablehlo.slice %arg0 [0:2, 0:1] : (tensor<2x4xf32>) -> tensor<2x1xf32>
    # CHECK-NEXT: stablehlo.slice %arg0 [0:2, 1:4] : (tensor<2x4xf32>) -> tensor<2x3xf32>
    print(lowered_text(lambda x: lax.split(x, (1, 3), axis=1), spec((2, 4))))


@run
def split_transpose_is_concatenate():
    # CHECK-LABEL: TEST: split_transpose_is_concatenate
    # CHECK-NOT: stablehlo.pad
    # CHECK: stablehlo.concatenate %{{.*}}, %{{.*}}, %{{.*}}, dim = 1 : (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
    # CHECK-NOT: stablehlo.pad
    def loss(x):
        return sum((i + 1.0) * p.sum() for i, p in enumerate(toolkit.numpy.split(x, 3, axis=-1)))
    print(lowered_text(toolkit.grad(loss), spec((4, 6))))


@run
def matmul_gradient_no_identity_transpose():
    # CHECK-LABEL: TEST: matmul_gradient_no_identity_transpose
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0]
    # CHECK: stablehlo.dot_general %{{.*}}, %arg1, contracting_dims = [1] x [1] : (tensor<4x3xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
    # CHECK-NOT: stablehlo.transpose
    # CHECK: return
    print(lowered_text(toolkit.grad(lambda x, w: (x @ w).sum()), spec((4, 8)), spec((8, 3))))


@run
def log_softmax_gradient():
    # CHECK-LABEL: TEST: log_softmax_gradient
    # The shift is stop_gradient(max), as JAX's: no is_finite, select or max JVP (compare) in the gradient.
    # CHECK: stablehlo.reduce(%arg0 init: %{{.*}}) applies stablehlo.maximum across dimensions = [1]
    # CHECK-NOT: stablehlo.is_finite
    # CHECK-NOT: stablehlo.select
    # CHECK-NOT: stablehlo.compare
    # CHECK: return
    print(lowered_text(toolkit.grad(lambda x: toolkit.nn.log_softmax(x).sum()), spec((2, 5))))


@run
def softmax_forward():
    # CHECK-LABEL: TEST: softmax_forward
    # CHECK: stablehlo.maximum
    # CHECK-NOT: stablehlo.is_finite
    # CHECK: stablehlo.exponential
    # CHECK: stablehlo.divide
    print(lowered_text(lambda x: toolkit.nn.softmax(x, axis=-1), spec((2, 5))))
