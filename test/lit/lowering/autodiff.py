# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/autodiff.py: stop_gradient is no op at all, and its gradient is zero.

import toolkit
import toolkit.numpy as tnp
from toolkit.lax import stop_gradient
from toolkit.testing import lowered_text, run, spec


@run
def stop_gradient_is_nothing():
    # CHECK-LABEL: TEST: stop_gradient_is_nothing
    # CHECK: %[[S:.*]] = stablehlo.sine %arg0 : tensor<3xf32>
    # CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[S]], %arg0 : tensor<3xf32>
    # CHECK-NEXT: return %[[M]]
    print(lowered_text(lambda x: stop_gradient(tnp.sin(x)) * x, spec((3,))))


@run
def gradient_through_stop_gradient():
    # The gradient of stop_gradient(sin(x)) * x is sin(x): no cosine is computed.
    # CHECK-LABEL: TEST: gradient_through_stop_gradient
    # CHECK-NOT: stablehlo.cosine
    # CHECK: stablehlo.sine %arg0
    # CHECK-NOT: stablehlo.cosine
    # CHECK: return
    print(lowered_text(toolkit.grad(lambda x: tnp.sum(stop_gradient(tnp.sin(x)) * x)), spec((3,))))
