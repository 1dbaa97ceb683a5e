# RUN: %PYTHON %s | filecheck %s
# Golden lowering of nested jit (toolkit.lax.calls.jit_call_p): a func.call of one private function per distinct
# sub-program, named after the function as JAX names them; inline=True inlines.

import toolkit
import toolkit.numpy as tnp
from toolkit.testing import lowered_text, run, spec


def g(x):
    return tnp.sin(x)


@run
def called_twice_one_function():
    # CHECK-LABEL: TEST: called_twice_one_function
    # CHECK: func.func public @main
    # CHECK: call @g(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    # CHECK: call @g(%{{.*}}) : (tensor<3xf32>) -> tensor<3xf32>
    # CHECK: func.func private @g(%arg0: tensor<3xf32>) -> tensor<3xf32>
    # CHECK-NEXT: stablehlo.sine %arg0
    # CHECK-NOT: func.func private @g
    print(lowered_text(lambda x: toolkit.jit(g)(x) + toolkit.jit(g)(x * 2), spec((3,))))


@run
def other_signature_gets_a_suffix():
    # CHECK-LABEL: TEST: other_signature_gets_a_suffix
    # CHECK: call @g(
    # CHECK: call @g_0(
    # CHECK: func.func private @g(%arg0: tensor<3xf32>)
    # CHECK: func.func private @g_0(%arg0: tensor<f32>)
    print(lowered_text(lambda x: toolkit.jit(g)(x) + toolkit.jit(g)(x.sum()), spec((3,))))


@run
def inline_true():
    # CHECK-LABEL: TEST: inline_true
    # CHECK-NOT: call
    # CHECK: stablehlo.sine %arg0
    # CHECK-NOT: func.func private
    print(lowered_text(lambda x: toolkit.jit(g, inline=True)(x), spec((3,))))


@run
def gradient_calls_the_transpose():
    # CHECK-LABEL: TEST: gradient_calls_the_transpose
    # CHECK: call @g(
    # CHECK: call @g_0(
    # CHECK: func.func private @g(
    # CHECK: func.func private @g_0(
    # CHECK: stablehlo.cosine
    print(lowered_text(toolkit.grad(lambda x: toolkit.jit(g)(x).sum()), spec((3,))))
