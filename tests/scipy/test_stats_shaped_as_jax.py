"""The shaped continuous distributions of ``toolkit.scipy.stats`` (gamma, beta, gennorm, truncnorm, vonmises,
wrapcauchy) against ``jax.scipy.stats`` in the same run: values, dtypes and weak types eagerly and under ``jit``,
the masks JAX puts on out-of-support points and invalid parameters, gradients, and JAX's errors.

Cheap by construction (XLA's compilations are the cost): each distribution's cases are one broadcast argument
tuple (every point against every parameter), so each function compiles once per side; Python-scalar and integer
promotion is checked abstractly (``eval_shape``) for every function and eagerly for ``logpdf``.
"""

from __future__ import annotations

import functools

import importlib

import numpy as np
import pytest

from _oracle import assert_same_typed

import toolkit

jax = pytest.importorskip("jax")
jstats = pytest.importorskip("jax.scipy.stats")

NAMES = ["gamma", "beta", "gennorm", "truncnorm", "vonmises", "wrapcauchy"]

f32 = np.float32


#: Points: below every support, the boundaries 0, 1, 2 and 2 pi (and -0), interior values, above, NaN, infinities.
X = np.array([-3.0, -1.0, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 2 * np.pi, 7.0, np.nan, np.inf, -np.inf], f32)


def _rows(*parameters):
    """One argument tuple: ``X`` against rows of parameters (a column each), so that every distribution's values
    have one shape, (8, 15): toolkit's eager operations compile once for all of them."""
    assert len(parameters) == 8
    return (X, *(np.asarray(column, f32)[:, None] for column in zip(*parameters, strict=True)))


#: Per distribution: the one argument tuple.
CASES = {
    # (a, loc, scale): small, 1 (xlogy(0, y)), large, shifted and scaled; 0, negative and NaN shapes; scale < 0.
    "gamma": _rows((0.5, 0.0, 1.0), (1.0, 0.0, 1.0), (2.5, 0.5, 2.0), (9.0, -1.0, 1.0), (0.0, 0.0, 1.0),
                   (-1.0, 0.0, 1.0), (np.nan, 0.0, 1.0), (2.0, 0.0, -1.0)),
    # (a, b, loc, scale): interior, U-shaped, uniform (xlogy and xlog1py of 0), shifted and scaled; a or b 0,
    # negative or NaN; scale < 0.
    "beta": _rows((2.0, 3.0, 0.0, 1.0), (0.5, 0.5, 0.0, 1.0), (1.0, 1.0, 0.0, 1.0), (0.5, 2.0, -0.5, 2.0),
                  (0.0, 2.0, 0.0, 1.0), (2.0, -1.0, 0.0, 1.0), (np.nan, 2.0, 0.0, 1.0), (2.0, 2.0, 0.0, -1.0)),
    "gennorm": _rows(*[(b,) for b in (0.5, 1.0, 1.5, 2.0, 8.0, 0.0, -1.0, np.nan)]),
    # (a, b, loc, scale), the bounds in standard units: central, left tail, right tail shifted and scaled, far left
    # and far right tails (log_ndtr's asymptotic series; x = -1 is at -10, x = 2 at 8), a point, reversed, NaN.
    "truncnorm": _rows((-1.0, 1.5, 0.0, 1.0), (-3.0, -0.5, 0.0, 1.0), (0.5, 3.0, 0.5, 2.0), (-12.0, -9.0, 0.0, 0.1),
                       (6.0, 30.0, 0.0, 0.25), (1.0, 1.0, 0.0, 1.0), (1.0, 0.5, 0.0, 1.0), (np.nan, 2.0, 0.0, 1.0)),
    "vonmises": _rows(*[(k,) for k in (0.5, 1.0, 2.5, 30.0, 1e3, 0.0, -1.0, np.nan)]),
    "wrapcauchy": _rows(*[(c,) for c in (0.3, 0.75, 0.99, 0.0, 1.0, -0.25, 1.5, np.nan)]),
}
#: Python scalars, integers, numpy scalars and float64/int arrays: promotion to (weak) float32 as JAX's
#: promote_args_inexact does.
SCALAR_CASES = {
    "gamma": [(1.5, 2.0), (2, 3, 0, 1), (np.arange(4), 2.0, 0, f32(2.0)), (np.linspace(0, 3, 4), 2)],
    "beta": [(0.25, 2.0, 3.0), (0, 1, 1, 0, 2), (np.arange(3), 2.0, f32(3.0)), (np.linspace(0, 1, 4), 1, 2)],
    "gennorm": [(0.5, 2.0), (1, 2), (np.arange(-2, 3), f32(1.5)), (np.linspace(-1, 1, 3), 2)],
    "truncnorm": [(0, -1, 1, 0, 2), (np.linspace(-1, 1, 5), f32(-1.0), 1.0)],
    "vonmises": [(0.5, 2.0), (1, 2), (np.arange(-3, 4), f32(0.5)), (np.linspace(-1, 1, 3), 2)],
    "wrapcauchy": [(0.5, 0.5), (1, 0.5), (np.arange(0, 7), f32(0.25)), (np.linspace(0, 6, 3), 0.5)],
}


def _module(name):
    return importlib.import_module(f"toolkit.scipy.stats.{name}")


_same = functools.partial(assert_same_typed, rtol=2e-6, atol=1e-6)


def _tolerance(name, jitted=False):
    """Exact where toolkit's operations are JAX's, in JAX's order, compiled alike (both jitted; beta's eagerly too,
    whose special functions round alike fused or not); a few ulps elsewhere: where a special function's own operation
    order differs (igamma's and lgamma's in gamma, log_ndtr's -0.5 * x * x in truncnorm, which XLA's default CPU
    code generation contracts differently), where exp underflows to 0 or a subnormal (pdf), or where toolkit's eager
    values (an operation at a time) are compared with JAX's jitted ones, which XLA fuses."""
    exact = ("beta", "wrapcauchy") if jitted else ("beta",)
    return {} if name in exact else {"rtol": 2e-6, "atol": 1e-6}


@pytest.mark.parametrize("name", NAMES)
def test_values_eagerly_and_under_jit(name):
    ours, theirs = _module(name), getattr(jstats, name)
    args = CASES[name]
    functions = ours.__all__

    def everything(module, args):
        return [getattr(module, function)(*args) for function in functions]

    expected_jit = dict(zip(functions, jax.jit(lambda a: everything(theirs, a))(args), strict=True))
    jitted = dict(zip(functions, toolkit.jit(lambda a: everything(ours, a))(args), strict=True))
    for function in functions:
        _same(jitted[function], expected_jit[function], what=f"jit {name}.{function}",
              **_tolerance(name, jitted=True))
    # toolkit's eager values against JAX's jitted ones: JAX's eager calls would cost a compilation per operation
    # (and truncnorm's are its jit's). truncnorm's functions, all but pdf, are one program each eagerly, the same as
    # under jit (compiled_whole, as JAX's jit): its programs are the file's cost, so eagerly logpdf (compiled whole)
    # and pdf (not).
    for function in ["logpdf", "pdf"] if name == "truncnorm" else functions:
        _same(getattr(ours, function)(*args), expected_jit[function], what=f"{name}.{function}", **_tolerance(name))
    _check_masks(name, args, {function: np.asarray(value) for function, value in jitted.items()})


def _check_masks(name, args, values):
    """JAX's masks, checked on toolkit's values independently of the comparison: -inf (0) outside the support,
    NaN for invalid parameters, the cdf's 0 and 1 beyond the ends."""
    with np.errstate(invalid="ignore", divide="ignore"):
        x = np.broadcast_to(args[0], values["logpdf"].shape)
        if name == "gamma":
            _, a, loc, scale = np.broadcast_arrays(*args)
            y = (x - loc) / scale
            assert np.all(values["logpdf"][x < loc] == -np.inf)
            assert np.all(values["cdf"][(y <= 0) & (a > 0)] == 0) and np.all(values["sf"][y < 0] == 1)
        elif name == "beta":
            _, a, b, loc, scale = np.broadcast_arrays(*args)
            bad = (a <= 0) | (b <= 0) | (scale <= 0)
            assert np.all(np.isnan(values["logpdf"][bad]))
            assert np.all(values["logpdf"][~bad & ((x < loc) | (x > loc + scale))] == -np.inf)
        elif name == "truncnorm":
            _, a, b, loc, scale = np.broadcast_arrays(*args)
            y = (x - loc) / scale
            assert np.all(np.isnan(values["logpdf"][a >= b])) and np.all(np.isnan(values["logcdf"][a >= b]))
            outside = (a < b) & ((y < a) | (y > b))
            assert np.all(values["logpdf"][outside] == -np.inf) and np.all(values["pdf"][outside] == 0)
            assert np.all(values["cdf"][(a < b) & (y <= a)] == 0) and np.all(values["cdf"][(a < b) & (y >= b)] == 1)
            assert np.all(values["sf"][(a < b) & (y >= b)] == 0) and np.all(values["sf"][(a < b) & (y <= a)] == 1)
        elif name == "vonmises":
            kappa = np.broadcast_to(args[1], x.shape)
            assert np.all(np.isnan(values["logpdf"][~(kappa > 0)]))
        elif name == "wrapcauchy":
            c = np.broadcast_to(args[1], x.shape)
            valid = (c > 0) & (c < 1)
            assert np.all(np.isnan(values["logpdf"][~valid]))
            assert np.all(values["logpdf"][valid & ((x < 0) | (x > 2 * np.pi))] == -np.inf)
        elif name == "gennorm":
            assert np.all(values["cdf"][(x == 0) & (np.broadcast_to(args[1], x.shape) > 0)] == 0.5)


@pytest.mark.parametrize("name", NAMES)
def test_scalar_and_integer_arguments(name):
    ours, theirs = _module(name), getattr(jstats, name)
    for i, args in enumerate(SCALAR_CASES[name]):
        for function in ours.__all__:
            expected = jax.eval_shape(getattr(theirs, function), *args)
            shape = toolkit.eval_shape(getattr(ours, function), *args)
            assert (shape.shape, shape.dtype, shape.weak_type) == (expected.shape, expected.dtype,
                                                                   expected.weak_type), (name, function, args)
        # Values eagerly for Python floats (weak) and Python ints (weak float32 too), against JAX's jit of them
        # (one compilation, not one per operation; Python scalars are weak there too). Not truncnorm's: its eager
        # calls are toolkit.jit's of its functions (compiled_whole), a program of ~0.2 s each.
        if i < 2 and name != "truncnorm":
            _same(ours.logpdf(*args), jax.jit(theirs.logpdf)(*args), what=f"{name}.logpdf{args}", **_tolerance(name))


def test_gradients_match_jax():
    interior = np.array([0.2, 0.5, 0.9, 1.7], f32)
    cases = [
        ("gamma", "logpdf", lambda m, x: m.logpdf(x, 2.5, 0.1, 1.5)),
        ("gamma", "logpdf", lambda m, a: m.logpdf(interior, a + 0.6)),
        ("beta", "logpdf", lambda m, x: m.logpdf(x * 0.5, 2.0, 3.0)),
        ("beta", "logpdf", lambda m, a: m.logpdf(interior * 0.5, a + 0.6, 1.5, -0.1, 1.5)),
        ("gennorm", "logpdf", lambda m, x: m.logpdf(x, 1.5)),
        ("gennorm", "logpdf", lambda m, b: m.logpdf(interior, b + 1.0)),
        ("truncnorm", "logpdf", lambda m, x: m.logpdf(x, -1.0, 2.0, 0.5, 1.5)),
        ("truncnorm", "logpdf", lambda m, a: m.logpdf(interior, a - 1.0, 2.0)),
        ("vonmises", "logpdf", lambda m, x: m.logpdf(x, 2.0)),
        ("vonmises", "logpdf", lambda m, k: m.logpdf(interior, k * 4)),
        ("wrapcauchy", "logpdf", lambda m, x: m.logpdf(x, 0.4)),
        ("wrapcauchy", "logpdf", lambda m, c: m.logpdf(interior, c * 0.5)),
    ]

    def gradients(grad, module, cases):
        return [grad(lambda v, f=f, m=module(name): f(m, v).sum())(interior) for name, _, f in cases]

    # Eagerly, JAX's would be a compilation per operation of each: one program for all, and the same under
    # toolkit.jit. Eagerly toolkit's for beta's (an eager grad runs an operation at a time) and truncnorm's in x
    # (its compiled-whole logpdf is a jit equation there, differentiated whole).
    theirs = jax.jit(lambda: gradients(jax.grad, lambda name: getattr(jstats, name), cases))()
    ours = toolkit.jit(lambda: gradients(toolkit.grad, _module, cases))()
    eager = [(i, case) for i, case in enumerate(cases) if case[0] in ("beta", "truncnorm") and i != 7]
    ours_eagerly = gradients(toolkit.grad, _module, [case for _, case in eager])
    checks = [(f"jit {name}.{function}", ours[i], theirs[i]) for i, (name, function, _) in enumerate(cases)]
    checks += [(f"{name}.{function}", value, theirs[i])
               for (i, (name, function, _)), value in zip(eager, ours_eagerly, strict=True)]
    for what, value, expected in checks:
        assert np.all(np.isfinite(np.asarray(expected))), what
        np.testing.assert_allclose(np.asarray(value), np.asarray(expected), rtol=2e-5, atol=1e-5, err_msg=what)


def test_gradient_in_a_shape_parameter_at_one():
    # xlogy/xlog1py have JAX's custom_jvp: their derivative in x at x == 0 is log(y) (log1p(y)), not the where's 0.
    # gamma's and beta's log densities have xlogy(a - 1, y) and xlog1py(b - 1, -y): at a == 1 (b == 1) JAX's
    # derivative in a (b) keeps log(y) (log1p(-y)). JAX's values, from digamma(1) = -euler_gamma and
    # digamma(3) = 1.5 - euler_gamma: sum(log y) + 2 euler_gamma and sum(log1p(-y)) + 3.
    from toolkit.scipy.stats import beta, gamma

    y = np.array([0.25, 0.5], f32)
    expected = {"gamma": np.log(y).sum() + 2 * np.euler_gamma, "beta": np.log1p(-y).sum() + 3}
    ours = toolkit.jit(lambda one: {"gamma": toolkit.grad(lambda a: gamma.logpdf(y, a).sum())(one),
                                    "beta": toolkit.grad(lambda b: beta.logpdf(y, 2.0, b).sum())(one)})(f32(1.0))
    for name in ours:
        np.testing.assert_allclose(np.asarray(ours[name]), expected[name], rtol=2e-5, err_msg=name)


def test_errors_match_jax():
    parameters = {"gamma": (2.0,), "beta": (2.0, 3.0), "gennorm": (2.0,), "truncnorm": (-1.0, 1.0),
                  "vonmises": (2.0,), "wrapcauchy": (0.5,)}
    for name, rest in parameters.items():
        for module in (_module(name), getattr(jstats, name)):
            for function in _module(name).__all__:
                # The message names the function that promotes (pdf's is logpdf's, truncnorm.sf's is logsf's).
                with pytest.raises(TypeError, match=r"\.\w+ requires ndarray or scalar arguments, got .*list.* at "
                                                    r"position 1"):
                    getattr(module, function)(0.5, [rest[0]], *rest[1:])
    # Complex values reach the same refusing operation as in JAX (its name starts the message: "igamma requires a
    # floating operand" here, "igamma does not accept dtype complex64" in JAX). Abstractly: eagerly, an operation
    # before it would be compiled and run (and XLA CPU's classic emitters, the suite's, have no complex clamp).
    for name, rest in parameters.items():
        ours, theirs = _module(name), getattr(jstats, name)
        for function in ours.__all__:
            outcomes = []
            for eval_shape, f in ((toolkit.eval_shape, getattr(ours, function)),
                                  (jax.eval_shape, getattr(theirs, function))):
                try:
                    eval_shape(f, np.complex64(0.5 + 1j), *rest)
                    outcomes.append(("no error",))
                except (TypeError, ValueError) as e:
                    outcomes.append((type(e).__name__, str(e).split()[0]))
            assert outcomes[0] == outcomes[1], (name, function, outcomes)
