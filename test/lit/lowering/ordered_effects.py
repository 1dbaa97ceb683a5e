# RUN: %PYTHON %s | filecheck %s
# Ordered host callbacks keep program order across nested computations (toolkit/lowering/tokens.py): one
# !stablehlo.token chain runs through @main, the private functions of nested jits (a trailing token argument and
# result), case branches (a trailing token result) and while loops (a trailing carried token), as JAX threads its
# ordered-effect tokens.


import toolkit
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


def emit(tag, v):
    toolkit.debug.print(tag + " {}", v, ordered=True)
    return v


@run
def nested_jit():
    # CHECK-LABEL: TEST: nested_jit
    # CHECK: %[[T0:.*]] = stablehlo.create_token
    # CHECK: %[[A:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T0]], %arg0)
    # CHECK: %[[CALL:.*]]:2 = call @inner({{.*}}, %[[A]]) : (tensor<2xf32>, !stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[CALL]]#1,
    # CHECK: func.func private @inner(%arg0: tensor<2xf32>, %arg1: !stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    # CHECK-NOT: create_token
    # CHECK: %[[I:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%arg1, %arg0)
    # CHECK: return {{.*}}, %[[I]] : tensor<2xf32>, !stablehlo.token
    @toolkit.jit
    def inner(v):
        return emit("inner", v) * 2

    def f(x):
        emit("before", x)
        y = inner(x)
        return emit("after", y)
    print(lowered_text(f, spec((2,))))


@run
def cond_branches():
    # CHECK-LABEL: TEST: cond_branches
    # CHECK: %[[A:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%{{.*}}, %arg0)
    # CHECK: %[[CASE:.*]]:2 = "stablehlo.case"
    # CHECK-NEXT: stablehlo.return {{.*}}, %[[A]] : tensor<2xf32>, !stablehlo.token
    # CHECK: %[[B:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[A]],
    # CHECK: stablehlo.return {{.*}}, %[[B]] : tensor<2xf32>, !stablehlo.token
    # CHECK: }) : (tensor<i32>) -> (tensor<2xf32>, !stablehlo.token)
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[CASE]]#1,
    def f(x):
        emit("before", x)
        y = lax.cond(x.sum() > 0, lambda v: emit("true", v), lambda v: v, x)
        return emit("after", y)
    print(lowered_text(f, spec((2,))))


@run
def while_loop():
    # CHECK-LABEL: TEST: while_loop
    # CHECK: %[[A:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%{{.*}}, %arg0)
    # CHECK: %[[LOOP:.*]]:4 = stablehlo.while({{.*}}, %[[ARG:iterArg_[0-9]+]] = %[[A]])
    # CHECK: %[[B:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[ARG]],
    # CHECK: stablehlo.return {{.*}}, %[[B]] : {{.*}}, !stablehlo.token
    # CHECK: stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[LOOP]]#3,
    def f(x):
        emit("before", x)
        y = lax.fori_loop(0, 3, lambda i, v: emit("loop", v + 1), x)
        return emit("after", y)
    print(lowered_text(f, spec((2,))))


@run
def no_ordered_callbacks():
    # CHECK-LABEL: TEST: no_ordered_callbacks
    # Unordered ones take no token; nothing is threaded.
    # CHECK-NOT: token
    # CHECK: func.func private @g(%arg0: tensor<2xf32>) -> tensor<2xf32>
    def g(v):
        toolkit.debug.print("{}", v)
        return v
    print(lowered_text(lambda x: toolkit.jit(g)(x) + 1, spec((2,))))
