"""``accuracy=`` on ``toolkit.lax``'s transcendental functions against ``jax.lax``'s in the same run: the values
(eagerly, under ``jit``, float32, float64, complex), StableHLO's ``result_accuracy`` attribute in the lowered text,
the parameter in the printed program and in ``jit``'s cache, what ``jvp``/``grad``/``vmap`` do with it, and JAX's
errors for values it does not take."""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same_typed

jax = pytest.importorskip("jax")
jlax = jax.lax

# Every function of jax.lax taking accuracy= in JAX 0.10.2.
NAMES = ("exp", "exp2", "expm1", "log", "log1p", "logistic", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "cbrt")
X = np.linspace(0.1, 2.5, 7).astype(np.float32)  # in every function's domain (log, sqrt, rsqrt)


def accuracies(lax_module):
    """One of each kind, made from ``lax_module``'s (toolkit's or JAX's) classes: both modes, tolerances of one,
    two and three fields."""
    mode, tol = lax_module.AccuracyMode, lax_module.Tolerance
    return (None, mode.HIGHEST, mode.DEFAULT, tol(atol=1e-3), tol(rtol=1e-6, ulps=2), tol(atol=0.5, rtol=0.25, ulps=3))


def every_call(lax_module):
    """A function applying every op under every accuracy (one jit per framework covers them all)."""
    def f(x):
        return [getattr(lax_module, name)(x, accuracy=a) for name in NAMES for a in accuracies(lax_module)]
    return f


def attributes(text: str) -> list[str]:
    return re.findall(r"result_accuracy = (#stablehlo\.result_accuracy<[^<]*_mode<\w+>>)", text)


def test_values_under_jit_and_eagerly_match_jax():
    ours, theirs = toolkit.jit(every_call(lax))(X), jax.jit(every_call(jlax))(X)
    for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        # logistic: StableHLO's op here, JAX's 1 / (1 + exp(-x)); an ulp apart at most
        assert_same_typed(o, t, rtol=2e-7, what=(NAMES[k // 6], k % 6))
    for name in ("exp", "sin", "cbrt"):  # eagerly, through the primitive's own executable
        assert_same_typed(getattr(lax, name)(X, accuracy=lax.AccuracyMode.HIGHEST),
                          getattr(jlax, name)(X, accuracy=jlax.AccuracyMode.HIGHEST), what=name)


@pytest.mark.x64
def test_float64_and_complex_values_match_jax():
    x64 = X.astype(np.float64)
    z = (X + 0.5j * X[::-1]).astype(np.complex64)
    inexact = [n for n in NAMES if n != "cbrt"]  # cbrt takes no complex numbers (JAX's too)

    def f(module):
        high = module.AccuracyMode.HIGHEST
        return ([getattr(module, n)(x64, accuracy=high) for n in NAMES]
                + [getattr(module, n)(z, accuracy=module.Tolerance(ulps=1)) for n in inexact])
    for k, (o, t) in enumerate(zip(toolkit.jit(lambda: f(lax))(), jax.jit(lambda: f(jlax))(), strict=True)):
        assert_same_typed(o, t, rtol=2e-6 if o.dtype == np.complex64 else 1e-15, what=k)


def test_lowered_attribute_is_jaxs():
    # JAX's text has one attribute per op given an accuracy (on exp2's exponential; none on logistic, whose
    # lowering drops it, or on DEFAULT, the attribute's printed-away default); no attribute without accuracy.
    ours = toolkit.jit(every_call(lax)).lower(X).as_text()
    theirs = jax.jit(every_call(jlax)).lower(X).as_text()
    assert attributes(ours) == attributes(theirs)
    assert len(attributes(ours)) == 4 * (len(NAMES) - 1)  # HIGHEST and three tolerances, but logistic
    assert "result_accuracy" not in toolkit.jit(lax.exp).lower(X).as_text()
    # A complex sine or cosine is JAX's formula of real ops: the accuracy is dropped.
    z = (X + 1j).astype(np.complex64)
    complex_text = toolkit.jit(lambda z: lax.sin(z, accuracy=lax.AccuracyMode.HIGHEST)).lower(z).as_text()
    assert "stablehlo.sine" in complex_text and "result_accuracy" not in complex_text


def test_parameter_prints_and_keys_jit_caches():
    text = str(toolkit.make_jaxpr(lambda x: (lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST), lax.exp(x)))(X))
    assert "exp[accuracy=" in text and "HIGHEST" in text
    assert re.search(r"= exp a\n", text)  # no accuracy: nothing printed (JAX's printing)
    f = toolkit.jit(lambda x, accuracy: lax.sin(x, accuracy=accuracy), static_argnames="accuracy")
    high, tolerance = lax.AccuracyMode.HIGHEST, lax.Tolerance(ulps=4)
    assert "HIGHEST" in f.lower(X, accuracy=high).as_text()
    assert "ulps = 4" in f.lower(X, accuracy=tolerance).as_text()
    assert "result_accuracy" not in f.lower(X, accuracy=None).as_text()


def _jvps(module):
    high = module.AccuracyMode.HIGHEST

    def f(x, t):
        return [jax_or_toolkit_jvp(module)(lambda y, n=n: getattr(module, n)(y, accuracy=high), (x,), (t,))
                for n in NAMES]
    return f


def jax_or_toolkit_jvp(module):
    return toolkit.jvp if module is lax else jax.jvp


def test_jvp_passes_accuracy_as_jax_does():
    # sin's and cos's tangents take cos/sin with the accuracy; expm1's and tanh's HIGHEST formulas pass it to exp
    # and logistic; logistic's HIGHEST formula takes a plain logistic; the others drop it.
    t = np.full_like(X, 0.75)
    ours, theirs = toolkit.jit(_jvps(lax))(X, t), jax.jit(_jvps(jlax))(X, t)
    for name, (op, ot), (jp, jt) in zip(NAMES, ours, theirs, strict=True):
        assert_same_typed(op, jp, rtol=2e-7, what=name)
        assert_same_typed(ot, jt, rtol=2e-7, what=name)
    for name in NAMES:
        def count(module, trace):
            fun = lambda y: getattr(module, name)(y, accuracy=module.AccuracyMode.HIGHEST)  # noqa: E731
            return str(trace(lambda x, t: jax_or_toolkit_jvp(module)(fun, (x,), (t,)))(X, t)).count("[accuracy=")
        assert count(lax, toolkit.make_jaxpr) == count(jlax, jax.make_jaxpr), name


def test_grad_and_vmap_match_jax():
    def grads(module, grad, vmap):
        high = module.AccuracyMode.HIGHEST
        return [vmap(grad(lambda y, n=n: getattr(module, n)(y, accuracy=high)))(X) for n in NAMES]
    ours = toolkit.jit(lambda: grads(lax, toolkit.grad, toolkit.vmap))()
    theirs = jax.jit(lambda: grads(jlax, jax.grad, jax.vmap))()
    for name, o, t in zip(NAMES, ours, theirs, strict=True):
        assert_same_typed(o, t, rtol=2e-7, what=name)
    batched = str(toolkit.make_jaxpr(toolkit.vmap(lambda y: lax.tanh(y, accuracy=lax.Tolerance(rtol=1e-3))))(X))
    assert "tanh[accuracy=Tolerance(atol=0.0, rtol=0.001, ulps=0)]" in batched


def test_errors_are_jaxs():
    x = X[:2]
    # A value that is neither a mode nor a tolerance: JAX's NotImplementedError when lowered (tracing takes it).
    for bad in ("HIGHEST", 1, lax.Precision.HIGHEST):
        with pytest.raises(NotImplementedError) as theirs:
            jlax.exp(x, accuracy=bad if not isinstance(bad, lax.Precision) else jlax.Precision.HIGHEST)
        with pytest.raises(NotImplementedError, match=re.escape(str(theirs.value))):
            lax.exp(x, accuracy=bad)
        toolkit.make_jaxpr(lambda y: lax.exp(y, accuracy=bad))(x)
    # JAX's quirks, kept: a falsy value writes no attribute (but exp2 converts it anyway), and logistic's
    # lowering never reads it.
    assert_same_typed(lax.exp(x, accuracy=0), jlax.exp(x, accuracy=0))
    with pytest.raises(NotImplementedError, match="Accuracy 0 not supported"):
        jlax.exp2(x, accuracy=0)
    with pytest.raises(NotImplementedError, match="Accuracy 0 not supported"):
        lax.exp2(x, accuracy=0)
    assert_same_typed(lax.logistic(x, accuracy="HIGHEST"), jlax.logistic(x, accuracy="HIGHEST"), rtol=2e-7)
    # Parameters must be hashable (jit's caches key on them): TypeError, naming the parameter.
    with pytest.raises(TypeError):
        jax.make_jaxpr(lambda y: jlax.sin(y, accuracy=[1]))(x)
    with pytest.raises(TypeError, match="value of parameter accuracy was not hashable: \\[1\\]"):
        lax.sin(x, accuracy=[1])
    # Tolerances are checked when made; the other unary functions take no accuracy.
    for module in (lax, jlax):
        with pytest.raises(ValueError, match="Tolerances must be non-negative."):
            module.Tolerance(atol=-1.0)
        with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set."):
            module.Tolerance()
        with pytest.raises(TypeError, match="accuracy"):
            module.sinh(x, accuracy=module.AccuracyMode.HIGHEST)
