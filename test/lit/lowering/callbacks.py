# RUN: %PYTHON %s | filecheck %s
# Golden lowering of toolkit/lax/callbacks.py: the xla_ffi_python_cpu_callback custom call JAX 0.10.2 emits on
# CPU, its index in mhlo.backend_config, side effects, and the token chain of ordered callbacks.

import numpy as np

import toolkit
from toolkit.testing import lowered_text, run, spec


@run
def pure_callback():
    # CHECK-LABEL: TEST: pure_callback
    # No side effect: XLA may drop or repeat it. Row-major layouts, as JAX writes them.
    # CHECK: %[[R:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0)
    # CHECK-SAME: backend_config = ""
    # CHECK-NOT: has_side_effect
    # CHECK-SAME: mhlo.backend_config = {index = {{[0-9]+}} : ui64}
    # CHECK-SAME: operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]
    # Which process numbered the callback (the runtime refuses other processes' and JAX's calls).
    # CHECK-SAME: toolkit.host_callback = "{{[0-9a-f]+}}:{{[0-9]+}}"
    # CHECK-SAME: : (tensor<2x3xf32>) -> tensor<2x3xf32>
    # CHECK: return %[[R]]
    print(lowered_text(lambda x: toolkit.pure_callback(np.sin, toolkit.ShapeDtypeStruct((2, 3), np.float32), x),
                       spec((2, 3))))


@run
def debug_print():
    # CHECK-LABEL: TEST: debug_print
    # A side effect with no results.
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0)
    # CHECK-SAME: has_side_effect = true
    # CHECK-SAME: result_layouts = []
    # CHECK-SAME: : (tensor<4xf32>) -> ()
    print(lowered_text(lambda x: toolkit.debug.print("x={}", x), spec((4,))))


@run
def ordered_callbacks_chain_a_token():
    # CHECK-LABEL: TEST: ordered_callbacks_chain_a_token
    # One token per function body, passed from each ordered callback to the next.
    # CHECK: %[[T0:.*]] = stablehlo.create_token : !stablehlo.token
    # CHECK: %[[C:.*]]:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T0]], %arg0)
    # CHECK-SAME: has_side_effect = true
    # CHECK-SAME: operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]
    # CHECK-SAME: : (!stablehlo.token, tensor<f32>) -> (!stablehlo.token, tensor<f32>)
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[C]]#0, %[[C]]#1)
    # CHECK-SAME: : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
    # CHECK-NOT: create_token
    # CHECK: return %[[C]]#1
    def f(x):
        y = toolkit.experimental.io_callback(lambda a: a, toolkit.ShapeDtypeStruct((), np.float32), x, ordered=True)
        toolkit.debug.print("{}", y, ordered=True)
        return y
    print(lowered_text(f, spec(())))


@run
def unordered_io_callback():
    # CHECK-LABEL: TEST: unordered_io_callback
    # CHECK-NOT: create_token
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg0)
    # CHECK-SAME: has_side_effect = true
    # CHECK-SAME: : (tensor<3xi32>) -> tensor<3xi32>
    print(lowered_text(lambda x: toolkit.experimental.io_callback(
        lambda a: a, toolkit.ShapeDtypeStruct((3,), np.int32), x), spec((3,), np.int32)))


@run
def in_a_loop_body():
    # CHECK-LABEL: TEST: in_a_loop_body
    # The loop carries the token (toolkit/lowering/tokens.py): its iterations run in order, after what came before.
    # CHECK: %[[T:.*]] = stablehlo.create_token
    # CHECK: stablehlo.while({{.*}}, %[[ARG:iterArg_[0-9]+]] = %[[T]]) : {{.*}}, !stablehlo.token
    # CHECK: do {
    # CHECK-NOT: create_token
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[ARG]],
    def body(c, x):
        toolkit.debug.print("{} {}", c, x, ordered=True)
        return c + x, c
    print(lowered_text(lambda xs: toolkit.lax.scan(body, np.float32(0), xs), spec((5,))))
