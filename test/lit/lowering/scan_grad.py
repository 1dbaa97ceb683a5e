# RUN: %PYTHON %s | filecheck %s
# Golden reverse mode of `scan` (toolkit/ad/rules/control_flow.py): the forward loop stacks each step's input
# carry and its product `h @ w`; the backward loop reads the saved product instead of computing it again
# (only the products' transposes are in its body), and a ys output nobody differentiates gets no stacked zeros.

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


def _rnn_loss(w, xs):
    h, hs = lax.scan(lambda h, x: (tnp.tanh(h @ w + x), h), tnp.zeros((2, 3), np.float32), xs)
    return tnp.sum(h)  # the stacked hs are dropped: their cotangent is a symbolic zero


@run
def scan_grad_saves_products():
    # CHECK-LABEL: TEST: scan_grad_saves_products
    # Forward: the carry and the product are stacked (two dynamic_update_slices besides the dropped ys).
    # CHECK: stablehlo.while
    # CHECK: } do {
    # CHECK: %[[DOT:.*]] = stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
    # CHECK: stablehlo.reshape %[[DOT]] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    # CHECK: stablehlo.dynamic_update_slice
    # CHECK: stablehlo.return
    # Backward: saved carry, xs and saved product are read; no zeros for the dropped ys are read or added.
    # CHECK: stablehlo.while
    # CHECK: } do {
    # CHECK-COUNT-3: stablehlo.dynamic_slice
    # CHECK-NOT: stablehlo.dynamic_slice
    # CHECK-NOT: contracting_dims = [1] x [0]
    # CHECK: stablehlo.tanh
    # CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [0] x [0]
    # CHECK: stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [1]
    # CHECK-NOT: stablehlo.dot_general
    # CHECK: stablehlo.return
    print(lowered_text(toolkit.grad(_rnn_loss), spec((3, 3)), spec((5, 2, 3))))


@run
def scan_grad_constant_product_not_saved():
    # CHECK-LABEL: TEST: scan_grad_constant_product_not_saved
    # `w @ w` uses loop constants only: it is the same every step, so it is not stacked (one buffer: the carry).
    # CHECK: stablehlo.while
    # CHECK: } do {
    # CHECK-COUNT-1: stablehlo.dynamic_update_slice
    # CHECK-NOT: stablehlo.dynamic_update_slice
    # CHECK: stablehlo.return
    def loss(w, xs):
        h, _ = lax.scan(lambda h, x: (tnp.tanh(h * (w @ w)[0] + x), None), tnp.zeros((3,), np.float32), xs)
        return tnp.sum(h)
    print(lowered_text(toolkit.grad(loss), spec((3, 3)), spec((5, 3))))
