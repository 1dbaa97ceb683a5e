"""Ordered host callbacks in nested computations keep JAX's order (toolkit/lowering/tokens.py).

Each case runs the same program with toolkit and with JAX, every ordered
``io_callback`` / ``debug.callback`` / ``debug.print`` appending to a log, and
compares the logs: nested ``jit`` (private functions), ``cond``/``switch``
(case branches), ``while_loop``/``fori_loop``/``scan`` (while loops) and their
combinations.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy
from jax.experimental import io_callback as jax_io_callback  # noqa: E402

X = np.ones(2, np.float32)
APIS = [(toolkit, tnp, toolkit.experimental.io_callback), (jax, jnp, jax_io_callback)]


def _logs(make):
    """The logs of jit(make(api, numpy, emit))(X) for toolkit and JAX; ``emit(tag, v)`` is an ordered effect."""
    logs = []
    for api, numpy, io_callback in APIS:
        log: list = []

        def emit(tag, v, api=api, io_callback=io_callback, log=log):
            def record(a):
                log.append((tag, float(np.asarray(a).sum())))
                return np.asarray(a)
            return io_callback(record, api.ShapeDtypeStruct(v.shape, v.dtype), v, ordered=True)
        api.jit(make(api, numpy, emit))(X)
        api.effects_barrier()
        logs.append(log)
    assert logs[0] == logs[1]
    return logs[0]


def test_nested_jit_twice():
    def make(api, numpy, emit):
        innermost = api.jit(lambda v: emit("c", v) + 1)
        inner = api.jit(lambda v: emit("d", innermost(emit("b", v) * 2)))

        def f(x):
            a = emit("a", x)
            return emit("e", inner(a) + inner(a * 3))
        return f
    log = _logs(make)
    assert [t for t, _ in log] == ["a", "b", "c", "d", "b", "c", "d", "e"]


def test_cond_switch_and_loops():
    def make(api, numpy, emit):
        def f(x):
            a = emit("a", x)
            b = api.lax.cond(x.sum() > 0, lambda v: emit("true", v), lambda v: emit("false", v), a * 3)
            c = api.lax.switch(1, [lambda v: emit("s0", v), lambda v: emit("s1", v + 1), lambda v: v], b)
            d = api.lax.fori_loop(0, 3, lambda i, v: emit("loop", v + 1), c)
            e, _ = api.lax.scan(lambda carry, _: (emit("scan", carry) + 1, None), d, None, length=2)
            w = api.lax.while_loop(lambda v: v.sum() < 40, lambda v: emit("while", v * 2), e)
            return emit("z", w)
        return f
    log = _logs(make)
    assert log[0][0] == "a" and log[-1][0] == "z" and [t for t, _ in log].count("loop") == 3


def test_jit_inside_loop_inside_cond():
    def make(api, numpy, emit):
        step = api.jit(lambda v: emit("step", v + 1))

        def branch(v):
            emit("branch", v)
            return api.lax.fori_loop(0, 2, lambda i, u: step(u), v)

        def f(x):
            y = api.lax.cond(x.sum() > 0, branch, lambda v: v, emit("a", x))
            return emit("z", y)
        return f
    assert [t for t, _ in _logs(make)] == ["a", "branch", "step", "step", "z"]


def test_debug_print_ordered_across_nested_jit(capfd):
    def run(api, numpy):
        inner = api.jit(lambda v: api.debug.print("inner {}", v, ordered=True) or v * 2)

        def f(x):
            api.debug.print("first {}", x, ordered=True)
            y = inner(x)
            api.debug.print("last {}", y, ordered=True)
            return y
        api.jit(f)(X)
        api.effects_barrier()
        return capfd.readouterr().out.splitlines()
    ours = run(toolkit, tnp)
    theirs = run(jax, jnp)
    assert ours == theirs == ["first [1. 1.]", "inner [1. 1.]", "last [2. 2.]"]


def test_lowered_structure_and_unordered_modules_unchanged():
    def emit(v):
        return toolkit.experimental.io_callback(lambda a: a, toolkit.ShapeDtypeStruct(v.shape, v.dtype), v,
                                                ordered=True)
    inner = toolkit.jit(lambda v: emit(v) * 2)
    text = toolkit.jit(lambda x: emit(inner(emit(x)))).lower(X).as_text()
    assert text.count("stablehlo.create_token") == 1  # one chain, started once in @main
    assert "!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)" in text  # the private function threads it
    plain = toolkit.jit(lambda x: toolkit.jit(lambda v: v * 2)(x)).lower(X).as_text()
    assert "token" not in plain


def test_shard_map_body_keeps_its_own_chain_and_its_calls_thread():
    # JAX refuses ordered effects on more than one device; toolkit runs them per device, each shard_map body
    # with a chain of its own, and a nested jit called there still gets its token (the call must match the
    # function's threaded signature).
    if len(toolkit.devices()) < 4:
        pytest.skip("needs 4 devices")
    mesh = toolkit.make_mesh((4,), ("i",))
    log: list = []

    def emit(tag, v):
        toolkit.debug.callback(lambda a: log.append((tag, a.shape)), v, ordered=True)
        return v
    inner = toolkit.jit(lambda v: emit("inner", v) + 1)

    def f(x):
        emit("a", x)
        y = toolkit.shard_map(lambda b: inner(emit("in", b) * 2), mesh=mesh, in_specs=toolkit.P("i"),
                              out_specs=toolkit.P("i"))(x)
        return emit("z", y)
    out = toolkit.jit(f)(np.ones(8, np.float32))
    toolkit.effects_barrier()
    np.testing.assert_allclose(np.asarray(out), np.full(8, 3.0, np.float32))
    tags = [t for t, _ in log]
    assert sorted(tags) == sorted(["a", "z"] + ["in"] * 4 + ["inner"] * 4)
