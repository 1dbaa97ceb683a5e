"""toolkit.named_scope / toolkit.named_call (toolkit/core/tracing.py) against jax.named_scope / jax.named_call.

Each case runs one function body with toolkit and with JAX and compares the op
names that carry a scope: in the lowered module's locations and in the compiled
HLO's ``op_name`` metadata (what profilers show).
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core import tracing

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.linspace(0.1, 1.0, 3, dtype=np.float32)
SCOPES = ("outer", "inner", "layer", "block", "blk", "in")


def _scoped(names: set[str]) -> set[str]:
    """The names that go through a user scope (both sides emit other ops differently, e.g. literals)."""
    return {n for n in names if any(f"/{s}/" in n or f"({s})" in n for s in SCOPES)}


def _loc_names(text: str) -> set[str]:
    return _scoped(set(re.findall(r'loc\("([^"]*)"', text)))


def _op_names(hlo: str) -> set[str]:
    return _scoped(set(re.findall(r'op_name="([^"]*)"', hlo)))


def _both(make, *args):
    """(toolkit's, JAX's) scoped location names and compiled op_names of jit(make(api, numpy)) at ``args``."""
    out = []
    for api, numpy in ((toolkit, tnp), (jax, jnp)):
        lowered = api.jit(make(api, numpy)).lower(*args)
        out.append((_loc_names(lowered.as_text(debug_info=True)), _op_names(lowered.compile().as_text())))
    return out


def _scopes(api, numpy):
    def f(x):
        with api.named_scope("outer"):
            with api.named_scope("inner"):
                y = numpy.sin(x)
            z = numpy.cos(y)
        return z * 2
    return f


def test_nested_scopes_match_jax():
    ours, theirs = _both(_scopes, X)
    assert ours == theirs
    assert "jit(f)/outer/inner/sin" in ours[0] and "jit(f)/outer/cos" in ours[1]


def test_under_grad_jvp_and_transpose_forms_match_jax():
    def make(api, numpy):
        def loss(x):
            with api.named_scope("outer"):
                with api.named_scope("inner"):
                    y = x * 3.0
                z = numpy.exp(y) * x
            return z.sum()
        return api.grad(loss)
    ours, theirs = _both(make, X)
    # Compiled op_names: JAX's, but for the sum of x's two cotangents (JAX's add_any primitive, named under
    # inner; toolkit sums with add outside the scopes).
    split = [{part for n in names for part in n.split(";") if not part.endswith(("/add_any", "/add"))}
             for names in (ours[1], theirs[1])]
    assert split[0] == split[1]
    assert theirs[0] - {"jit(loss)/transpose(jvp(outer))/inner/add_any"} <= ours[0]  # toolkit keeps primal ops JAX's partial evaluation drops (jvp(outer)/exp)
    assert {"jit(loss)/jvp(outer)/inner/mul", "jit(loss)/transpose(jvp(outer))/mul",
            "jit(loss)/transpose(jvp(outer))/inner/mul"} <= ours[0]


def test_under_vmap_matches_jax():
    def make(api, numpy):
        return api.vmap(_scopes(api, numpy))
    ours, theirs = _both(make, np.stack([X, X]))
    assert ours == theirs
    assert "jit(f)/vmap(outer)/inner/sin" in ours[0]


def test_nested_jit_cond_and_named_call_match_jax():
    def make(api, numpy):
        h = api.jit(lambda v: v * 3)

        def blk(v):
            return v - 1

        def f(x):
            with api.named_scope("outer"):
                y = h(x)
                y = api.named_call(blk, name="blk")(y)
                y = api.named_call(blk)(y)
                with api.named_scope("in"):
                    y = api.lax.cond(x[0] > 0, lambda a: a + 1, lambda a: a - 1, y)
            return y
        return f
    ours, theirs = _both(make, X)
    assert ours[1] == theirs[1]
    assert {"jit(f)/outer/jit(<lambda>)/mul", "jit(f)/outer/in/cond/branch_1_fun/add"} <= ours[1]
    assert "jit(f)/outer/blk/sub" in ours[0] and "jit(f)/outer/blk/sub" in theirs[0]


def test_named_call_is_inlined_not_a_call():
    def blk(v):
        return tnp.exp(v)
    text = toolkit.jit(lambda x: toolkit.named_call(blk, name="b")(x)).lower(X).as_text()
    assert "call @" not in text and "func.func private" not in text


def test_decorator_forms():
    @toolkit.named_scope("layer")
    def layer(x):
        return tnp.tanh(x)

    @toolkit.jit
    def f(x):
        return layer(x) + toolkit.named_call(tnp.sin)(x)
    names = _loc_names(f.lower(X).as_text(debug_info=True))
    assert "jit(f)/layer/tanh" in names
    assert "jit(f)/sin/sin" in {n for n in re.findall(r'loc\("([^"]*)"', f.lower(X).as_text(debug_info=True))}
    np.testing.assert_allclose(np.asarray(f(X)), np.tanh(X) + np.sin(X), rtol=1e-6)
    assert layer.__name__ == "layer"


def test_eager_and_restored_after_exception():
    with toolkit.named_scope("outer"):
        np.testing.assert_allclose(np.asarray(tnp.sin(X)), np.sin(X), rtol=1e-6)
    assert tracing.current_name_stack() == ()
    with pytest.raises(ZeroDivisionError):
        with toolkit.named_scope("boom"):
            1 / 0
    assert tracing.current_name_stack() == ()


def test_outer_scope_does_not_leak_into_a_jit_trace():
    # A trace starts with an empty name stack, as JAX's: the jit call is not named after the caller's scope.
    with toolkit.named_scope("outside"):
        text = toolkit.jit(lambda x: tnp.sin(x)).lower(X).as_text(debug_info=True)
    assert "outside" not in text


def test_errors():
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        toolkit.named_scope(3)
    with pytest.raises(TypeError, match="expected a callable"):
        toolkit.named_call(3)
    with pytest.raises(TypeError, match="name must be a string"):
        toolkit.named_call(tnp.sin, name=3)
    with pytest.raises(TypeError, match="has no __name__"):
        toolkit.named_call(_NoName())
    with pytest.raises(TypeError):
        jax.named_scope(3)


class _NoName:
    def __call__(self, x):
        return x
