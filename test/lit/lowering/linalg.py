# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/linalg.py.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def matmul():
    # CHECK-LABEL: TEST: matmul
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    print(lowered_text(lambda a, b: lax.dot(a, b), spec((2, 3)), spec((3, 4))))


@run
def batched():
    # CHECK-LABEL: TEST: batched
    # CHECK: stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
    print(lowered_text(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                       spec((5, 2, 3)), spec((5, 3, 4))))


@run
def preferred_element_type():
    # CHECK-LABEL: TEST: preferred_element_type
    # Operands of one type go to XLA as they are, whatever the result type (JAX's rule); operands of two types
    # are both converted to the result type first, an identity convert included.
    # CHECK-NOT: stablehlo.convert
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2xi32>
    print(lowered_text(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32),
                       spec((2, 3), "int8"), spec((3,), "int8")))
    # CHECK: stablehlo.convert %arg0 : (tensor<2x3xf16>) -> tensor<2x3xf32>
    # CHECK-NEXT: stablehlo.convert %arg1 : tensor<3xf32>
    # CHECK-NEXT: stablehlo.dot_general {{.*}} -> tensor<2xf32>
    print(lowered_text(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.float32),
                       spec((2, 3), "float16"), spec((3,), "float32")))


@run
def numpy_matmul_unbatched_operand():
    # CHECK-LABEL: TEST: numpy_matmul_unbatched_operand
    # A 2-D operand is contracted directly, never broadcast over the batch.
    # CHECK-NOT: broadcast_in_dim
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [2] x [0] : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
    import toolkit.numpy as tnp
    print(lowered_text(tnp.matmul, spec((5, 2, 3)), spec((3, 4))))
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [1] : (tensor<2x3xf32>, tensor<5x3x4xf32>) -> tensor<2x5x4xf32>
    # CHECK: stablehlo.transpose %{{.*}}, dims = [1, 0, 2] : (tensor<2x5x4xf32>) -> tensor<5x2x4xf32>
    print(lowered_text(tnp.matmul, spec((2, 3)), spec((5, 3, 4))))
