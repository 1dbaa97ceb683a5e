"""The ``toolkit.numpy`` additions (more_math, nan_functions, statistics, more_shapes, products, signal)
checked against ``jax.numpy`` 0.10.2: values, dtypes, weak types, a sample under ``jit``, and errors."""

import numpy as np
import pytest
from _oracle import raises_like

import toolkit
import toolkit.numpy as tnp

jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
F = (RNG.standard_normal((4, 5)) * 3).astype(np.float32)
F[0, 1] = 0.0
F[1, 2] = -0.0
XI = RNG.integers(-6, 7, (4, 5)).astype(np.int32)
U = RNG.integers(0, 9, (4, 5)).astype(np.uint8)
H = F.astype(np.float16)
BF = F.astype(jnp.bfloat16)
NANS = F.copy()
NANS[0, :] = np.nan
NANS[2, 3] = np.nan
NANS[3, 0] = np.inf
BOOL = F > 0


def _check(ours, theirs, tol=None, weak=True):
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _check(o, t, tol, weak)
        return
    o, t = np.asarray(ours), np.asarray(theirs)
    assert o.shape == t.shape and o.dtype == t.dtype, (o.shape, o.dtype, t.shape, t.dtype)
    if weak:
        assert bool(getattr(ours, "weak_type", False)) == bool(getattr(theirs, "weak_type", False))
    if o.dtype == jnp.bfloat16:
        o, t = o.astype(np.float32), t.astype(np.float32)
    if tol is None:
        np.testing.assert_array_equal(o, t)
    else:
        cast = np.complex128 if np.iscomplexobj(o) else np.float64
        np.testing.assert_allclose(o.astype(cast), t.astype(cast), rtol=tol, atol=tol)


def _tol(*xs):
    dts = [np.asarray(x).dtype for x in xs if hasattr(x, "dtype")]
    return 2e-2 if any(d in (np.float16, jnp.bfloat16) for d in dts) else 2e-6


def _compare(name, *args, tol=None, **kw):
    _check(getattr(tnp, name)(*args, **kw), getattr(jnp, name)(*args, **kw), tol)


UNARY = ["log2", "log10", "trunc", "rint", "fabs", "signbit", "deg2rad", "radians", "rad2deg", "degrees",
         "positive", "sinc", "nan_to_num"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("x", [XI, U, BF, NANS, BOOL, 2.5, -3], ids=["i32", "u8", "bf16", "nan", "bool", "pyfloat",
                                                                     "pyint"])
def test_unary(name, x):
    if name in ("log2", "log10"):
        x = np.abs(x) if isinstance(x, np.ndarray) and x.dtype != bool else x
    if name == "positive" and isinstance(x, np.ndarray) and x.dtype == bool:
        pytest.skip("jnp.positive rejects bool")
    _compare(name, x, tol=_tol(x) if name in ("log2", "log10", "sinc", "deg2rad", "radians", "rad2deg",
                                                 "degrees") else None)


BINARY = ["hypot", "copysign", "fmax", "fmin", "heaviside", "logaddexp2", "pow", "float_power", "divmod"]


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("xy", [(XI, XI[::-1]), (H, 2.0), (NANS, F), (F, NANS[:, :1]), (3, BF)],
                         ids=["ii", "h-py", "nan", "bcast", "py-bf16"])
def test_binary(name, xy):
    x, y = xy
    if name in ("pow", "float_power") and isinstance(y, np.ndarray) and y.dtype.kind in "iu":
        y = np.abs(y)
    if name == "pow" and isinstance(x, np.ndarray) and x.dtype.kind == "f":
        x = np.abs(x)
    if name == "divmod" and (xy[0] is NANS or xy[1] is not NANS and np.isnan(np.asarray(xy[1], np.float32)).any()):
        pytest.skip("floor_divide/remainder of infinities: toolkit's existing ufuncs differ from JAX's")
    if name == "divmod" and isinstance(y, np.ndarray) and y.dtype.kind in "iu":
        y = np.where(y == 0, 1, y).astype(y.dtype)
    _compare(name, x, y, tol=_tol(x, y) if name not in ("fmax", "fmin", "copysign", "heaviside", "divmod") else None)


@pytest.mark.parametrize("xy", [(XI, XI[::-1]), (np.array([0, 0, 12, -18, 7], np.int32), np.array([0, 5, 8, 24, -21],
                                                                                                 np.int32)),
                                (U, np.uint8(6)), (np.int16(12), 18)])
def test_gcd_lcm(xy):
    _compare("gcd", *xy)
    _compare("lcm", *xy)


def test_modf_and_errors():
    _compare("modf", F, tol=1e-6)
    _compare("modf", XI)
    raises_like(lambda: tnp.gcd(F, F), lambda: jnp.gcd(F, F))
    raises_like(lambda: tnp.hypot(F + 1j, F), lambda: jnp.hypot(F + 1j, F))
    raises_like(lambda: tnp.fabs(F + 1j), lambda: jnp.fabs(F + 1j))


def test_nan_to_num_options_and_complex():
    _compare("nan_to_num", NANS, nan=-1.0, posinf=9.0, neginf=-9.0)
    c = NANS + 1j * NANS[::-1]
    _compare("nan_to_num", c.astype(np.complex64))


def test_select_and_piecewise():
    conds = [F < -1, F > 1]
    _compare("select", conds, [F * 2, XI], default=-1)
    _compare("select", conds, [1, 2.5])
    _compare("select", [BOOL], [H], default=np.float16(7))
    raises_like(lambda: tnp.select([BOOL], [F, F]), lambda: jnp.select([BOOL], [F, F]))
    raises_like(lambda: tnp.select([], []), lambda: jnp.select([], []))
    x = np.linspace(-3, 3, 13).astype(np.float32)
    for funcs in ([lambda v: v * 2, 7.0], [lambda v: v * 2, 7.0, lambda v: -v], [0, 1]):
        _check(tnp.piecewise(x, [x < 0, x > 1], funcs), jnp.piecewise(x, [x < 0, x > 1], funcs), tol=1e-6,
               weak=False)
    xi = np.arange(-3, 4, dtype=np.int32)
    _check(tnp.piecewise(xi, [xi < 0], [lambda v: v * 3, 2.7]), jnp.piecewise(xi, [xi < 0], [lambda v: v * 3, 2.7]))


def test_math_under_jit():
    f = toolkit.jit(lambda x, y: (tnp.hypot(x, y), tnp.log2(x * x + 1), tnp.gcd(x.astype(tnp.int32), 6),
                                  tnp.copysign(x, y), tnp.nan_to_num(x / 0.0)))
    g = lambda x, y: (jnp.hypot(x, y), jnp.log2(x * x + 1), jnp.gcd(x.astype(jnp.int32), 6),  # noqa: E731
                      jnp.copysign(x, y), jnp.nan_to_num(x / 0.0))
    _check(f(F, F[::-1]), g(F, F[::-1]), tol=1e-6)


# --- nan functions ------------------------------------------------------------

NAN_REDUCTIONS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@pytest.mark.parametrize("x", [NANS, NANS.astype(np.float16), XI], ids=["nan32", "nan16", "i32"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (1, True), ((0, 1), True)])
def test_nan_reductions(name, x, axis, keepdims):
    if name == "nanprod":
        x = np.where(np.isfinite(x), np.clip(x, -1.5, 1.5), x).astype(x.dtype)
    _compare(name, x, axis=axis, keepdims=keepdims, tol=_tol(x) if x.dtype != np.int32 or name in (
        "nanmean", "nanvar", "nanstd") else None)


def test_nan_reduction_options():
    _compare("nanvar", NANS, axis=1, ddof=1, tol=1e-5)
    _compare("nanstd", NANS, axis=0, ddof=3, tol=1e-5)
    _compare("nansum", NANS, axis=0, where=BOOL)
    _compare("nansum", NANS, axis=0, initial=2.0)
    _compare("nanmax", np.nan_to_num(NANS, posinf=0), axis=1, initial=5.0)
    _compare("nanmean", NANS, axis=1, where=BOOL, tol=1e-6)
    raises_like(lambda: tnp.nanmax(NANS, where=BOOL), lambda: jnp.nanmax(NANS, where=BOOL))


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("x", [NANS, F, XI])
def test_nan_arg_reductions(name, axis, x):
    _compare(name, x, axis=axis)
    _compare(name, x, axis=axis, keepdims=True)


@pytest.mark.parametrize("name", ["nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_cumulative(name, axis):
    x = np.where(np.isfinite(NANS), np.clip(NANS, -1.2, 1.2), NANS).astype(np.float32)
    _compare(name, x, axis=axis, tol=1e-5)
    _compare(name, XI % 3, axis=axis)
    _compare(name, BOOL, axis=axis)


def test_nan_functions_under_jit():
    f = toolkit.jit(lambda x: (tnp.nanmean(x, 0), tnp.nanargmax(x, 1), tnp.nanstd(x), tnp.nancumsum(x, 1)))
    _check(f(NANS), (jnp.nanmean(NANS, 0), jnp.nanargmax(NANS, 1), jnp.nanstd(NANS), jnp.nancumsum(NANS, 1)),
           tol=1e-5)


# --- statistics ---------------------------------------------------------------

S = RNG.standard_normal((5, 6, 3)).astype(np.float32)
S_NAN = S.copy()
S_NAN[0, 0, :] = np.nan
S_NAN[1, 2, 1] = np.nan


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile(name, method):
    q = np.array([0.0, 0.25, 0.5, 0.9, 1.0], np.float32)
    # all-NaN and partly NaN slices along every reduced axis set below
    _compare(name, S_NAN, q, axis=1, method=method, keepdims=True, tol=1e-6)
    _compare(name, S_NAN, 0.3, axis=(0, 2), method=method, tol=1e-6)
    _compare(name, S, q, axis=None, method=method, tol=1e-6)


def test_percentile_median_and_dtypes():
    for x in (S_NAN, XI, H):
        _compare("percentile", x, np.array([10, 50, 90]), axis=0, tol=_tol(x))
        _compare("nanpercentile", x, 25.0, axis=-1, tol=_tol(x))
        _compare("median", x, axis=0, tol=_tol(x))
        _compare("nanmedian", x, axis=None, keepdims=True, tol=_tol(x))
    raises_like(lambda: tnp.quantile(S, 0.5, method="foo"), lambda: jnp.quantile(S, 0.5, method="foo"))
    raises_like(lambda: tnp.quantile(S, np.ones((2, 2)) / 2), lambda: jnp.quantile(S, np.ones((2, 2)) / 2))
    f = toolkit.jit(lambda x: tnp.nanquantile(x, tnp.asarray([0.1, 0.9]), axis=1))
    _check(f(S_NAN), jnp.nanquantile(S_NAN, jnp.asarray([0.1, 0.9]), axis=1), tol=1e-6)


@pytest.mark.parametrize("case", [
    dict(), dict(axis=1), dict(axis=0, keepdims=True), dict(weights=np.abs(F) + 0.1),
    dict(axis=1, weights=np.arange(1, 6, dtype=np.float32)), dict(axis=0, weights=np.arange(1, 5), returned=True),
    dict(axis=None, returned=True), dict(axis=(0, 1), returned=True),
])
def test_average(case):
    for x in (F, XI):
        _compare("average", x, tol=1e-5, **case)


def test_average_errors_ptp_bincount_digitize():
    raises_like(lambda: tnp.average(F, weights=np.ones(5)), lambda: jnp.average(F, weights=np.ones(5)))
    raises_like(lambda: tnp.average(F, axis=0, weights=np.ones(5)), lambda: jnp.average(F, axis=0, weights=np.ones(5)))
    for x in (F, XI, U):
        _compare("ptp", x)
        _compare("ptp", x, axis=1, keepdims=True)
    labels = np.array([0, 3, 3, 1, 7, -2, 3], np.int32)
    _compare("bincount", labels, length=5)
    _compare("bincount", labels, length=9, weights=np.linspace(0, 1, 7).astype(np.float32), tol=1e-6)
    _compare("bincount", np.abs(labels), minlength=10)
    _compare("bincount", np.array([True, False, True]), length=3)
    _check(toolkit.jit(lambda v: tnp.bincount(v, length=8))(labels), jnp.bincount(labels, length=8))
    raises_like(lambda: tnp.bincount(F[0], length=3), lambda: jnp.bincount(F[0], length=3))
    bins = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], np.float32)
    for b in (bins, bins[::-1]):
        for right in (False, True):
            _compare("digitize", F, b, right=right)
            _compare("digitize", np.array([-0.5, 0.0, 3.0, 10.0], np.float32), b, right=right)


# --- shapes, index builders, products, signal ---------------------------------

def test_shape_helpers():
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    _compare("permute_dims", x, (2, 0, 1))
    _compare("matrix_transpose", x)
    _compare("unstack", x, axis=1)
    _compare("unstack", x)
    for a in (3.0, np.ones(3, np.float32), np.ones((2, 3), np.int32), x):
        _compare("atleast_3d", a)
    _check(tnp.atleast_3d(np.ones(2, np.float32), 1.0), jnp.atleast_3d(np.ones(2, np.float32), 1.0))
    for axis, start in ((2, 0), (0, 3), (1, -1), (-1, 1)):
        _compare("rollaxis", x, axis, start)
    a, b = np.ones((2, 2), np.float32), np.zeros((2, 3), np.int32)
    _compare("block", [[a, b], [b[:, :2] + 1, np.full((2, 3), 5.0, np.float32)]])
    _compare("block", [np.ones(2, np.float32), 3.0, np.arange(3, dtype=np.int32)])
    _compare("block", np.ones(3, np.float32))
    raises_like(lambda: tnp.matrix_transpose(np.ones(3)), lambda: jnp.matrix_transpose(np.ones(3)))
    raises_like(lambda: tnp.unstack(np.float32(1)), lambda: jnp.unstack(np.float32(1)))
    for name in ("cumulative_sum", "cumulative_prod"):
        _compare(name, XI[0] % 4, include_initial=True)
        _compare(name, F, axis=1, include_initial=True, tol=1e-5)
        _compare(name, BOOL, axis=0)
        _compare(name, H, axis=-1, dtype=np.float32, tol=1e-2)
        raises_like(lambda n=name: getattr(tnp, n)(F), lambda n=name: getattr(jnp, n)(F))


def test_index_builders():
    _compare("indices", (2, 3))
    _compare("indices", (2, 3, 1), dtype=np.int8)
    _compare("indices", (3, 2), sparse=True)
    for n, k, m in ((4, 0, None), (4, 1, None), (3, -1, 5), (5, 2, 2)):
        _compare("tril_indices", n, k, m)
        _compare("triu_indices", n, k, m)
    _compare("tril_indices_from", np.ones((3, 4)), 1)
    _compare("triu_indices_from", np.ones((4, 3)), -1)
    _compare("diag_indices", 3)
    _compare("diag_indices", 4, 3)
    _compare("diag_indices_from", np.ones((3, 3, 3)))
    raises_like(lambda: tnp.diag_indices_from(np.ones((3, 4))), lambda: jnp.diag_indices_from(np.ones((3, 4))))
    raises_like(lambda: tnp.tril_indices_from(np.ones(3)), lambda: jnp.tril_indices_from(np.ones(3)))


def test_products():
    a3 = RNG.standard_normal((4, 3)).astype(np.float32)
    b3 = RNG.standard_normal((4, 3)).astype(np.float32)
    _compare("cross", a3, b3, tol=1e-5)
    _compare("cross", a3[:, :2], b3, tol=1e-5)
    _compare("cross", a3[:, :2], b3[:, :2], tol=1e-5)
    _compare("cross", a3.T, b3.T, axis=0, tol=1e-5)
    _compare("cross", a3, b3.T, axisb=0, axisc=0, tol=1e-5)
    _compare("cross", XI[:, :3], XI[::-1, :3])
    raises_like(lambda: tnp.cross(F, F), lambda: jnp.cross(F, F))
    _compare("kron", XI[:2, :3], F[:3, :2], tol=1e-6)
    _compare("kron", np.arange(3, dtype=np.int32), XI[:2, :2])
    _compare("kron", np.float32(2), np.arange(3))
    for x in (np.arange(1, 5, dtype=np.int32), F[0]):
        _compare("vander", x, tol=1e-4)
        _compare("vander", x, 3, increasing=True, tol=1e-4)
    m = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    v = RNG.standard_normal((4,)).astype(np.float32)
    _compare("matvec", m, v, tol=1e-5)
    _compare("vecmat", m[:, :, 0], m, tol=1e-5)
    _compare("vecdot", m, v, tol=1e-5)
    _compare("vecdot", m, m[0], axis=-1, tol=1e-5)
    c = (m + 1j * m[::-1]).astype(np.complex64)
    _compare("vecdot", c, c, tol=1e-5)
    _compare("vecmat", c[:, :, 0], c, tol=1e-5)
    _compare("vecdot", XI, XI)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate(mode):
    a = RNG.standard_normal(7).astype(np.float32)
    v = RNG.standard_normal(3).astype(np.float32)
    for x, y in ((a, v), (v, a), (a, a[:4]), (np.arange(5), np.array([1, 2, 1]))):
        _compare("convolve", x, y, mode=mode, tol=1e-5)
        _compare("correlate", x, y, mode=mode, tol=1e-5)
    c = (a + 1j).astype(np.complex64)
    _compare("correlate", c, v, mode=mode, tol=1e-5)
    raises_like(lambda: tnp.convolve(a, v, mode="bad"), lambda: jnp.convolve(a, v, mode="bad"))
    raises_like(lambda: tnp.convolve(F, v), lambda: jnp.convolve(F, v))


def test_signal_helpers():
    xp = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    fp = np.array([1.0, -1.0, 3.0, 0.0], np.float32)
    x = np.linspace(-1, 5, 13).astype(np.float32)
    _compare("interp", x, xp, fp, tol=1e-6)
    _compare("interp", x, xp, fp, left=-5.0, right=7, tol=1e-6)
    _compare("interp", x, xp, fp, left="extrapolate", right="extrapolate", tol=1e-5)
    _compare("interp", x, xp, fp, period=3.0, tol=1e-5)
    _compare("interp", np.arange(5), np.arange(4), np.arange(4) * 2, tol=1e-6)
    raises_like(lambda: tnp.interp(x, xp, fp[:3]), lambda: jnp.interp(x, xp, fp[:3]))
    raises_like(lambda: tnp.interp(x, xp, fp, left="x"), lambda: jnp.interp(x, xp, fp, left="x"))
    _compare("ediff1d", XI)
    _compare("ediff1d", F, to_begin=np.array([-1.0, -2.0]), to_end=9, tol=1e-6)
    _compare("ediff1d", H, to_end=np.float16(3))
    for y in (F, XI, H):
        _compare("trapezoid", y, tol=_tol(y))
        _compare("trapezoid", y, dx=0.5, axis=0, tol=_tol(y))
        _compare("trapezoid", y, x=np.linspace(0, 1, 5).astype(np.float32) ** 2, tol=1e-5 if y is not H else 2e-2)
    p = np.cumsum(RNG.uniform(-3, 3, (3, 20)), axis=1).astype(np.float32)
    _compare("unwrap", p, tol=1e-5)
    _compare("unwrap", p.T, axis=0, tol=1e-5)
    _compare("unwrap", p, discont=4.0, tol=1e-5)
    _compare("isin", XI, np.array([0, 3, -2, 5]))
    _compare("isin", F, F[1], invert=True)
    _compare("isin", 3, XI)
    f = toolkit.jit(lambda a, b: (tnp.convolve(a, b, mode="same"), tnp.interp(a, xp, fp), tnp.isin(a, b),
                                  tnp.unwrap(a * 3), tnp.trapezoid(a)))
    a = F[0]
    _check(f(a, a[:3]), (jnp.convolve(a, a[:3], mode="same"), jnp.interp(a, xp, fp), jnp.isin(a, a[:3]),
                         jnp.unwrap(a * 3), jnp.trapezoid(a)), tol=1e-5)
