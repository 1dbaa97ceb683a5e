# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/control_flow.py: `stablehlo.case` / `stablehlo.while` with regions, no unrolling.

import numpy as np

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def cond():
    # CHECK-LABEL: TEST: cond
    # The bool pred becomes the i32 branch index; branch 0 is false_fun. Captured `y` is used from above.
    # CHECK: %[[IDX:.*]] = stablehlo.convert %{{.*}} : (tensor<i1>) -> tensor<i32>
    # CHECK: "stablehlo.case"(%[[IDX]]) ({
    # CHECK-NEXT: stablehlo.return %arg0 : tensor<3xf32>
    # CHECK-NEXT: }, {
    # CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %arg0, %arg1 : tensor<3xf32>
    # CHECK-NEXT: stablehlo.return %[[M]] : tensor<3xf32>
    # CHECK-NEXT: }) : (tensor<i32>) -> tensor<3xf32>
    print(lowered_text(lambda x, y: lax.cond(x[0] > 0, lambda v: v * y, lambda v: v, x), spec((3,)), spec((3,))))


@run
def switch():
    # CHECK-LABEL: TEST: switch
    # CHECK: %[[LO:.*]] = stablehlo.constant dense<0> : tensor<i32>
    # CHECK: %[[HI:.*]] = stablehlo.constant dense<2> : tensor<i32>
    # CHECK: %[[IDX:.*]] = stablehlo.clamp %[[LO]], %arg0, %[[HI]] : tensor<i32>
    # CHECK: "stablehlo.case"(%[[IDX]])
    # CHECK: stablehlo.add
    # CHECK: }, {
    # CHECK: stablehlo.multiply
    # CHECK: }, {
    # CHECK: stablehlo.negate
    # CHECK: }) : (tensor<i32>) -> tensor<3xf32>
    print(lowered_text(lambda i, x: lax.switch(i, [lambda v: v + 1, lambda v: v * 2, lambda v: -v], x),
                       spec((), "int32"), spec((3,))))


@run
def while_loop():
    # CHECK-LABEL: TEST: while_loop
    # A captured value (%arg1) is loop-carried through unchanged.
    # CHECK: stablehlo.while(%[[C:.*]] = %arg1, %[[X:.*]] = %arg0) : tensor<f32>, tensor<f32>
    # CHECK-NEXT: cond {
    # CHECK: stablehlo.compare LT, %[[X]]
    # CHECK: } do {
    # CHECK: %[[N:.*]] = stablehlo.add %[[X]], %[[C]] : tensor<f32>
    # CHECK-NEXT: stablehlo.return %[[C]], %[[N]] : tensor<f32>, tensor<f32>
    print(lowered_text(lambda x, step: lax.while_loop(lambda v: v < 100, lambda v: v + step, x), spec(()), spec(())))


@run
def fori_loop():
    # CHECK-LABEL: TEST: fori_loop
    # CHECK-COUNT-1: stablehlo.while
    # CHECK: stablehlo.compare LT, {{.*}} SIGNED
    # CHECK: stablehlo.multiply
    # CHECK-NOT: stablehlo.multiply
    # CHECK: return
    print(lowered_text(lambda x: lax.fori_loop(0, 5, lambda i, v: v * 2, x), spec((2,))))


@run
def scan():
    # CHECK-LABEL: TEST: scan
    # Counter, carry, ys buffer, xs; reversed: the slot is length-1-counter.
    # CHECK: %[[YS:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<4xf32>
    # CHECK: stablehlo.while(%[[I:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[B:.*]] = %[[YS]], %[[XS:.*]] = %arg0)
    # CHECK: stablehlo.constant dense<4> : tensor<i32>
    # CHECK: } do {
    # CHECK: %[[SLOT:.*]] = stablehlo.subtract %{{.*}}, %[[I]] : tensor<i32>
    # CHECK: stablehlo.dynamic_slice %[[XS]], %[[SLOT]], sizes = [1]
    # CHECK: stablehlo.dynamic_update_slice %[[B]], %{{.*}}, %[[SLOT]]
    # CHECK: stablehlo.add %[[I]]
    print(lowered_text(lambda xs: lax.scan(lambda c, x: (c + x, c), np.float32(0), xs, reverse=True), spec((4,))))
