# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/calls.py: call primitives are their sub-program, inline; a differentiated
# checkpoint recomputes behind an optimization_barrier.

import toolkit
import toolkit.numpy as tnp
from toolkit.testing import lowered_text, run, spec


@run
def custom_jvp_call():
    # CHECK-LABEL: TEST: custom_jvp_call
    # CHECK-NOT: custom
    # CHECK: stablehlo.sine %arg0
    # CHECK-NEXT: return
    f = toolkit.custom_jvp(tnp.sin)
    f.defjvp(lambda p, t: (tnp.sin(p[0]), t[0]))
    print(lowered_text(f, spec((3,))))


@run
def checkpoint():
    # CHECK-LABEL: TEST: checkpoint
    # CHECK-NOT: optimization_barrier
    # CHECK: stablehlo.sine %arg0
    print(lowered_text(toolkit.checkpoint(tnp.sin), spec((3,))))


@run
def checkpoint_differentiated():
    # CHECK-LABEL: TEST: checkpoint_differentiated
    # CHECK: stablehlo.sine %arg0
    # CHECK: %[[B:.*]]:2 = stablehlo.optimization_barrier %arg0, %{{.*}} : tensor<3xf32>, tensor<3xf32>
    # CHECK: stablehlo.cosine %[[B]]#0
    print(lowered_text(toolkit.grad(lambda x: tnp.sum(toolkit.checkpoint(tnp.sin)(x))), spec((3,))))
