"""What ``scripts/lax_sweep.py`` found where toolkit.lax differed from jax.lax, each against JAX in this process,
and the sweep's own machinery (a worker that dies or hangs is reported, and the sweep goes on)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax as tlax

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax

COMPLEX = np.array([[1 + 1j, 1 + 2j, -1j, np.inf, 2.5], [np.nan + 0j, 3 - 1j, 1 + 1j, 0.5j, -np.inf]], np.complex64)


def _same(ours, theirs):
    """Same dtype, weak type, shape and values bit for bit (NaNs equal)."""
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert bool(ours.aval.weak_type) == bool(theirs.aval.weak_type)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def _same_type_error(ours, theirs):
    with pytest.raises(TypeError):
        theirs()
    with pytest.raises(TypeError) as caught:
        ours()
    return str(caught.value)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_conj(dtype):
    x = np.array([1.5, -2.0, 0.0], dtype)
    _same(tlax.conj(x), jlax.conj(x))
    _same(toolkit.jit(tlax.conj)(x), jax.jit(jlax.conj)(x))
    _same(tlax.conj(2.0), jlax.conj(2.0))  # weak stays weak


@pytest.mark.parametrize("build", [lambda lax: lambda x: lax.conj(x).real,
                                   lambda lax: lambda x: (lax.conj(x) * 3j).imag])
def test_conj_of_a_real_differentiates_as_jax(build):
    assert float(toolkit.grad(build(tlax))(2.0)) == float(jax.grad(build(jlax))(2.0))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.int32, np.bool_])
def test_conj_refuses_what_jax_refuses(dtype):
    x = np.ones(2, dtype)
    message = _same_type_error(lambda: tlax.conj(x), lambda: jlax.conj(x))
    assert "conj does not accept dtype" in message


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32])
def test_pow_of_an_integer_base_is_a_type_error(dtype):
    x = np.array([2, 3], dtype)
    message = _same_type_error(lambda: tlax.pow(x, x), lambda: jlax.pow(x, x))
    assert f"pow does not accept dtype {np.dtype(dtype).name} at position 0" in message


@pytest.mark.parametrize("base", [np.float32, np.float16, ml_dtypes.bfloat16, np.complex64])
@pytest.mark.parametrize("exponent", [np.int8, np.int32, np.uint8, np.uint32])
def test_pow_takes_an_integer_exponent_of_any_width(base, exponent):
    x = np.array([2.0, -1.5, 0.0, 3.0], base)
    y = np.array([3, 0, 2, 5], exponent)
    _same(tlax.pow(x, y), jlax.pow(x, y))
    _same(toolkit.jit(tlax.pow)(x, y), jax.jit(jlax.pow)(x, y))


def test_pow_with_a_float_exponent_of_another_width_is_a_type_error():
    x, y = np.float32(2), np.float16(2)
    _same_type_error(lambda: tlax.pow(x, y), lambda: jlax.pow(x, y))


@pytest.mark.parametrize("name, build", [
    ("x**3", lambda lax: lambda x: lax.pow(x, 3)), ("x**int32(0)", lambda lax: lambda x: lax.pow(x, np.int32(0))),
    ("x**0.0", lambda lax: lambda x: lax.pow(x, 0.0)), ("x**x", lambda lax: lambda x: lax.pow(x, x)),
    ("0**x", lambda lax: lambda x: lax.pow(0.0, x)), ("x**-1.0", lambda lax: lambda x: lax.pow(x, -1.0)),
    ("2**x", lambda lax: lambda x: lax.pow(2.0, x))])
@pytest.mark.parametrize("at", [2.0, 0.0, -1.0])
def test_pow_gradients_as_jax_nans_included(name, build, at):
    """JAX's JVP of pow: y x**(y-1) (0 where an integer y is 0) and log(x) x**y with log(1) at x == 0, so
    0 * inf is NaN where JAX's is (the gradient of x**x at 0, of 0**y at y == -1)."""
    ours, theirs = float(toolkit.grad(build(tlax))(at)), float(jax.grad(build(jlax))(at))
    assert ours == theirs or (np.isnan(ours) and np.isnan(theirs)), (ours, theirs)


def test_pow_with_an_integer_exponent_batches_as_jax():
    x, y = np.arange(4.0, dtype=np.float32), np.array([0, 1, 2, 3], np.int32)
    _same(toolkit.vmap(tlax.pow)(x, y), jax.vmap(jlax.pow)(x, y))
    _same(toolkit.vmap(lambda a: tlax.pow(a, np.int32(2)))(x), jax.vmap(lambda a: jlax.pow(a, np.int32(2)))(x))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)])
def test_complex_max_and_min_reductions_order_as_jax(name, axes):
    """By real part, then imaginary part; a NaN wins where JAX's comparison makes it win."""
    _same(getattr(tlax, name)(COMPLEX, axes), getattr(jlax, name)(COMPLEX, axes))
    _same(toolkit.jit(lambda c: getattr(tlax, name)(c, axes))(COMPLEX),
          jax.jit(lambda c: getattr(jlax, name)(c, axes))(COMPLEX))


@pytest.mark.parametrize("name", ["max", "min", "ptp", "amax", "amin"])
def test_numpy_complex_max_min_and_ptp_as_jax(name):
    finite = COMPLEX[:, [0, 1, 2, 4]].copy()
    finite[1, 0] = 2 + 0j
    for axis in (None, 0, 1):
        _same(getattr(tnp, name)(finite, axis=axis), getattr(jnp, name)(finite, axis=axis))


@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp_complex_and_real_bit_for_bit(dtype, reverse):
    x = COMPLEX if dtype == np.complex64 else np.real(COMPLEX).astype(np.float32)
    _same(tlax.cumlogsumexp(x, axis=1, reverse=reverse), jlax.cumlogsumexp(x, axis=1, reverse=reverse))


def test_cumlogsumexp_of_integers_is_refused():
    with pytest.raises(TypeError, match="Accepted dtypes are subtypes of floating, complexfloating"):
        tlax.cumlogsumexp(np.arange(3))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_numpy_logaddexp_complex_as_jax(name):
    """JAX's complex formula (the imaginary part wrapped into [-pi, pi], in base 2 [-pi/log 2, pi/log 2])."""
    x, y = COMPLEX[0], COMPLEX[1]
    _same(getattr(tnp, name)(x, y), getattr(jnp, name)(x, y))
    big = np.array([3 + 3j, -2 + 40j], np.complex64)
    _same(getattr(tnp, name)(big, big), getattr(jnp, name)(big, big))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_numpy_logaddexp_real_and_weak_as_jax(name):
    x = np.array([0.0, -np.inf, np.inf, np.nan, 1e30, -3.0], np.float32)
    y = np.array([1.0, -np.inf, np.inf, 1.0, 1e30, 2.0], np.float32)
    _same(getattr(tnp, name)(x, y), getattr(jnp, name)(x, y))
    _same(getattr(tnp, name)(2.0, 3), getattr(jnp, name)(2.0, 3))
    _same(getattr(tnp, name)(np.int32(2), x), getattr(jnp, name)(np.int32(2), x))


@pytest.mark.parametrize("source", [np.int8, np.uint8, np.float32, np.complex64])
def test_bitcast_to_or_from_bool_or_complex_is_a_type_error(source):
    x = np.ones(2, source)
    message = _same_type_error(lambda: tlax.bitcast_convert_type(x, np.bool_),
                               lambda: jlax.bitcast_convert_type(x, np.bool_))
    assert "does not support bool or complex values" in message
    b = np.ones(2, np.bool_)
    _same(tlax.bitcast_convert_type(b, np.bool_), jlax.bitcast_convert_type(b, np.bool_))


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.bool_])
def test_cholesky_and_eigh_of_integers_symmetrize_to_floats_as_jax(dtype):
    """JAX's symmetrize is ``(x + x^H) / 2`` with jnp's operators: integers and booleans become floats."""
    m = (np.eye(4) * 4 + np.eye(4, k=1)).astype(dtype)
    ours, theirs = tlax.linalg.cholesky(m), jlax.linalg.cholesky(m)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)
    (_, w_ours), (_, w_theirs) = tlax.linalg.eigh(m), jlax.linalg.eigh(m)
    assert w_ours.dtype == w_theirs.dtype
    np.testing.assert_allclose(np.asarray(w_ours), np.asarray(w_theirs), rtol=1e-6)
    _same_type_error(lambda: tlax.linalg.eigh(m, symmetrize_input=False),
                     lambda: jlax.linalg.eigh(m, symmetrize_input=False))


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("options", [dict(left_side=True, lower=True), dict(left_side=True, transpose_a=True),
                                     dict(lower=True, unit_diagonal=True)])
def test_triangular_solve_of_half_floats_as_jax(dtype, options):
    a = (np.tril(np.ones((4, 4))) + np.triu(np.ones((4, 4)), 1) * 0.5 + np.eye(4) * 3).astype(dtype)
    b = np.arange(8, dtype=np.float32).reshape(4, 2).astype(dtype)
    b = b if options.get("left_side") else b.T
    _same(tlax.linalg.triangular_solve(a, b, **options), jlax.linalg.triangular_solve(a, b, **options))


def test_convolution_of_booleans_as_jax():
    rng = np.random.default_rng(0)
    x, w = rng.random((2, 3, 9)) < 0.3, rng.random((4, 3, 3)) < 0.4
    for options in [dict(window_strides=(1,), padding="VALID"),
                    dict(window_strides=(2,), padding="SAME", rhs_dilation=(2,))]:
        _same(tlax.conv_general_dilated(x, w, **options), jlax.conv_general_dilated(x, w, **options))


@pytest.mark.x64
@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.bool_])
@pytest.mark.parametrize("kind", ["FFT", "RFFT"])
def test_fft_of_integers_under_x64_as_jax(dtype, kind):
    """JAX's to_complex_dtype / to_inexact_dtype: 64-bit integers transform in complex128 (float64 for RFFT)."""
    x = np.arange(6).astype(dtype)
    ours, theirs = tlax.fft(x, kind, (6,)), jlax.fft(x, kind, (6,))
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-12, atol=1e-12)


# --- the sweep's machinery -----------------------------------------------------------------------------------

def _sweep():
    path = Path(__file__).resolve().parents[2] / "scripts" / "lax_sweep.py"
    spec = importlib.util.spec_from_file_location("lax_sweep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# A stand-in worker: case "crash" kills it (as a segfaulting XLA would), "hang" never answers, "differs" differs.
_FAKE_WORKER = """
import json, os, sys, time
for line in sys.stdin:
    index, case = json.loads(line)
    print(f"START {index}", flush=True)
    if case["op"] == "crash":
        os.abort()
    if case["op"] == "hang":
        time.sleep(60)
    print(json.dumps([index, "it differs" if case["op"] == "differs" else None]), flush=True)
"""


def test_the_sweep_reports_a_crash_and_a_hang_and_goes_on():
    sweep = _sweep()
    names = ["same", "crash", "same", "differs", "hang", "same", "crash"]
    cases = [{"op": n, "kind": "unary", "dtypes": ["float32"]} for n in names]
    found = list(sweep.run(cases, False, command=[sys.executable, "-c", _FAKE_WORKER], timeout=5))
    assert [(c["op"], v.split(" (")[0]) for c, v in found] == [
        ("crash", "CRASH"), ("differs", "it differs"), ("hang", "HANG"), ("crash", "CRASH")]
    assert sweep.describe(cases[0]) == "same(float32)"


# A worker whose hung case leaves a child holding its output pipe for a while after the worker is killed, and whose
# "slow" case answers after 1.5 s (within the 2 s timeout): the pipe's end arrives while the next worker runs it.
_PIPE_HOLDING_WORKER = """
import json, subprocess, sys, time
for line in sys.stdin:
    index, case = json.loads(line)
    print(f"START {index}", flush=True)
    if case["op"] == "hang":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3)"])  # inherits stdout
        time.sleep(60)
    if case["op"] == "slow":
        time.sleep(1.5)
    print(json.dumps([index, "it differs" if case["op"] != "same" else None]), flush=True)
"""


def test_a_killed_workers_late_output_is_not_read_as_the_next_workers():
    """The killed worker's reader used to put the end of its pipe into the next worker's queue (a closure over the
    loop's queue): the next worker's case was then reported as a crash (found by a run on a loaded machine)."""
    sweep = _sweep()
    cases = [{"op": n, "kind": "unary", "dtypes": ["float32"]} for n in ("hang", "slow", "same")]
    found = list(sweep.run(cases, False, command=[sys.executable, "-c", _PIPE_HOLDING_WORKER], timeout=2))
    assert [(c["op"], v.split(" (")[0]) for c, v in found] == [("hang", "HANG"), ("slow", "it differs")]


def test_the_sweep_agrees_on_a_few_real_cases():
    """The real worker (this script, jax and toolkit) on a handful of the cases fixed above: no differences."""
    sweep = _sweep()
    cases = [c for c in sweep.cases(["int8", "float32", "complex64"])
             if c["op"] in ("conj", "pow", "reduce_max", "cumlogsumexp", "bitcast_convert_type")]
    assert len(cases) > 15
    assert list(sweep.run(cases, False, timeout=120)) == []
