"""``toolkit.scipy.special`` and ``toolkit.scipy.stats`` against ``jax.scipy`` in the same run."""

from __future__ import annotations

import inspect
import types

import numpy as np
import pytest

import toolkit
from toolkit.scipy import special, stats

jax = pytest.importorskip("jax")
jsp = pytest.importorskip("jax.scipy.special")
jstats = pytest.importorskip("jax.scipy.stats")

RNG = np.random.default_rng(0)
X = np.concatenate([np.linspace(-4.5, 4.5, 19), [0.0, -0.0, 1.0, 2.0, -1.0, -2.0, np.nan, np.inf, -np.inf]])
X32 = X.astype(np.float32)
POSITIVE = np.abs(RNG.normal(size=12)).astype(np.float32) * 3 + 0.1
UNIT = np.concatenate([RNG.uniform(0.01, 0.99, size=10), [0.0, 1.0, 0.5]]).astype(np.float32)


def _close(ours, theirs, rtol=2e-6, atol=1e-6):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)


UNARY = ["erf", "erfc", "erfinv", "gammaln", "digamma", "gammasgn", "gamma", "factorial", "entr", "expit", "logit",
         "ndtr", "log_ndtr"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(name):
    values = UNIT * 2 - 1 if name == "erfinv" else UNIT if name == "logit" else X32
    _close(getattr(special, name)(values), getattr(jsp, name)(values), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["xlogy", "xlog1py", "rel_entr", "kl_div", "boxcox", "boxcox1p", "poch", "comb"])
def test_binary_functions(name):
    a = np.array([0.0, 0.0, 1.0, 2.5, -1.0, 3.0, 0.5, 4.0], np.float32)
    b = np.array([0.0, 2.0, 0.5, 0.0, 2.0, np.nan, 1.5, 2.0], np.float32)
    _close(getattr(special, name)(a, b), getattr(jsp, name)(a, b), rtol=1e-5, atol=1e-6)


def test_integer_arguments_promote_to_float32():
    for name in ("gammaln", "erf", "expit", "factorial"):
        assert getattr(special, name)(np.arange(4)).dtype == getattr(jsp, name)(np.arange(4)).dtype
    _close(special.comb(5, 2, repetition=True), jsp.comb(5, 2, repetition=True))
    _close(special.xlogy(2, 3.0), jsp.xlogy(2, 3.0))


def test_multigammaln_and_reductions():
    _close(special.multigammaln(POSITIVE + 2, 3), jsp.multigammaln(POSITIVE + 2, 3), rtol=1e-5)
    logits = RNG.normal(size=(3, 5)).astype(np.float32)
    _close(special.logsumexp(logits, axis=1), jsp.logsumexp(logits, axis=1))
    # scipy's softmax and log_softmax normalize over every element by default (toolkit's took the last axis,
    # jax.nn's default: silently other values for a matrix).
    for axis in (None, 0, 1, (0, 1)):
        _close(special.softmax(logits, axis=axis), jsp.softmax(logits, axis=axis))
        _close(special.log_softmax(logits, axis=axis), jsp.log_softmax(logits, axis=axis))
    _close(special.softmax(logits), jsp.softmax(logits))
    _close(special.log_softmax(logits), jsp.log_softmax(logits))
    for fn in (special.softmax, special.log_softmax, jsp.softmax, jsp.log_softmax):
        with pytest.raises(TypeError):
            fn(logits, 0)  # axis is keyword-only, as in JAX


def test_log_ndtr_tails_and_series_order():
    far = np.array([-40.0, -15.0, -9.0, 6.0, 9.0], np.float32)
    for order in (0, 1, 3, 5):
        _close(special.log_ndtr(far, order), jsp.log_ndtr(far, order), rtol=1e-5)


def test_gradients_match_jax():
    for name in ("xlogy", "logit", "log_ndtr", "gamma"):
        def ours(v, f=getattr(special, name)):
            return f(v, 2.0).sum() if name == "xlogy" else f(v).sum()

        def theirs(v, f=getattr(jsp, name)):
            return f(v, 2.0).sum() if name == "xlogy" else f(v).sum()
        values = UNIT[:10] + (2.0 if name == "gamma" else 0.0)
        _close(toolkit.grad(ours)(values), jax.grad(theirs)(values), rtol=1e-4, atol=1e-5)


def test_xlogy_and_xlog1py_derivatives_at_zero_are_jaxs():
    # JAX's custom_jvp: d/dx at x == 0 is log(y) (log1p(y)), where differentiating the where would give 0.
    x, y = np.zeros(3, np.float32), np.array([0.5, 2.0, 3.0], np.float32)
    for name in ("xlogy", "xlog1py"):
        for argnums in (0, 1, (0, 1)):
            ours = toolkit.grad(lambda a, b: getattr(special, name)(a, b).sum(), argnums)(x, y)
            theirs = jax.grad(lambda a, b: getattr(jsp, name)(a, b).sum(), argnums)(x, y)
            _close(ours, theirs)
    _close(toolkit.jvp(special.xlogy, (x, y), (np.ones(3, np.float32), np.ones(3, np.float32))),
           jax.jvp(jsp.xlogy, (x, y), (np.ones(3, np.float32), np.ones(3, np.float32))))


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
def test_norm(name):
    _close(getattr(stats.norm, name)(X32[:19], 0.5, 2.0), getattr(jstats.norm, name)(X32[:19], 0.5, 2.0),
           rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"])
def test_logistic(name):
    values = UNIT if name in ("ppf", "isf") else X32[:19]
    _close(getattr(stats.logistic, name)(values, 0.5, 2.0), getattr(jstats.logistic, name)(values, 0.5, 2.0),
           rtol=1e-5, atol=1e-6)


def test_inside_jit():
    f = toolkit.jit(lambda v: special.gammaln(v) + stats.norm.logpdf(v))
    _close(f(POSITIVE), jax.jit(lambda v: jsp.gammaln(v) + jstats.norm.logpdf(v))(POSITIVE), rtol=1e-5)


def test_errors_match_jax():
    for module in (special, jsp):
        with pytest.raises(NotImplementedError, match="exact=True"):
            module.factorial(3, exact=True)
        with pytest.raises(TypeError, match="series_order must be a Python integer"):
            module.log_ndtr(1.0, 2.5)
        with pytest.raises(ValueError, match="series_order must be non-negative"):
            module.log_ndtr(1.0, -1)
        with pytest.raises(ValueError, match="series_order must be <= 30"):
            module.log_ndtr(1.0, 31)
        with pytest.raises(TypeError, match="is not supported"):
            module.ndtr(np.ones(2, np.float16))
        with pytest.raises(ValueError, match="does not support complex-valued inputs"):
            module.entr(np.ones(2, np.complex64))
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            module.xlogy([1.0], 2.0)


@pytest.mark.parametrize("name", sorted(n for n in dir(jstats) if isinstance(getattr(jstats, n), types.ModuleType)
                                        and not n.startswith("_")))
def test_every_distribution_has_jaxs_functions_and_signatures(name):
    ours, theirs = getattr(stats, name), getattr(jstats, name)
    public = sorted(n for n in dir(theirs) if not n.startswith("_") and callable(getattr(theirs, n)))
    assert sorted(ours.__all__) == public
    for function in public:
        shapes = [[(p.name, p.kind, p.default) for p in inspect.signature(getattr(m, function)).parameters.values()]
                  for m in (ours, theirs)]
        assert shapes[0] == shapes[1], (name, function)


@pytest.mark.parametrize("name, arguments", [
    ("exp1", 1), ("expi", 1), ("expn", "n"), ("hyp1f1", 3), ("hyp2f1", 4), ("erfcx", 1),
])
def test_bfloat16_arguments_as_jax(name, arguments):
    # The series' tolerances read finfo of the argument's dtype; numpy's finfo does not know bfloat16 (toolkit
    # raised "not inexact"), ml_dtypes' does, as JAX's dtypes.finfo.
    import ml_dtypes
    x = np.array([0.5, 1.5, 3.0], ml_dtypes.bfloat16)
    args = (2, x) if arguments == "n" else (x, x, x + 2, x / 4) if arguments == 4 else (x,) * arguments
    ours, theirs = np.asarray(getattr(special, name)(*args)), np.asarray(getattr(jsp, name)(*args))
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours.astype(np.float32), theirs.astype(np.float32))


def test_gamma_of_complex_arguments_as_jax():
    # JAX 0.10's gamma takes complex arguments: exp(loggamma(z)), NaN at the poles and at NaN.
    z = np.array([1 + 1j, 0.5 - 2j, -1 + 0j, 0j, -2.5 + 0.1j, complex(np.nan, 1), 3 + 0j, -0.3 + 4j], np.complex64)
    ours, theirs = np.asarray(special.gamma(z)), np.asarray(jsp.gamma(z))
    assert ours.dtype == theirs.dtype == np.complex64
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_allclose(np.asarray(toolkit.jit(special.gamma)(z)), theirs, rtol=1e-5)  # fused rounding
    np.testing.assert_allclose(toolkit.grad(lambda v: special.gamma(v).real)(np.complex64(1 + 1j)),
                               jax.grad(lambda v: jsp.gamma(v).real)(np.complex64(1 + 1j)), rtol=1e-6)


def test_owens_t_of_half_precision_is_answered_in_the_default_float_as_jax():
    # JAX integrates with numpy float64 nodes: float16 and bfloat16 arguments give float32 values (float64 under
    # x64), computed in that precision; toolkit kept the argument's dtype (other dtype, other values).
    import ml_dtypes
    rng = np.random.default_rng(0)
    for dtype in (np.float16, ml_dtypes.bfloat16, np.float32):
        h, a = (rng.standard_normal(50) * 2).astype(dtype), (rng.standard_normal(50) * 3).astype(dtype)
        ours, theirs = np.asarray(special.owens_t(h, a)), np.asarray(jsp.owens_t(h, a))
        assert ours.dtype == theirs.dtype == np.float32
        np.testing.assert_array_equal(ours, theirs)
