"""toolkit.ensure_compile_time_eval (toolkit/core/tracing.py) against jax.ensure_compile_time_eval."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core import tracing

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.ones(3, np.float32)


def _program(api, numpy, seen):
    def f(x):
        with api.ensure_compile_time_eval():
            y = numpy.sin(2.0)
            seen["y"] = y
            z = numpy.asarray(np.arange(3.0, dtype=np.float32)) * 2
            seen["z"] = z
            n = int(numpy.sum(numpy.ones(4)))
            w = x + 1
            seen["w"] = w
            c = api.lax.cond(y > 0, lambda a: a + 1, lambda a: a - 1, y)
            seen["c"] = c
            positive = y > 0
        if positive:  # a concrete value: usable in Python control flow
            return numpy.zeros(n) + x[0] + z.sum() + w.sum() + c
        return numpy.zeros(n)
    return f


def test_concrete_inside_traced_outside_same_result_as_jax():
    ours, theirs = {}, {}
    got = toolkit.jit(_program(toolkit, tnp, ours))(X)
    want = jax.jit(_program(jax, jnp, theirs))(X)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert np.asarray(got).shape == (4,)  # a shape computed from a concrete value is static
    for key in ("y", "z", "c"):
        assert isinstance(ours[key], toolkit.Array), key
        assert not isinstance(theirs[key], jax.core.Tracer), key
        np.testing.assert_allclose(np.asarray(ours[key]), np.asarray(theirs[key]), rtol=1e-6)
    assert isinstance(ours["w"], tracing.Tracer) and isinstance(theirs["w"], jax.core.Tracer)


def test_folded_constants_leave_the_program():
    # What was computed eagerly is not an input or constant of the traced program (only what traced ops use).
    def f(x):
        with toolkit.ensure_compile_time_eval():
            table = tnp.asarray(np.arange(1000, dtype=np.float32)).reshape(10, 100)
            scale = float(tnp.sum(table))
        return x * scale
    program = toolkit.jit(f).trace(X).program
    assert len(program.consts) == 0 and len(program.constvars) == 0
    np.testing.assert_allclose(np.asarray(toolkit.jit(f)(X)), X * float(np.arange(1000).sum()), rtol=1e-6)


def test_eager_outside_any_trace_and_flag_restored():
    with toolkit.ensure_compile_time_eval():
        y = tnp.cos(X)
        with toolkit.ensure_compile_time_eval():
            pass
        assert tracing._state.compile_time_eval
    assert not tracing._state.compile_time_eval
    np.testing.assert_allclose(np.asarray(y), np.cos(X), rtol=1e-6)
    with pytest.raises(ValueError):
        with toolkit.ensure_compile_time_eval():
            raise ValueError
    assert not tracing._state.compile_time_eval


def test_inside_grad_and_vmap():
    def f(x):
        with toolkit.ensure_compile_time_eval():
            k = tnp.exp(1.0)
            assert isinstance(k, toolkit.Array)
        return tnp.sum(tnp.sin(x) * k)

    def g(x):
        with jax.ensure_compile_time_eval():
            k = jnp.exp(1.0)
        return jnp.sum(jnp.sin(x) * k)
    np.testing.assert_allclose(np.asarray(toolkit.grad(f)(X)), np.asarray(jax.grad(g)(X)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(toolkit.jit(toolkit.vmap(f))(np.stack([X, X]))),
                               np.asarray(jax.jit(jax.vmap(g))(np.stack([X, X]))), rtol=1e-6)


def test_traced_value_inside_still_needs_concrete_for_python():
    def f(x):
        with toolkit.ensure_compile_time_eval():
            if x.sum() > 0:
                return x
        return -x
    with pytest.raises(toolkit.errors.TracerBoolConversionError):
        toolkit.jit(f)(X)


def test_names_and_locations_of_traced_ops_unchanged():
    def f(x):
        with toolkit.ensure_compile_time_eval():
            c = tnp.cos(0.5)
        with toolkit.named_scope("s"):
            return x * c
    text = toolkit.jit(f).lower(X).as_text(debug_info=True)
    assert 'loc("jit(f)/s/mul"' in text and "cosine" not in text
