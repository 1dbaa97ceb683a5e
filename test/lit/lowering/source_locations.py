# RUN: %PYTHON %s | filecheck %s
# Golden source locations (toolkit/lowering/lower.py): each op is located as JAX locates it,
# loc("jit(f)/<name stack>/<primitive>"(<frames>)), a frame being "<qualified function>"("<file>":line:col to :end)
# and the user's callers (inside the trace, then outside it up to <module>) making a callsite(...); XLA turns
# them into each HLO op's op_name and stack frames. Transformations add JAX's names (jvp(), transpose(jvp()),
# vmap()) and keep the user's line of the op they transform; @main's arguments are named after the parameters.

import numpy as np

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


def helper(x):
    return tnp.exp(x) - 1.0


@run
def one_frame_per_op():
    # CHECK-LABEL: TEST: one_frame_per_op
    # CHECK: func.func public @main(%arg0: tensor<3xf32> loc("x"))
    # CHECK: stablehlo.sine %arg0 : tensor<3xf32> loc([[SIN:#loc[0-9]+]])
    # CHECK: return {{.*}} loc([[MAIN:#loc[0-9]+]])
    # CHECK-DAG: [[FILE:#loc[0-9]+]] = loc("{{.*}}source_locations.py":{{[0-9]+}}:15 to :25)
    # CHECK-DAG: [[FRAME:#loc[0-9]+]] = loc("one_frame_per_op.<locals>.f"([[FILE]]))
    # CHECK-DAG: [[TEST:#loc[0-9]+]] = loc("one_frame_per_op"({{#loc[0-9]+}}))
    # CHECK-DAG: [[MODULE:#loc[0-9]+]] = loc("<module>"({{#loc[0-9]+}}))
    # CHECK-DAG: [[OUTER:#loc[0-9]+]] = loc(callsite([[TEST]] at [[MODULE]]))
    # CHECK-DAG: [[STACK:#loc[0-9]+]] = loc(callsite([[FRAME]] at [[OUTER]]))
    # CHECK-DAG: [[MAIN]] = loc("jit(f)"([[OUTER]]))
    # CHECK-DAG: [[SIN]] = loc("jit(f)/sin"([[STACK]]))
    def f(x):
        return tnp.sin(x)
    print(lowered_text(f, spec((3,)), debug_info=True))


@run
def callers_are_call_sites():
    # CHECK-LABEL: TEST: callers_are_call_sites
    # CHECK: stablehlo.exponential %arg0 : tensor<3xf32> loc([[EXP:#loc[0-9]+]])
    # CHECK-DAG: [[HELPER:#loc[0-9]+]] = loc("helper"({{#loc[0-9]+}}))
    # CHECK-DAG: [[CALLER:#loc[0-9]+]] = loc("callers_are_call_sites.<locals>.f"({{#loc[0-9]+}}))
    # CHECK-DAG: [[CALLERS:#loc[0-9]+]] = loc(callsite([[CALLER]] at {{#loc[0-9]+}}))
    # CHECK-DAG: [[STACK:#loc[0-9]+]] = loc(callsite([[HELPER]] at [[CALLERS]]))
    # CHECK-DAG: [[EXP]] = loc("jit(f)/exp"([[STACK]]))
    def f(x):
        return helper(x) * x
    print(lowered_text(f, spec((3,)), debug_info=True))


@run
def region_names():
    # CHECK-LABEL: TEST: region_names
    # CHECK-DAG: loc("jit(f)/cond/branch_0_fun/cos"
    # CHECK-DAG: loc("jit(f)/cond/branch_1_fun/sin"
    # CHECK-DAG: loc("jit(f)/while/cond/lt"
    # CHECK-DAG: loc("jit(f)/while/body/add"
    def f(x):
        y = lax.cond(x[0] > 0, tnp.sin, tnp.cos, x)
        return lax.while_loop(lambda c: c[0] < 10.0, lambda c: c + 1.0, y)
    print(lowered_text(f, spec((3,)), debug_info=True))


@run
def nested_jit_names_its_call():
    # CHECK-LABEL: TEST: nested_jit_names_its_call
    # CHECK: call @g(%arg0) {{.*}} loc([[CALL:#loc[0-9]+]])
    # CHECK: func.func private @g
    # CHECK-NEXT: stablehlo.cosine %arg0 : tensor<3xf32> loc([[COS:#loc[0-9]+]])
    # CHECK-DAG: [[CALL]] = loc("jit(f)/jit(g)"(
    # CHECK-DAG: [[COS]] = loc("cos"(
    def g(y):
        return tnp.cos(y)

    def f(x):
        return toolkit.jit(g)(x)
    print(lowered_text(f, spec((3,)), debug_info=True))


@run
def compiled_hlo_op_metadata():
    # CHECK-LABEL: TEST: compiled_hlo_op_metadata
    # CHECK: FileNames
    # CHECK-NEXT: 1 "{{.*}}source_locations.py"
    # CHECK: FunctionNames
    # CHECK-NEXT: 1 "<module>"
    # CHECK-NEXT: 2 "compiled_hlo_op_metadata"
    # CHECK-NEXT: 3 "compiled_hlo_op_metadata.<locals>.f"
    # CHECK: FileLocations
    # CHECK: 3 {file_name_id=1 function_name_id=3 line={{[0-9]+}} end_line={{[0-9]+}} column=15 end_column=26}
    # CHECK: metadata={op_name="jit(f)/tanh" stack_frame_id=3}
    # CHECK-NOT: source_file="-"
    def f(x):
        return tnp.tanh(x)
    print(toolkit.jit(f).lower(np.ones(3, np.float32)).compile().as_text())


@run
def grad_names_and_lines():
    # CHECK-LABEL: TEST: grad_names_and_lines
    # The forward pass is under jvp(), the backward pass under transpose(jvp()), both at the user's lines.
    # CHECK-DAG: [[SIN_LINE:#loc[0-9]+]] = loc("{{.*}}source_locations.py":{{[0-9]+}}:12 to :22)
    # CHECK-DAG: [[MUL_LINE:#loc[0-9]+]] = loc("{{.*}}source_locations.py":{{[0-9]+}}:12 to :17)
    # CHECK-DAG: [[SIN_FRAME:#loc[0-9]+]] = loc("grad_names_and_lines.<locals>.f"([[SIN_LINE]]))
    # CHECK-DAG: [[MUL_FRAME:#loc[0-9]+]] = loc("grad_names_and_lines.<locals>.f"([[MUL_LINE]]))
    # CHECK-DAG: [[SIN_STACK:#loc[0-9]+]] = loc(callsite([[SIN_FRAME]] at {{#loc[0-9]+}}))
    # CHECK-DAG: [[MUL_STACK:#loc[0-9]+]] = loc(callsite([[MUL_FRAME]] at {{#loc[0-9]+}}))
    # CHECK-DAG: loc("jit(f)/jvp()/sin"([[SIN_STACK]]))
    # CHECK-DAG: loc("jit(f)/transpose(jvp())/mul"([[MUL_STACK]]))
    def f(x):
        y = tnp.sin(x)
        z = y * x
        return z.sum()
    print(lowered_text(toolkit.grad(f), spec((3,)), debug_info=True))


@run
def vmap_names():
    # CHECK-LABEL: TEST: vmap_names
    # CHECK-DAG: loc("jit(f)/vmap()/sin"
    # CHECK-DAG: loc("jit(f)/vmap(jvp())/cos"
    # CHECK-DAG: loc("jit(f)/vmap(transpose(jvp()))/mul"
    def f(x):
        return tnp.sin(x) + toolkit.grad(lambda y: tnp.sin(y) * y)(x)
    print(lowered_text(toolkit.vmap(f), spec((2,)), debug_info=True))


@run
def argument_names():
    # CHECK-LABEL: TEST: argument_names
    # CHECK: func.func public @main(%arg0: tensor<3xf32> loc("params['w']"), %arg1: tensor<3xf32> loc("x"), %arg2: tensor<3xf32> loc("rest[0]"))
    def f(params, x, *rest):
        return params["w"] * x + rest[0]
    print(toolkit.jit(f).lower({"w": np.ones(3, np.float32)}, np.ones(3, np.float32),
                               np.ones(3, np.float32)).as_text(debug_info=True))
