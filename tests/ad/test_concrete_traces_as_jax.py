"""Eager differentiation of functions that need their arguments' values, against JAX.

JAX's eager ``grad``/``jvp`` trace with the values at hand: Python control flow on them, ``int()`` of them,
boolean masks and data-dependent sizes work outside ``jit``. toolkit traces at types first and, when the function
needs values, traces again with them known (``docs/autodiff.md``, "Python control flow on the arguments' values").
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit.core import tracing

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.array([3.0, 1.0, 2.0, 2.0, 0.0], np.float32)
Y = np.array([2.0, 5.0, 3.0], np.float32)


def _branch(np_):
    def f(x):
        return x ** 2 if x > 0 else -3.0 * x
    return f


def _loop(np_):
    def f(x):
        for _ in range(int(x)):
            x = x * 1.5
        return x
    return f


def _while_on_value(np_):
    def f(x):
        while abs(x) < 10.0:  # bounded for every x but 0, which the cases avoid
            x = x * 2.0
        return x
    return f


SCALAR_FUNCTIONS = {"branch": _branch, "loop": _loop, "while": _while_on_value}


@pytest.mark.parametrize("name", sorted(SCALAR_FUNCTIONS))
@pytest.mark.parametrize("x", [-1.5, 0.5, 3.0])
def test_python_control_flow_under_grad_jvp_and_linearize(name, x):
    ours, theirs = SCALAR_FUNCTIONS[name](tnp), SCALAR_FUNCTIONS[name](jnp)
    np.testing.assert_allclose(toolkit.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-6)
    for o, t in zip(toolkit.jvp(ours, (x,), (1.0,)), jax.jvp(theirs, (x,), (1.0,))):
        np.testing.assert_allclose(o, t, rtol=1e-6)
    value, f_jvp = toolkit.linearize(ours, x)
    np.testing.assert_allclose(f_jvp(2.0), jax.linearize(theirs, x)[1](2.0), rtol=1e-6)
    np.testing.assert_allclose(value, theirs(x), rtol=1e-6)
    out, f_vjp = toolkit.vjp(ours, x)
    np.testing.assert_allclose(f_vjp(1.0)[0], jax.vjp(theirs, x)[1](1.0)[0], rtol=1e-6)


def test_nested_derivatives_jacobians_and_aux():
    def f(np_):
        def g(x):
            return np_.sum(x ** 3) if np_.sum(x) > 0 else np_.sum(-x)
        return g
    x = np.array([1.0, -0.5, 2.0], np.float32)
    np.testing.assert_allclose(toolkit.hessian(f(tnp))(x), jax.hessian(f(jnp))(x), rtol=1e-6)
    np.testing.assert_allclose(toolkit.jacfwd(f(tnp))(x), jax.jacfwd(f(jnp))(x), rtol=1e-6)
    np.testing.assert_allclose(toolkit.jacrev(f(tnp))(x), jax.jacrev(f(jnp))(x), rtol=1e-6)
    scalar = _branch(tnp)
    assert float(toolkit.grad(toolkit.grad(scalar))(2.0)) == float(jax.grad(jax.grad(_branch(jnp)))(2.0)) == 2.0

    def with_aux(np_):
        def h(x):
            return (x * 2.0, "positive") if x > 0 else (-x, "negative")
        return h
    (value, aux), gradient = toolkit.value_and_grad(with_aux(tnp), has_aux=True)(-2.0)
    (jvalue, jaux), jgradient = jax.value_and_grad(with_aux(jnp), has_aux=True)(-2.0)
    assert aux == jaux == "negative"
    assert (float(value), float(gradient)) == (float(jvalue), float(jgradient)) == (2.0, -1.0)


DATA_DEPENDENT = {
    "boolean mask": lambda np_: lambda v, w: np_.sum(v[v > 1] ** 2),
    "boolean mask set": lambda np_: lambda v, w: np_.sum(v.at[v > 1].set(w[0])),
    "nonzero": lambda np_: lambda v, w: np_.sum(v[np_.nonzero(v)[0]] ** 2),
    "compress": lambda np_: lambda v, w: np_.sum(np_.compress(v > 1, v) ** 2),
    "trim_zeros": lambda np_: lambda v, w: np_.sum(np_.trim_zeros(v) ** 2),
    "repeat": lambda np_: lambda v, w: np_.sum(np_.repeat(v, (v > 1).astype(int)) ** 2),
    "pad": lambda np_: lambda v, w: np_.sum(np_.pad(v, v[1].astype(int)) ** 2),
    "histogram_bin_edges": lambda np_: lambda v, w: np_.sum(np_.histogram_bin_edges(v, bins=(v[1] * 3).astype(int))),
    "hanning": lambda np_: lambda v, w: np_.sum(np_.hanning(v[0].astype(int)) * v[0]),
    "roots": lambda np_: lambda v, w: np_.sum(np_.abs(np_.roots(np_.concatenate([np_.zeros(1), v[:3]])))),
    "unique": lambda np_: lambda v, w: np_.sum(np_.unique(v) ** 2) + np_.sum(w),
    "unique axis": lambda np_: lambda v, w: np_.sum(np_.unique(v.reshape(5, 1), axis=0) ** 2),
    "unique inverse": lambda np_: lambda v, w: np_.sum(v[np_.unique(v, return_inverse=True)[1]] ** 2),
    "union1d": lambda np_: lambda v, w: np_.sum(np_.union1d(v, w) ** 2),
    "isin": lambda np_: lambda v, w: np_.sum(np_.where(np_.isin(v, w), v, 0.0) ** 2),
    **{f"{name} assume_unique={unique}": (lambda name, unique: lambda np_: lambda v, w: np_.sum(
        getattr(np_, name)(v, w, assume_unique=unique) ** 2))(name, unique)
       for name in ("setdiff1d", "intersect1d", "setxor1d") for unique in (False, True)},
}


@pytest.mark.parametrize("name", sorted(DATA_DEPENDENT))
def test_data_dependent_functions_under_grad(name):
    # JAX's unique (and the set functions through it) turn a known array into a constant: zero derivatives there.
    ours = toolkit.grad(DATA_DEPENDENT[name](tnp), argnums=(0, 1))(X, Y)
    theirs = jax.grad(DATA_DEPENDENT[name](jnp), argnums=(0, 1))(X, Y)
    for o, t in zip(ours, theirs):
        assert np.asarray(o).dtype == np.asarray(t).dtype
        np.testing.assert_allclose(o, t, rtol=1e-5, atol=1e-6)


def test_what_stays_an_error_as_in_jax():
    for np_, grad in ((tnp, toolkit.grad), (jnp, jax.grad)):
        with pytest.raises(tracing.ConcretizationTypeError if np_ is tnp else jax.errors.ConcretizationTypeError):
            grad(lambda x: x * float(x))(2.0)  # float() would drop the derivative
        with pytest.raises(tracing.ConcretizationTypeError if np_ is tnp else jax.errors.ConcretizationTypeError,
                           match="tolist"):
            grad(lambda x: x[0] * len(x.tolist()))(X)
    # Under jit the arguments have no values, in either library.
    with pytest.raises(toolkit.errors.TracerBoolConversionError):
        toolkit.jit(toolkit.grad(_branch(tnp)))(2.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(jax.grad(_branch(jnp)))(2.0)
    # vmap never has them.
    with pytest.raises(toolkit.errors.TracerBoolConversionError):
        toolkit.vmap(toolkit.grad(_branch(tnp)))(X)


def test_inside_jit_nothing_is_known_as_in_jax():
    # Under jit JAX stages even a constant argument's operations, so a branch on it fails there in both libraries.
    def inner(grad):
        return lambda y: grad(lambda x: x * y if x > 0 else -x)(np.float32(2.0))
    with pytest.raises(toolkit.errors.TracerBoolConversionError):
        toolkit.jit(inner(toolkit.grad))(3.0)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(inner(jax.grad))(3.0)
    # Eagerly, a closed-over array is a constant of the trace and the branch works in both.
    np.testing.assert_allclose(inner(toolkit.grad)(np.float32(3.0)), inner(jax.grad)(np.float32(3.0)))


def test_effects_run_once(capfd):
    def f(x):
        toolkit.debug.print("x is {}", x)
        return x ** 2 if x > 0 else -x
    assert float(toolkit.grad(f)(3.0)) == 6.0
    toolkit.effects_barrier()
    assert capfd.readouterr().out.count("x is") == 1


def test_concrete_trace_program_follows_the_path():
    # The program traced with values is the branch taken; a function that needs none is traced at types only.
    seen = []
    f = _branch(tnp)
    for x in (2.0, -2.0):
        program, _ = tracing.trace_flat(lambda t: [f(t)], [toolkit.core.avals.aval_of(np.float32(x))],
                                        known=[np.float32(x)])
        seen.append(sorted({e.primitive.name for e in program.eqns}))
    assert seen[0] != seen[1]
    assert tracing.known_value(np.float32(1.0)) == 1.0


@pytest.mark.parametrize("x", [3.0, -3.0])
def test_custom_rules_with_python_control_flow(x):
    # JAX runs a custom_jvp's function and rule, and a custom_vjp's function, on the values in an eager grad.
    def make(lib):
        @lib.custom_vjp
        def f(v):
            return v * 2 if v > 0 else -v

        def fwd(v):
            return f(v), (v > 0)

        def bwd(positive, g):
            return ((2.0 if positive else -1.0) * g,)
        f.defvjp(fwd, bwd)

        @lib.custom_jvp
        def h(v):
            return v * 2 if v > 0 else -v

        @h.defjvp
        def h_jvp(primals, tangents):
            (v,), (t,) = primals, tangents
            return h(v), (2.0 if v > 0 else -1.0) * t
        return f, h
    (f, h), (jf, jh) = make(toolkit), make(jax)
    assert float(toolkit.grad(f)(x)) == float(jax.grad(jf)(x))
    assert float(toolkit.grad(h)(x)) == float(jax.grad(jh)(x))
    assert float(toolkit.jvp(h, (x,), (1.0,))[1]) == float(jax.jvp(jh, (x,), (1.0,))[1])
    with pytest.raises(toolkit.errors.TracerBoolConversionError):  # under jit, in both
        toolkit.jit(toolkit.grad(h))(x)
