"""``toolkit.nn``'s activations against ``jax.nn`` in this process, on the divergence sweep's inputs (arrays of
bool, int8/32, uint8/32, float16/32 and complex64 with zeros, extremes, infinities and NaNs; Python scalars).

A pass over 28 activations found 157 differences, all of one cause: toolkit converted integer and bool inputs
to float32 first, where JAX's definitions apply their operations to the input as it is. So JAX's results are weakly
typed floats where a Python float meets an integer array (``elu``, ``celu``, ``leaky_relu``, ``hard_sigmoid``,
...), ``relu6`` of integers is a float (``minimum(..., 6.0)``), ``sigmoid``/``silu``/``glu`` of integers are
``lax.logistic``'s TypeError, ``hard_tanh`` of complex values compares real parts. Also: the exact ``gelu``
(``approximate=False``) computed ``(1 + erf(x/√2))/2``, which cancels for negative ``x`` (float16's
``gelu(-2.5)`` was 2% off); JAX's ``erfc(-x/√2)/2`` does not. ``relu6``'s derivative at 0 and 6 is JAX's 0.

Left (JAX's answers are integer-arithmetic or bool accidents of its definitions, toolkit's are the float ones):
``softmax``/``log_softmax``/``standardize`` of integer arrays (JAX: NaN, -inf or rounded values), of bool
arrays (JAX: a TypeError from ``sub``), ``standardize`` of complex values (JAX: ``clip``'s ValueError),
``one_hot`` of bools (JAX: ``iota``'s TypeError), ``softmax`` of complex values with ``where``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import toolkit.nn as tnn

jax = pytest.importorskip("jax")
jnn = jax.nn

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
divergence_sweep = pytest.importorskip("divergence_sweep")

ACTIVATIONS = """relu relu6 sigmoid softplus soft_sign silu swish log_sigmoid elu leaky_relu hard_tanh celu selu gelu
glu hard_sigmoid hard_silu hard_swish mish squareplus sparse_plus sparse_sigmoid identity""".split()
INPUTS = divergence_sweep.VALUES


def _outcome(fn, *args, **kwargs):
    try:
        return divergence_sweep._outputs(fn(*args, **kwargs))
    except Exception:  # noqa: BLE001 - both refusing is the agreement (glu of a scalar: JAX's IndexError)
        return Exception


@pytest.mark.parametrize("key", sorted(INPUTS))
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_as_jax(name, key):
    ours, theirs = _outcome(getattr(tnn, name), INPUTS[key]), _outcome(getattr(jnn, name), INPUTS[key])
    if isinstance(ours, type) or isinstance(theirs, type):
        assert ours == theirs
        return
    assert divergence_sweep._difference(ours, theirs) is None


@pytest.mark.parametrize("key", ["f32", "f16", "i32", "py_f", "py_i", "c64"])
def test_exact_gelu_as_jax(key):
    ours = _outcome(tnn.gelu, INPUTS[key], approximate=False)
    theirs = _outcome(jnn.gelu, INPUTS[key], approximate=False)
    assert divergence_sweep._difference(ours, theirs) is None if not isinstance(theirs, type) else ours == theirs


def test_exact_gelu_does_not_cancel_for_negative_inputs():
    x = np.array([-2.5, -5.0, -9.0], np.float16)
    expected = np.array([-0.015525, -1.4333e-06, 0.0])  # x * Phi(x); -9's is below float16's range
    np.testing.assert_allclose(np.asarray(tnn.gelu(x, approximate=False), np.float64), expected, rtol=2e-3, atol=1e-7)
    x32 = np.float32(-5.0)
    np.testing.assert_allclose(float(tnn.gelu(x32, approximate=False)), -1.4332579e-06, rtol=1e-4)


def test_relu6_derivative_is_zero_at_both_kinks_as_jax():
    import toolkit

    for x in (0.0, 6.0, 3.0, -1.0, 7.0):
        assert float(toolkit.grad(tnn.relu6)(x)) == float(jax.grad(jnn.relu6)(x)), x


_DEFAULT_FLOAT_CASES = {
    "one_hot": lambda m, x: m.one_hot(np.array([0, 2, 5]), 4),
    "logsumexp_int": lambda m, x: m.logsumexp(x.astype(np.int32)),
    "logsumexp_int_b": lambda m, x: m.logsumexp(x.astype(np.int32), b=2.0),
    "logsumexp_python": lambda m, x: m.logsumexp(3),
    "softplus_int": lambda m, x: m.softplus(x.astype(np.int32)),
    "gelu_int": lambda m, x: m.gelu(x.astype(np.int32)),
}


@pytest.mark.parametrize("name", sorted(_DEFAULT_FLOAT_CASES))
@pytest.mark.parametrize("x64", [False, pytest.param(True, marks=pytest.mark.x64)], ids=["x32", "x64"])
def test_the_default_float_as_jax(name, x64):
    """one_hot's default dtype and the float integers become are the default float: float64 under x64."""
    x = np.array([0.5, -1.0, 3.0])
    ours, theirs = _outcome(_DEFAULT_FLOAT_CASES[name], tnn, x), _outcome(_DEFAULT_FLOAT_CASES[name], jnn, x)
    assert divergence_sweep._difference(ours, theirs) is None


@pytest.mark.parametrize("x64", [False, pytest.param(True, marks=pytest.mark.x64)], ids=["x32", "x64"])
def test_fft_frequencies_and_norm_zero_dtypes_as_jax(x64):
    import toolkit.numpy as tnp

    jnp = jax.numpy
    cases = [lambda m: m.fft.fftfreq(5, 0.5), lambda m: m.fft.rfftfreq(6), lambda m: m.fft.fftfreq(4, dtype=np.float16),
             lambda m: m.linalg.norm(np.array([0, 1.5, 0], np.float16), 0),
             lambda m: m.linalg.vector_norm(np.array([[0, 1.5], [2, 0]], np.float16), ord=0),
             lambda m: m.linalg.vector_norm(np.array([0, 1 + 1j], np.complex64), ord=0)]
    for case in cases:
        assert divergence_sweep._difference(_outcome(case, tnp), _outcome(case, jnp)) is None
