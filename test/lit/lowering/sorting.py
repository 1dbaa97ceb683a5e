# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/sorting.py.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def sort_float():
    # CHECK-LABEL: TEST: sort_float
    # CHECK: "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    # CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
    # CHECK: stablehlo.compare NE, %[[A]], %[[A]], FLOAT
    # CHECK: stablehlo.compare LT, %[[A]], %[[B]], FLOAT
    # CHECK: stablehlo.return
    # CHECK: }) : (tensor<3x4xf32>) -> tensor<3x4xf32>
    print(lowered_text(lambda x: lax.sort(x, 1), spec((3, 4))))


@run
def sort_multi_operand_two_keys():
    # CHECK-LABEL: TEST: sort_multi_operand_two_keys
    # CHECK: "stablehlo.sort"(%arg0, %arg1, %arg2) <{dimension = 0 : i64, is_stable = false}> ({
    # CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<i32>, %[[B0:.*]]: tensor<i32>, %[[A1:.*]]: tensor<ui8>, %[[B1:.*]]: tensor<ui8>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
    # CHECK-DAG: stablehlo.compare LT, %[[A1]], %[[B1]], UNSIGNED
    # CHECK-DAG: stablehlo.compare LT, %[[A0]], %[[B0]], SIGNED
    # CHECK-DAG: stablehlo.compare EQ, %[[A0]], %[[B0]], SIGNED
    # CHECK: stablehlo.return
    print(lowered_text(lambda k1, k2, v: lax.sort((k1, k2, v), 0, is_stable=False, num_keys=2),
                       spec((5,), "int32"), spec((5,), "uint8"), spec((5,))))


@run
def argsort_iota():
    # CHECK-LABEL: TEST: argsort_iota
    # CHECK: %[[I:.*]] = stablehlo.iota dim = 0 : tensor<6xi32>
    # CHECK: %[[S:.*]]:2 = "stablehlo.sort"(%arg0, %[[I]])
    # CHECK: return %[[S]]#1
    print(lowered_text(lambda x: lax.argsort(x), spec((6,), "int32")))


@run
def top_k():
    # CHECK-LABEL: TEST: top_k
    # CHECK: %values, %indices = chlo.top_k(%arg0, k = 3) : tensor<2x8xf32> -> (tensor<2x3xf32>, tensor<2x3xi32>)
    print(lowered_text(lambda x: lax.top_k(x, 3), spec((2, 8))))
