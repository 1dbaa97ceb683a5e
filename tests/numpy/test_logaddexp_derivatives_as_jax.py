"""The derivatives of ``toolkit.numpy.logaddexp``/``logaddexp2`` against JAX's custom JVP in the same run: every
pair of ``-inf``, finite values, ``+inf`` and NaN through ``grad`` (both arguments), ``jvp``, ``vmap`` of ``grad``,
eagerly and under ``jit``, float32 and float64 (x64), complex ``jvp``, Python-scalar (weak) arguments and
``nn.softplus``; the values stay JAX's bit for bit, and ``make_jaxpr`` shows JAX's ``custom_jvp_call``."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

SPECIAL = [-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan]
PAIRS = list(itertools.product(SPECIAL, SPECIAL))
NAMES = ["logaddexp", "logaddexp2"]


def _same(ours, theirs, what):
    assert type(ours).__module__.startswith("toolkit"), (what, type(ours))
    assert (ours.shape, ours.dtype, ours.aval.weak_type) == (theirs.shape, theirs.dtype, theirs.aval.weak_type), (
        what, ours.shape, ours.dtype, ours.aval.weak_type, theirs.shape, theirs.dtype, theirs.aval.weak_type)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs), err_msg=str(what))


def _columns(dtype):
    x, y = np.array(PAIRS, dtype).T
    return x, y


def _derivatives(m, name):
    """One function of the pairs: the values, ``vmap`` of ``grad`` in both arguments, and ``jvp`` with tangents
    ``(1, 0)``, ``(0, 1)`` and ``(1, 1)`` (so a zero tangent times an infinite weight shows as JAX's)."""
    f = getattr(m["np"], name)

    def run(x, y):
        dx, dy = m["vmap"](m["grad"](f, (0, 1)))(x, y)
        ones, zeros = m["np"].ones_like(x), m["np"].zeros_like(x)
        jvps = [m["jvp"](f, (x, y), t)[1] for t in ((ones, zeros), (zeros, ones), (ones, ones))]
        return (f(x, y), dx, dy, *jvps)
    return run


TOOLKIT = dict(np=tnp, vmap=toolkit.vmap, grad=toolkit.grad, jvp=toolkit.jvp)
JAX = dict(np=jnp, vmap=jax.vmap, grad=jax.grad, jvp=jax.jvp)


def _check_pairs(dtype):
    x, y = _columns(dtype)
    for name in NAMES:
        ours = toolkit.jit(_derivatives(TOOLKIT, name))(x, y)
        theirs = jax.jit(_derivatives(JAX, name))(x, y)
        labels = ["value", "grad x", "grad y", "jvp (1, 0)", "jvp (0, 1)", "jvp (1, 1)"]
        for label, o, t in zip(labels, ours, theirs):
            _same(o, t, (name, dtype.__name__, label))


def test_derivatives_at_infinities_and_nan_under_jit_as_jax():
    _check_pairs(np.float32)


@pytest.mark.x64
def test_derivatives_float64_as_jax():
    _check_pairs(np.float64)


@pytest.mark.parametrize("name", NAMES)
def test_eager_grad_and_jvp_as_jax(name):
    # Eagerly (grad's and jvp's interpreters), a point of each kind: x -inf with y finite, both -inf, +inf with a
    # finite value, both +inf, NaN.
    f, g = getattr(tnp, name), getattr(jnp, name)
    for x, y in [(-np.inf, 1.0), (-np.inf, -np.inf), (np.inf, 1.0), (np.inf, np.inf), (np.nan, 1.0), (1.0, 2.0)]:
        x, y = np.float32(x), np.float32(y)
        for o, t in zip(toolkit.grad(f, (0, 1))(x, y), jax.grad(g, (0, 1))(x, y)):
            _same(o, t, (name, x, y, "grad"))
        for o, t in zip(toolkit.jvp(f, (x, y), (np.float32(1), np.float32(0))),
                        jax.jvp(g, (x, y), (np.float32(1), np.float32(0)))):
            _same(o, t, (name, x, y, "jvp"))
    # Python scalars: weakly typed values and derivatives, as JAX's.
    for o, t in zip(toolkit.grad(f, (0, 1))(1.0, -np.inf), jax.grad(g, (0, 1))(1.0, -np.inf)):
        _same(o, t, (name, "weak grad"))


@pytest.mark.parametrize("name", NAMES)
def test_complex_jvp_as_jax(name):
    x = np.array([1 + 2j, np.inf + 1j, -np.inf + 0j, 0.5 - 3j, complex(np.nan, 1)], np.complex64)
    y = np.array([2 - 1j, 1 + 0j, 1 + 1j, np.inf + 0j, 0j], np.complex64)
    t = np.array([1 + 0j, 0 + 1j, 1 + 1j, 2 + 0j, 1 + 0j], np.complex64)
    ours = toolkit.jit(lambda x, y, t: toolkit.jvp(getattr(tnp, name), (x, y), (t, t)))(x, y, t)
    theirs = jax.jit(lambda x, y, t: jax.jvp(getattr(jnp, name), (x, y), (t, t)))(x, y, t)
    for label, o, th in zip(["value", "tangent"], ours, theirs):
        _same(o, th, (name, label))


def test_softplus_gradient_at_infinities_as_jax():
    # nn.softplus is logaddexp(x, 0): its derivative is logaddexp's rule.
    x = np.array([-np.inf, -30.0, 0.0, 30.0, np.inf, np.nan], np.float32)
    _same(toolkit.jit(toolkit.vmap(toolkit.grad(toolkit.nn.softplus)))(x),
          jax.jit(jax.vmap(jax.grad(jax.nn.softplus)))(x), "softplus grad")


@pytest.mark.parametrize("name", NAMES)
def test_jaxpr_is_a_custom_jvp_call_as_jax(name):
    ours = str(toolkit.make_jaxpr(getattr(tnp, name))(np.float32(1), np.float32(2)))
    theirs = str(jax.make_jaxpr(getattr(jnp, name))(np.float32(1), np.float32(2)))
    assert "custom_jvp_call" in theirs and f"jvp=_{name}_jvp" in theirs
    assert "custom_jvp_call" in ours and f"jvp=_{name}_jvp" in ours
