"""``toolkit.scipy.stats``' simple continuous distributions (cauchy, expon, laplace, uniform, pareto, gumbel_l,
gumbel_r, t, chi2) against ``jax.scipy.stats`` in the same run."""

from __future__ import annotations

import importlib
import re

import numpy as np
import pytest

import toolkit

jax = pytest.importorskip("jax")
jstats = pytest.importorskip("jax.scipy.stats")

# Boundaries of the supports at the defaults (0 for expon/chi2, 1 for pareto/uniform) and with loc=0.5, scale=2
# (0.5, 2.5), both sides of them, and the non-finite values.
X = np.array([-3, -1, -0.5, 0, 0.25, 0.5, 1, 1.5, 2, 2.5, 3.5, 10, np.nan, np.inf, -np.inf], np.float32)
# As long as X, so that the quantile functions reuse the shapes (and eager executables) of the others.
Q = np.array([0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999, 1, -0.1, 1.1, 1e-6, 1 - 2**-24, np.nan, np.inf, -np.inf],
             np.float32)
# Parameters broadcast against X[None]: a valid scale, the defaults, a zero scale and a negative one.
LOC = np.array([[0.5], [0.0], [0.0], [-1.0]], np.float32)
SCALE = np.array([[2.0], [1.0], [0.0], [-1.0]], np.float32)
SHAPE = np.array([[2.5], [4.0], [1.0], [0.5]], np.float32)

# name -> number of shape parameters before loc and scale
DISTRIBUTIONS = {"cauchy": 0, "expon": 0, "laplace": 0, "uniform": 0, "pareto": 1, "gumbel_l": 0, "gumbel_r": 0,
                 "t": 1, "chi2": 1}
QUANTILES = ("ppf", "isf")


def _modules(name):
    return importlib.import_module(f"toolkit.scipy.stats.{name}"), getattr(jstats, name)


def _check(ours, theirs, what, rtol=2e-6, atol=1e-6):
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, (what, ours.dtype, theirs.dtype, ours.shape)
    assert ours.aval.weak_type == theirs.aval.weak_type, (what, ours.aval.weak_type)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=str(what))


def _argument_sets(name, function):
    """The argument tuples each function is compared on: points against broadcast parameter arrays (valid, default,
    zero and negative scales), the same as int arrays, a Python float with the default parameters, and Python ints.
    (Two shapes only: each new shape costs both libraries' eager executables, chi2's gammainc ones are slow.)"""
    shapes = DISTRIBUTIONS[name]
    quantile = function in QUANTILES
    points = Q if quantile else X
    int_points = np.broadcast_to(np.arange(len(X)) % 4 // (3 if quantile else 1), (len(LOC), len(X)))
    # full (4, 15) arrays: every eager op then runs at one shape (broadcasting is checked under jit)
    full = np.broadcast_arrays(points[None], *(SHAPE,) * shapes, LOC, SCALE)
    return [
        tuple(full),
        (int_points, *(a.astype(int) + 1 for a in full[1:-2]), *(a.astype(int) for a in full[-2:])),
        (0.3 if quantile else 1.5, *(2.5,) * shapes),
        (0 if quantile else 2, *(3,) * shapes, 1, 2),
    ]


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_values_dtypes_and_weak_types_eagerly(name):
    ours, theirs = _modules(name)
    for function in ours.__all__:
        for args in _argument_sets(name, function):
            what = (name, function, [getattr(a, "shape", a) for a in args])
            _check(getattr(ours, function)(*args), getattr(theirs, function)(*args), what)


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_under_jit(name):
    ours, theirs = _modules(name)
    shapes = DISTRIBUTIONS[name]

    def all_functions(module):
        def run(x, q, *params):
            return [getattr(module, f)(q if f in QUANTILES else x, *params) for f in ours.__all__]
        return run

    args = (X[None], Q[None], *(SHAPE,) * shapes, LOC, SCALE)
    for function, a, b in zip(ours.__all__, toolkit.jit(all_functions(ours))(*args),
                              jax.jit(all_functions(theirs))(*args)):
        _check(a, b, (name, function, "jit"))
    # Python scalars under jit are weak float32 in both (one function: each compilation costs)
    scalars = (1.5, *(2.5,) * shapes, 0.5, 2)
    _check(toolkit.jit(ours.logpdf)(*scalars), jax.jit(theirs.logpdf)(*scalars), (name, "jit scalars"))


# In-support points away from kinks (laplace at loc) where JAX's gradient is finite.
GRAD_POINTS = {"cauchy": [-3.0, 0.2, 4.0], "expon": [0.7, 2.0, 9.0], "laplace": [-3.0, 0.2, 4.0],
               "uniform": [0.7, 1.5, 2.4], "pareto": [2.6, 4.0, 9.0], "gumbel_l": [-3.0, 0.2, 4.0],
               "gumbel_r": [-3.0, 0.2, 4.0], "t": [-3.0, 0.2, 4.0], "chi2": [0.7, 2.0, 9.0]}


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_grad_of_logpdf(name):
    ours, theirs = _modules(name)
    x = np.array(GRAD_POINTS[name], np.float32)
    args = (x, *(np.float32(2.5),) * DISTRIBUTIONS[name], np.float32(0.5), np.float32(2.0))
    # JAX's gumbel logpdf cannot be differentiated w.r.t. scale (see test_gumbel_grads_where_jax_raises)
    argnums = tuple(range(len(args) - name.startswith("gumbel")))
    ours_grads = toolkit.grad(lambda *a: ours.logpdf(*a).sum(), argnums=argnums)(*args)
    theirs_grads = jax.grad(lambda *a: theirs.logpdf(*a).sum(), argnums=argnums)(*args)
    for i, (a, b) in enumerate(zip(ours_grads, theirs_grads)):
        assert np.all(np.isfinite(np.asarray(b))), (name, i)
        _check(a, b, (name, "grad", i), rtol=1e-5, atol=1e-6)


def test_grad_of_cdfs_and_quantiles():
    # a masked branch (expon, pareto), a select (laplace), log1mexp's custom derivative (gumbel_r.logsf), quantiles
    for name, function, point in [("expon", "logsf", 1.2), ("gumbel_r", "logsf", 0.4), ("pareto", "logcdf", 3.0),
                                  ("laplace", "cdf", -0.4), ("uniform", "ppf", 0.25), ("cauchy", "isf", 0.2),
                                  ("gumbel_r", "ppf", 0.3)]:
        ours, theirs = _modules(name)
        params = (2.5,) * DISTRIBUTIONS[name]
        argnums = (0, 1 + len(params))  # the point and scale (gumbel ppf: JAX's grad w.r.t. p raises)
        argnums = argnums[1:] if function == "ppf" and name.startswith("gumbel") else argnums
        args = (np.float32(point), *params, np.float32(0.5), np.float32(2.0))
        ours_grads = toolkit.grad(getattr(ours, function), argnums=argnums)(*args)
        theirs_grads = jax.grad(getattr(theirs, function), argnums=argnums)(*args)
        for a, b in zip(ours_grads, theirs_grads):
            _check(a, b, (name, function, "grad"), rtol=1e-5)


def test_gumbel_grads_where_jax_raises():
    """JAX's gumbel_l/gumbel_r ``logpdf`` w.r.t. ``scale`` and ``ppf`` w.r.t. ``p`` raise (its custom-JVP
    ``xlogy(-1, y)`` multiplies the integer ``-1``'s float0 tangent); toolkit gives the derivatives."""
    x, loc, scale, p = np.float32(0.3), np.float32(0.5), np.float32(2.0), np.float32(0.3)
    z = (x - loc) / scale
    expected = {
        ("gumbel_l", "logpdf"): -1 / scale - z / scale * (1 - np.exp(z)),
        ("gumbel_r", "logpdf"): -1 / scale + z / scale * (1 - np.exp(-z)),
        ("gumbel_l", "ppf"): scale / ((1 - p) * -np.log1p(-p)),
        ("gumbel_r", "ppf"): scale / (p * -np.log(p)),
    }
    for (name, function), derivative in expected.items():
        ours, theirs = _modules(name)
        argnums, args = (2, (x, loc, scale)) if function == "logpdf" else (0, (p, loc, scale))
        with pytest.raises(TypeError, match="float0"):
            jax.grad(getattr(theirs, function), argnums=argnums)(*args)
        gradient = toolkit.grad(getattr(ours, function), argnums=argnums)(*args)
        np.testing.assert_allclose(np.asarray(gradient), derivative, rtol=1e-5)


def test_argument_errors_are_jaxs():
    for name in DISTRIBUTIONS:
        ours, theirs = _modules(name)
        for function in ours.__all__:
            args = ([1.0], *(2.5,) * DISTRIBUTIONS[name])
            with pytest.raises(TypeError) as theirs_error:
                getattr(theirs, function)(*args)
            # JAX's message names the function as "<distribution>.<function>" (expon.logsf says "expon.sf")
            fragment = str(theirs_error.value).split(", got")[0]
            assert "requires ndarray or scalar arguments" in fragment
            with pytest.raises(TypeError, match=fragment.replace(".", r"\.")):
                getattr(ours, function)(*args)
        if DISTRIBUTIONS[name]:
            with pytest.raises(TypeError, match="missing 1 required positional argument"):
                theirs.logpdf(1.0)
            with pytest.raises(TypeError, match="missing 1 required positional argument"):
                ours.logpdf(1.0)


def test_complex_arguments_as_jax():
    """Complex points: cauchy and the ppfs compute (JAX's lax ops and jnp comparisons accept them); the others raise
    JAX's error: the TypeError of the lax op that refuses complex operands (a comparison, div, lgamma, igamma), or
    for chi2's cdf/sf, when XLA runs unoptimized (the test run's XLA_FLAGS), the runtime error of its complex clamp."""
    for name in DISTRIBUTIONS:
        ours, theirs = _modules(name)
        for function in ours.__all__:
            args = (np.complex64(0.3 + 0.1j), *(2.5,) * DISTRIBUTIONS[name])
            try:
                expected = getattr(theirs, function)(*args)
            except (TypeError, jax.errors.JaxRuntimeError) as error:
                assert re.search("complex64|C64", str(error)), error
                with pytest.raises(type(error), match="complex64|C64"):
                    getattr(ours, function)(*args)
            else:
                _check(getattr(ours, function)(*args), expected, (name, function, "complex"), rtol=1e-5)
