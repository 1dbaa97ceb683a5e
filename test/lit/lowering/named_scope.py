# RUN: %PYTHON %s | filecheck %s
# toolkit.named_scope / named_call: the scope names go on the name stack, so the ops' locations read
# loc("jit(f)/outer/inner/<primitive>"...) exactly as JAX's; transformations wrap them (jvp(outer),
# transpose(jvp(outer)), vmap(outer)); named_call is an inlined scope (no sub-computation), as in JAX 0.10.


import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.testing import lowered_text, run, spec


def scoped(x):
    with toolkit.named_scope("outer"):
        with toolkit.named_scope("inner"):
            y = tnp.sin(x)
        z = tnp.cos(y)
    return z * 2


@run
def nested_scopes():
    # CHECK-LABEL: TEST: nested_scopes
    # CHECK-DAG: loc("jit(scoped)/outer/inner/sin"
    # CHECK-DAG: loc("jit(scoped)/outer/cos"
    # CHECK-DAG: loc("jit(scoped)/mul"
    print(lowered_text(scoped, spec((3,)), debug_info=True))


@run
def under_grad():
    # CHECK-LABEL: TEST: under_grad
    # CHECK-DAG: loc("jit(scoped)/jvp(outer)/inner/sin"
    # CHECK-DAG: loc("jit(scoped)/jvp(outer)/inner/cos"
    # CHECK-DAG: loc("jit(scoped)/transpose(jvp(outer))/mul"
    print(lowered_text(toolkit.grad(lambda x: scoped(x).sum()), spec((3,)), debug_info=True).replace(
        "jit(<lambda>)", "jit(scoped)"))


@run
def under_vmap():
    # CHECK-LABEL: TEST: under_vmap
    # CHECK-DAG: loc("jit(scoped)/vmap(outer)/inner/sin"
    # CHECK-DAG: loc("jit(scoped)/vmap()/mul"
    print(lowered_text(toolkit.vmap(scoped), spec((2, 3)), debug_info=True))


@run
def named_call_and_nested_jit():
    # CHECK-LABEL: TEST: named_call_and_nested_jit
    # No func.call for named_call: its ops are inline, under its name.
    # CHECK-NOT: call @block
    # CHECK-DAG: loc("jit(f)/layer/block/exp"
    # CHECK-DAG: loc("jit(f)/layer/jit(g)"
    # CHECK-DAG: loc("jit(f)/layer/cond/branch_1_fun/neg"
    # Inside the nested jit's function, names are relative to it (XLA prefixes the call's name).
    # CHECK-DAG: loc("tanh"
    def block(v):
        return tnp.exp(v)

    @toolkit.jit
    def g(v):
        return tnp.tanh(v)

    def f(x):
        with toolkit.named_scope("layer"):
            y = toolkit.named_call(block)(x)
            y = g(y)
            return lax.cond(x.sum() > 0, lambda v: -v, lambda v: v, y)
    print(lowered_text(f, spec((3,)), debug_info=True))
