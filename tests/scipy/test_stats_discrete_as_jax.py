"""The discrete distributions of ``toolkit.scipy.stats`` (bernoulli, binom, betabinom, geom, nbinom, poisson,
multinomial) against ``jax.scipy.stats`` in the same run: values, dtypes and weak types eagerly and under ``jit``,
the masks JAX puts on out-of-support points, gradients, and JAX's errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from _oracle import assert_same_typed

import toolkit

jax = pytest.importorskip("jax")
jstats = pytest.importorskip("jax.scipy.stats")

NAMES = ["bernoulli", "binom", "betabinom", "geom", "nbinom", "poisson", "multinomial"]

f32 = np.float32


def _axis(values, rank):
    """``values`` as float32 along the axis ``-rank`` (unit axes after it), to broadcast against the others."""
    return np.array(values, f32).reshape((-1,) + (1,) * (rank - 1))


#: Points: negative, non-integer, in the support, above every n below, NaN and infinities (the last axis).
K = _axis([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 9.0, np.nan, np.inf, -np.inf], 1)
#: Parameters on the axes before it, so that one call evaluates every point at every combination (each call is
#: compiled, so few calls over many values keep the file cheap). Probabilities: the boundaries 0 and 1, interior
#: values, outside [0, 1], NaN.
P = _axis([0.0, 0.3, 0.75, 1.0, -0.25, 1.5, np.nan], 2)
#: Counts for binom / nbinom / betabinom: 0 (a certain outcome), small, non-integer, negative.
N = _axis([0.0, 1.0, 5.0, 4.5, -1.0], 3)
LOC = [0.0, 2.0, -0.5]
MU = _axis([0.0, 0.5, 2.0, 7.5, -1.0, np.nan], 2)
Q = _axis([-0.1, 0.0, 0.2, 0.3, 0.7, 0.75, 1.0, 1.2, np.nan], 1)
#: Beta shapes for betabinom: non-positive (NaN results), small, NaN.
A = _axis([-1.0, 0.0, 0.5, 2.0, np.nan], 2)
B = _axis([0.0, 0.25, 3.0], 4)


def _module(name):
    return importlib.import_module(f"toolkit.scipy.stats.{name}")


_same = assert_same_typed  # exact unless a tolerance is given


#: Per distribution: (function, arguments) cases over the arrays above, with a loc where the function has one.
CASES = {
    "bernoulli": [("logpmf", (K, P, _axis(LOC, 3))), ("cdf", (K, P)), ("ppf", (Q, P))],
    "binom": [("logpmf", (K, N, P, _axis(LOC, 4)))],
    "betabinom": [("logpmf", (K, N, A, B, _axis(LOC, 5)))],
    "geom": [("logpmf", (K, P, _axis(LOC, 3)))],
    "nbinom": [("logpmf", (K, N, P, _axis(LOC, 4)))],
    "poisson": [
        ("logpmf", (K, MU, _axis(LOC, 3))), ("cdf", (K, MU, _axis(LOC, 3))),
        # Each regime of the entropy (sums to k < 35, to k < 250, Stirling), its boundaries, 0, negative, NaN; loc
        # only broadcasts.
        ("entropy", (np.array([[0.0, 0.1, 1.0, 5.0, 9.99, 10.0, 42.0, 99.5, 100.0, 1e4, -1.0, np.nan, np.inf]], f32),
                     np.zeros((2, 1), f32))),
    ],
    "multinomial": [
        ("logpmf", (np.array([1, 2, 0], np.int32), 3, np.array([0.2, 0.5, 0.3], f32))),
        # Counts not summing to n; a zero probability with a zero and a non-zero count; p as ints.
        ("logpmf", (np.array([1, 2, 0], np.int32), 4, np.array([0.2, 0.8, 0.0], f32))),
        ("logpmf", (np.array([0, 3, 0], np.int32), 3, np.array([0.2, 0.8, 0.0], f32))),
        ("logpmf", (np.array([0, 2, 1], np.int32), 3, np.array([0.2, 0.8, 0.0], f32))),
        ("logpmf", (np.array([1, 0], np.int32), 1, np.array([1, 0], np.int32))),
        # Batched: JAX's mask sums all of x, and a rank-1 n is rank-promoted to (1, m).
        ("logpmf", (np.array([[1, 2], [0, 3]], np.int32), 6, np.array([0.4, 0.6], f32))),
        ("logpmf", (np.array([[1, 2], [0, 3]], np.int32), np.array([6, 6], np.int32), np.array([0.4, 0.6], f32))),
        ("logpmf", (np.array([True, False]), True, np.array([0.4, 0.6], f32))),
        ("logpmf", (np.array([2, 1], np.uint8), np.uint8(3), np.array([0.4, 0.6], f32))),
    ],
}

#: Python scalars and integer arrays: promotion to (weak) float32 as JAX's promote_args_inexact (one case for the
#: functions costly to compile: the promotion is the same helper's).
SCALAR_CASES = {
    "bernoulli": [("logpmf", (1, 0.25)), ("pmf", (np.arange(3), 0.5, 1)), ("cdf", (0, 0.5)), ("ppf", (0.3, 1))],
    "binom": [("logpmf", (2, 5, 0.5)), ("pmf", (np.arange(7), 5, 0.25))],
    "betabinom": [("pmf", (2, 5, 1, 2.0))],
    "geom": [("logpmf", (3, 0.5)), ("pmf", (np.arange(4), 0.25, 1))],
    "nbinom": [("logpmf", (3, 2, 0.5)), ("pmf", (np.arange(4), 2.5, 0.25))],
    "poisson": [("logpmf", (3, 2)), ("cdf", (np.arange(5), 2.0, 1)), ("entropy", (5,))],
    "multinomial": [("logpmf", (np.array([1, 2]), 3, np.array([0.5, 0.5]))),
                    ("pmf", (np.array([1, 2]), np.int32(3), np.array([0.5, 0.5], np.float16)))],
}


def _tolerance(name, function):
    # Sums of gammaln / betaln terms cancel: an ulp of a term (XLA fusing the same operations differently) is more
    # than an ulp of the result.
    if name in ("binom", "betabinom", "nbinom", "multinomial") or (name, function) == ("poisson", "entropy"):
        return {"rtol": 1e-5, "atol": 1e-5}
    return {"rtol": 2e-6, "atol": 1e-6}


#: The cases also run eagerly, by index into ``CASES[name] + SCALAR_CASES[name]``: each eager call compiles its
#: operations one by one, so only the functions with code of their own (``pmf`` is ``exp(logpmf)``), one case with
#: Python scalars, and the compiled-whole ``poisson.entropy`` and ``betabinom.logpmf`` (through ``pmf``).
EAGER = {"bernoulli": [0, 1, 2, 3], "binom": [0, 1], "betabinom": [1], "geom": [0, 1], "nbinom": [0, 1],
         "poisson": [0, 1, 3, 5], "multinomial": [0, 9]}


@pytest.mark.parametrize("name", NAMES)
def test_values_eagerly_and_under_jit(name):
    """Every case under ``toolkit.jit`` against ``jax.jit``, one program per side for all of them (Python scalars
    among the arguments are traced as weak values, as a jitted function's own arguments are), and the eager cases
    against the same values of JAX (JAX's eager functions give its jitted functions' dtypes and weak types)."""
    ours, theirs = _module(name), getattr(jstats, name)
    cases = CASES[name] + SCALAR_CASES[name]
    functions = [function for function, _ in cases]
    arguments = [args for _, args in cases]

    def run(module):
        return lambda arguments: [getattr(module, f)(*args) for f, args in zip(functions, arguments)]

    expected = jax.jit(run(theirs))(arguments)
    for (function, args), mine, value in zip(cases, toolkit.jit(run(ours))(arguments), expected):
        _same(mine, value, what=f"jit {name}.{function}{tuple(np.shape(a) for a in args)}",
              **_tolerance(name, function))
    for i in EAGER[name]:
        function, args = cases[i]
        _same(getattr(ours, function)(*args), expected[i],
              what=f"{name}.{function}{tuple(np.shape(a) for a in args)}", **_tolerance(name, function))


def test_gradients_match_jax():
    k = np.array([0.0, 1.0, 2.0, 3.0], f32)
    cases = [
        ("bernoulli", lambda m, p: m.logpmf(np.array([0.0, 1.0, 1.0, 0.0], f32), p)),
        ("binom", lambda m, p: m.logpmf(k, 5.0, p)),
        ("betabinom", lambda m, a: m.logpmf(k, 5.0, a, 1.5)),
        ("geom", lambda m, p: m.logpmf(k + 1, p)),
        ("nbinom", lambda m, n: m.logpmf(k, n + 1.0, 0.4)),
        ("poisson", lambda m, mu: m.logpmf(k, mu * 3)),
        ("poisson", lambda m, mu: m.entropy(mu * 20)),
        ("multinomial", lambda m, p: m.logpmf(np.array([1, 0, 2, 1], np.int32), 4, p)),
    ]
    # Row i of the gradient is case i's: one program per side for all of them.
    points = np.tile(np.array([0.2, 0.4, 0.6, 0.8], f32), (len(cases), 1))

    def total(modules):
        return lambda v: sum(f(modules(name), v[i]).sum() for i, (name, f) in enumerate(cases))

    theirs = np.asarray(jax.jit(jax.grad(total(lambda name: getattr(jstats, name))))(points))
    assert np.all(np.isfinite(theirs))
    ours = toolkit.jit(toolkit.grad(total(_module)))(points)
    for i, (name, _) in enumerate(cases):
        np.testing.assert_allclose(np.asarray(ours)[i], theirs[i], rtol=2e-5, atol=1e-5, err_msg=f"{i}: {name}")
    # Eagerly too (toolkit's interpreted grad), for binom.
    eager = toolkit.grad(lambda v: cases[1][1](_module("binom"), v).sum())(points[1])
    np.testing.assert_allclose(np.asarray(eager), theirs[1], rtol=2e-5, atol=1e-5)


def test_errors_match_jax():
    from toolkit.scipy.stats import multinomial, poisson

    for ours, theirs in [(_module(n), getattr(jstats, n)) for n in ("bernoulli", "binom", "geom", "poisson")]:
        args = [[0.0, 1.0]] + [0.5] * (3 if ours is _module("binom") else 1)
        for module in (ours, theirs):
            with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
                module.logpmf(*args)
    for module in (poisson, jstats.poisson):
        with pytest.raises(TypeError, match="poisson.entropy requires ndarray or scalar arguments"):
            module.entropy([1.0, 2.0])
    p = np.array([0.5, 0.5], f32)
    for module in (multinomial, jstats.multinomial):
        with pytest.raises(ValueError, match=r"x and n must be of integer type; got x.dtype=float32, n.dtype=float32"):
            module.logpmf(np.array([1.0, 1.0], f32), 2, p)
        with pytest.raises(ValueError, match="x and n must be of integer type"):
            module.logpmf(np.array([1, 1]), 2.0, p)
        with pytest.raises(TypeError, match=r"multinomial.logpmf requires ndarray or scalar arguments, got <class "
                                            r"'list'> at position 0"):
            module.logpmf([1, 1], 2, p)
        with pytest.raises(ValueError, match="axis -1 is out of bounds for"):
            module.logpmf(1, 1, 0.5)
    # x and n of different non-scalar ranks are rank-promoted, as jax_numpy_rank_promotion says.
    x, n = np.array([[1, 1]], np.int32), np.array([2], np.int32)
    for module, promotion in ((multinomial, toolkit.numpy_rank_promotion), (jstats.multinomial,
                                                                           jax.numpy_rank_promotion)):
        with promotion("raise"), pytest.raises(ValueError, match=r"broadcast together for multinomial.logpmf on "
                                                                r"shapes \(1, 2\) \(1,\)"):
            module.logpmf(x, n, p)
