# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/custom_batching.py: custom_vmap_call is its sub-program, inline; under vmap
# the user's rule replaces it (here a multiply instead of the function's add).

import toolkit
from toolkit.custom_batching import custom_vmap
from toolkit.testing import lowered_text, run, spec


@custom_vmap
def f(x, y):
    return x + y


@f.def_vmap
def f_rule(axis_size, in_batched, xs, ys):
    return xs * ys, True


@run
def custom_vmap_call():
    # CHECK-LABEL: TEST: custom_vmap_call
    # CHECK-NOT: custom
    # CHECK: stablehlo.add %arg0, %arg1
    # CHECK-NEXT: return
    print(lowered_text(f, spec((3,)), spec((3,))))


@run
def custom_vmap_call_batched():
    # CHECK-LABEL: TEST: custom_vmap_call_batched
    # CHECK-NOT: stablehlo.add
    # CHECK: stablehlo.multiply %arg0, %arg1 : tensor<4x3xf32>
    # CHECK-NEXT: return
    print(lowered_text(toolkit.vmap(f), spec((4, 3)), spec((4, 3))))
