"""No silent divergence from JAX 0.10.2 (issue 23, item 2): each case runs in toolkit and in JAX in the same
process and compares values, dtypes, weak types and exception classes, with x64 off (JAX's default) and, where
64-bit matters, with x64 on (the ``x64`` marker)."""

import ml_dtypes
import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax as tlax

jax = pytest.importorskip("jax")
jnp = jax.numpy
jlax = jax.lax


def _same(ours, theirs, rtol=0.0):
    """Same shape, dtype, weak type and values (NaNs equal)."""
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert bool(ours.aval.weak_type) == bool(theirs.aval.weak_type), (ours.aval, theirs.aval)
    o, t = np.asarray(ours), np.asarray(theirs)
    if o.dtype.kind == "V":  # ml_dtypes' float8/int4 types: compare bits (NaNs equal)
        np.testing.assert_array_equal(o.reshape(-1).view(np.uint8), t.reshape(-1).view(np.uint8))
        return
    if rtol:
        np.testing.assert_allclose(o.astype(np.float64), t.astype(np.float64), rtol=rtol)
    else:
        np.testing.assert_array_equal(o, t)


def _same_error(ours, theirs):
    """Both raise, and toolkit's exception is an instance of the class JAX raises (or of its closest builtin
    base, for JAX's own classes)."""
    with pytest.raises(Exception) as want:
        theirs()
    expected = want.type
    builtin = next(c for c in expected.__mro__ if c.__module__ == "builtins")
    name = expected.__name__
    with pytest.raises(builtin) as got:
        ours()
    assert got.type.__name__ == name or name.startswith("JAX") or expected is builtin, (got.type, expected)
    return got.value


# --- Python ints that do not fit: OverflowError -----------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda m: m.array([2 ** 40]), lambda m: m.asarray(2 ** 40), lambda m: m.array([True, 2 ** 31]),
    lambda m: m.int8(300), lambda m: m.uint8(-1), lambda m: m.int8(-129), lambda m: m.array(300, m.int8),
])
def test_python_int_overflow(make):
    _same_error(lambda: make(tnp), lambda: make(jnp))


def test_ints_in_range_and_wrapping_numpy_values():
    for make in (lambda m: m.array([-2 ** 31]), lambda m: m.uint32(2 ** 32 - 1), lambda m: m.array([1.0, 2 ** 40]),
                 lambda m: m.int8(np.int32(300))):
        _same(make(tnp), make(jnp))


_NARROW_INT_CASES = [
    ("uint8 + 300", lambda m: m.asarray(np.arange(3, dtype=np.uint8)) + 300),
    ("uint8 + -1", lambda m: m.asarray(np.arange(3, dtype=np.uint8)) + -1),
    ("int16 - 70000", lambda m: m.asarray(np.arange(3, dtype=np.int16)) - 70000),
    ("maximum(uint8, 300)", lambda m: m.maximum(m.asarray(np.arange(3, dtype=np.uint8)), 300)),
    ("where(True, uint8, 300)", lambda m: m.where(True, m.asarray(np.arange(3, dtype=np.uint8)), 300)),
    ("300 * int8", lambda m: 300 * m.asarray(np.arange(3, dtype=np.int8))),
]


@pytest.mark.parametrize("case", _NARROW_INT_CASES, ids=[c[0] for c in _NARROW_INT_CASES])
def test_python_int_operand_wraps_to_a_narrow_int_as_in_jax(case):
    """A Python int operand must fit the default int type; it then converts to a narrower integer operand's type
    as that type does (wrapping), eagerly and under jit, on the first call and on the cached path."""
    _, make = case
    for _ in range(2):
        _same(make(tnp), make(jnp))
    _same(toolkit.jit(lambda: make(tnp))(), jax.jit(lambda: make(jnp))())


@pytest.mark.parametrize("big", [3_000_000_000, 2 ** 32 + 1, -(2 ** 31) - 1])
def test_python_int_operand_outside_the_default_int_overflows(big):
    for _ in range(2):
        _same_error(lambda: tnp.asarray(np.arange(3, dtype=np.uint32)) + big,
                    lambda: jnp.asarray(np.arange(3, dtype=np.uint32)) + big)


@pytest.mark.x64
def test_python_int_operand_with_x64():
    _same(tnp.asarray(np.arange(3, dtype=np.uint32)) + 3_000_000_000,
          jnp.asarray(np.arange(3, dtype=np.uint32)) + 3_000_000_000)
    _same(tnp.asarray(np.arange(3, dtype=np.uint8)) + 300, jnp.asarray(np.arange(3, dtype=np.uint8)) + 300)
    _same_error(lambda: tnp.asarray(np.arange(3, dtype=np.uint64)) + 2 ** 63,
                lambda: jnp.asarray(np.arange(3, dtype=np.uint64)) + 2 ** 63)


@pytest.mark.x64
def test_python_int_overflow_x64():
    _same(tnp.array([2 ** 40]), jnp.array([2 ** 40]))
    _same_error(lambda: tnp.int8(300), lambda: jnp.int8(300))


# --- scalar types -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "int8", "bfloat16", "float16", "uint16", "bool_", "complex64",
                                  "float8_e4m3fn", "int4"])
def test_scalar_types_are_callable(name):
    _same(getattr(tnp, name)(1), getattr(jnp, name)(1))
    _same(getattr(tnp, name)([1, 0]), getattr(jnp, name)([1, 0]))


def test_scalar_types_stand_for_dtypes():
    assert tnp.float32(1.5).dtype == tnp.float32 == np.float32 == np.dtype("float32")
    assert np.dtype(tnp.bfloat16) == ml_dtypes.bfloat16
    assert tnp.zeros(2, tnp.int8).dtype == np.int8
    assert tnp.float32("1.5") == 1.5
    assert tnp.bool is tnp.bool_ and tnp.single is tnp.float32
    assert hash(tnp.float32) == hash(np.float32)
    assert tnp.float32.itemsize == 4  # the dtype's attributes, beyond JAX


@pytest.mark.x64
def test_scalar_types_x64():
    _same(tnp.float64(1.5), jnp.float64(1.5))
    _same(tnp.int64(2 ** 40), jnp.int64(2 ** 40))


# --- logaddexp ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(np.inf, np.inf), (-np.inf, -np.inf), (np.inf, -np.inf), (1, 2), (1, 2.5),
                                  (np.array([1.0, np.nan, -np.inf]), 0.0), (np.float16(1), 2)])
def test_logaddexp(args):
    _same(tnp.logaddexp(*args), jnp.logaddexp(*args), rtol=1e-6)


# --- low-precision reductions accumulate in float32 ---------------------------------------------------------

@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16])
@pytest.mark.parametrize("fn", ["sum", "mean", "var", "std", "prod"])
def test_low_precision_reductions_accumulate_in_float32(dtype, fn):
    x = (np.arange(4096) % 7 * 0.1 + 0.5).astype(dtype)
    if fn == "prod":
        x = x[:16]
    _same(getattr(tnp, fn)(x), getattr(jnp, fn)(x), rtol=1e-2)
    _same(getattr(tnp, fn)(x.reshape(4, -1), axis=1), getattr(jnp, fn)(x.reshape(4, -1), axis=1), rtol=1e-2)
    # Exactly JAX's where f16 accumulation would be far off
    _same(getattr(tnp, fn)(x), getattr(jnp, fn)(x))


# --- JAX's custom derivatives: relu and abs at 0 ------------------------------------------------------------

def test_grad_relu_and_abs_at_zero():
    _same(toolkit.grad(toolkit.nn.relu)(0.), jax.grad(jax.nn.relu)(0.))
    _same(toolkit.grad(tnp.abs)(0.), jax.grad(jnp.abs)(0.))
    x = np.array([-2.0, 0.0, 3.0], np.float32)
    _same(toolkit.vmap(toolkit.grad(toolkit.nn.relu))(x), jax.vmap(jax.grad(jax.nn.relu))(x))
    _same(toolkit.jit(toolkit.grad(lambda v: tnp.abs(v).sum()))(x), jax.jit(jax.grad(lambda v: jnp.abs(v).sum()))(x))
    _same(toolkit.nn.relu(x), jax.nn.relu(x))


# --- cumulative sums keep small integer types -------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.bool_, np.float16, np.int32])
@pytest.mark.parametrize("fn", ["cumsum", "cumprod"])
def test_cumulative_dtypes(dtype, fn):
    x = np.array([1, 1, 0, 1], dtype)
    _same(getattr(tnp, fn)(x), getattr(jnp, fn)(x))
    _same(getattr(tnp, fn)(x, dtype=np.bool_), getattr(jnp, fn)(x, dtype=np.bool_))


# --- lax binary ops: scalars and size-1 operands ------------------------------------------------------------

@pytest.mark.parametrize("op", ["add", "mul", "max", "atan2", "eq", "lt", "pow"])
@pytest.mark.parametrize("shapes", [((3,), ()), ((3, 4), (1, 4)), ((3, 4), (1, 1)), ((), (2, 3)), ((3,), (1,))])
def test_lax_binary_broadcasts_scalars_and_size_one(op, shapes):
    a = np.arange(1, 1 + int(np.prod(shapes[0]))).reshape(shapes[0]).astype(np.float32)
    b = np.full(shapes[1], 2.0, np.float32)
    _same(getattr(tlax, op)(tnp.asarray(a), tnp.asarray(b)), getattr(jlax, op)(jnp.asarray(a), jnp.asarray(b)),
          rtol=1e-6)
    _same(getattr(tlax, op)(tnp.asarray(a), 2.0), getattr(jlax, op)(jnp.asarray(a), 2.0), rtol=1e-6)


@pytest.mark.parametrize("args", [
    lambda m: (m.ones((3, 4)), m.ones((4,))), lambda m: (m.ones((2, 3)), m.ones((3, 2))),
    lambda m: (m.ones(3), 1), lambda m: (m.ones(3, m.float16), 1.0), lambda m: (m.ones(3), [1.0, 1.0, 1.0]),
])
def test_lax_binary_refuses_what_jax_refuses(args):
    _same_error(lambda: tlax.add(*args(tnp)), lambda: jlax.add(*args(jnp)))


def test_lax_binary_broadcast_under_jit_grad_vmap():
    x = np.arange(3, dtype=np.float32)
    _same(toolkit.jit(lambda v: tlax.mul(v, 2.0))(x), jax.jit(lambda v: jlax.mul(v, 2.0))(x))
    _same(toolkit.grad(lambda v: tlax.mul(v, tnp.ones(1)).sum())(x), jax.grad(lambda v: jlax.mul(v, jnp.ones(1)).sum())(x))
    _same(toolkit.vmap(lambda v: tlax.sub(v, 1.0))(x), jax.vmap(lambda v: jlax.sub(v, 1.0))(x))


# --- power of integers with negative exponents ---------------------------------------------------------------

@pytest.mark.parametrize("args", [lambda m: (m.int32(2), -1), lambda m: (m.arange(3), -2),
                                  lambda m: (m.arange(3), m.array(-1)), lambda m: (m.arange(3), np.int8(-1))])
def test_integer_power_negative_raises(args):
    err = _same_error(lambda: tnp.power(*args(tnp)), lambda: jnp.power(*args(jnp)))
    assert "Integers cannot be raised to negative powers" in str(err)


def test_power_values():
    for args in [(np.arange(4), 3), (np.arange(4.0), -1), (np.array([True, False]), 2), (2.0, np.arange(3.0))]:
        _same(tnp.power(*args), jnp.power(*args), rtol=1e-6)


# --- low-precision dtypes: promotion errors and lowering ------------------------------------------------------

LOW = ["float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
       "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int2", "int4", "uint2", "uint4"]


@pytest.mark.parametrize("name", LOW)
def test_low_precision_promotion_as_jax(name):
    for other in ["int8", "uint8", "float32", "bfloat16", "float16", "bool", "int4", "float8_e5m2", "complex64", name]:
        try:
            want = jnp.promote_types(getattr(jnp, name), getattr(jnp, other))
        except Exception as e:  # noqa: BLE001 - the class is what is compared
            with pytest.raises(toolkit.errors.TypePromotionError):
                tnp.promote_types(getattr(tnp, name), getattr(tnp, other))
            assert type(e).__name__ == "TypePromotionError"
        else:
            assert tnp.promote_types(getattr(tnp, name), getattr(tnp, other)) == want, other
    for weak in (1, 1.0, 1j):
        try:
            want = (jnp.ones(2, getattr(jnp, name)) + weak).dtype
        except Exception:  # noqa: BLE001
            with pytest.raises(toolkit.errors.TypePromotionError):
                tnp.ones(2, getattr(tnp, name)) + weak
        else:
            assert (tnp.ones(2, getattr(tnp, name)) + weak).dtype == want, weak


@pytest.mark.parametrize("name", LOW)
def test_low_precision_types_lower_and_run(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    x = np.array([1, 0, 1, 1], dtype)
    ours = toolkit.jit(lambda v: v * 2 + np.array([0, 1, 0, 1], dtype))(x)
    theirs = jax.jit(lambda v: v * 2 + np.array([0, 1, 0, 1], dtype))(x)
    _same(ours, theirs)
    assert str(toolkit.jit(lambda v: v * 2).lower(x).as_text()).count("tensor<4x") >= 2


# --- static out-of-bounds indices clamp ---------------------------------------------------------------------

@pytest.mark.parametrize("idx", [5, -5, (1, 7), (-9, -9), (5, slice(None)), (Ellipsis, 10), (0, -5)])
def test_static_out_of_bounds_index_clamps(idx):
    x = np.arange(12).reshape(3, 4)
    _same(tnp.asarray(x)[idx], jnp.asarray(x)[idx])
    _same(toolkit.jit(lambda v: v[idx])(x), jax.jit(lambda v: v[idx])(x))


def test_index_into_empty_axis_raises():
    _same_error(lambda: tnp.zeros((0, 2))[0], lambda: jnp.zeros((0, 2))[0])


# --- lists refused by *_like and reductions ------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "sum", "prod", "max", "min", "mean", "var", "std", "any",
                                "all", "argmax", "argmin", "cumsum", "cumprod", "amax", "nonzero", "argwhere",
                                "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
                                "nancumsum"])
def test_lists_refused(fn):
    err = _same_error(lambda: getattr(tnp, fn)([1, 2]), lambda: getattr(jnp, fn)([1, 2]))
    checked = {"amax": "max"}.get(fn, fn)  # the name JAX's own check uses (amax is max there)
    assert str(err) == f"{checked} requires ndarray or scalar arguments, got <class 'list'> at position 0."


def test_full_like_list_refused():
    _same_error(lambda: tnp.full_like([1, 2], 3), lambda: jnp.full_like([1, 2], 3))


# --- exception classes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda m: m.reshape(m.ones(6), (4,)), lambda m: m.reshape(m.ones(6), (-1, 4)),
    lambda m: m.reshape(m.ones(6), (-1, -1)),
    lambda m: m.matmul(m.ones((2, 3)), m.ones((2, 3))), lambda m: m.matmul(m.ones(3), m.ones(2)),
    lambda m: m.matmul(m.ones((2, 2, 3)), m.ones((3, 3, 2))),
    lambda m: m.ones(3)[0, 0], lambda m: m.ones(3)[1.0], lambda m: m.ones(3)[np.array([1.0])],
    lambda m: m.ones(3)["a"], lambda m: m.ones(3)[..., ...],
])
def test_exception_classes(case):
    _same_error(lambda: case(tnp), lambda: case(jnp))


@pytest.mark.parametrize("fun", [lambda x: 1 if x > 0 else 2, lambda x: [1, 2, 3][x], lambda x: list(range(x)),
                                 lambda x: int(x), lambda x: np.asarray(x), lambda x: float(x)])
def test_tracer_error_classes(fun):
    with pytest.raises(Exception) as want:
        jax.jit(fun)(1)
    with pytest.raises(Exception) as got:
        toolkit.jit(fun)(1)
    assert got.type.__name__ == want.type.__name__
    assert isinstance(got.value, TypeError)
    assert getattr(toolkit.errors, got.type.__name__) is got.type


# --- weak types ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda m: m.full((2,), 1.0), lambda m: m.full((2,), 1), lambda m: m.full((2,), 1, m.float32),
    lambda m: m.full((2,), m.ones(())), lambda m: m.zeros(2), lambda m: m.full_like(1.0, 2),
    lambda m: m.zeros_like(1.0), lambda m: m.ones_like(m.ones(2)), lambda m: m.full_like(3, 2.5),
    lambda m: m.zeros_like(np.float64(1)),
])
def test_full_weak_types(make):
    _same(make(tnp), make(jnp))


def test_grad_of_python_floats_is_weak():
    _same(toolkit.grad(lambda x: x * x)(3.), jax.grad(lambda x: x * x)(3.))
    _same(toolkit.grad(lambda x: x * x)(tnp.float32(3.)), jax.grad(lambda x: x * x)(jnp.float32(3.)))
    _same(toolkit.jit(toolkit.grad(lambda x: x * x))(3.), jax.jit(jax.grad(lambda x: x * x))(3.))
    ours = toolkit.grad(lambda x, y: x * y, argnums=(0, 1))(3., np.float32(2.))
    theirs = jax.grad(lambda x, y: x * y, argnums=(0, 1))(3., np.float32(2.))
    for o, t in zip(ours, theirs):
        _same(o, t)


@pytest.mark.parametrize("case", [
    lambda L, m: L.fori_loop(0, 3, lambda i, c: c + 1., 0.),
    lambda L, m: L.fori_loop(0, 3, lambda i, c: c + i, 0),
    lambda L, m: L.fori_loop(0, 3, lambda i, c: c + i, 0.),
    lambda L, m: L.fori_loop(0, 3, lambda i, c: c + 1., m.float32(0)),
    lambda L, m: L.fori_loop(0, 3, lambda i, c: i, 0),
    lambda L, m: L.fori_loop(np.int32(0), np.int32(3), lambda i, c: c + i, 0),
])
def test_fori_loop_weak_types(case):
    _same(case(tlax, tnp), case(jlax, jnp))


# --- messages name toolkit's functions ----------------------------------------------------------------------

def test_messages_name_toolkit_functions():
    for call in (lambda: tnp.hypot(np.ones(2) + 1j, np.ones(2)), lambda: tnp.gcd(np.ones(2), np.ones(2)),
                 lambda: tnp.sum(np.ones(2), out=np.ones(())), lambda: tnp.block([]),
                 lambda: toolkit.jit(lambda m: tnp.nonzero(m))(np.ones(2))):
        with pytest.raises(Exception) as got:
            call()
        assert "jnp." not in str(got.value) and "jax.numpy" not in str(got.value)
        assert "toolkit.numpy." in str(got.value) or "toolkit" in str(got.value), str(got.value)


# --- the same with x64 on --------------------------------------------------------------------------------------

X64_CASES = [
    lambda m: m.logaddexp(1, 2), lambda m: m.logaddexp(m.inf, m.inf), lambda m: m.sum(m.ones(3, m.int8)),
    lambda m: m.cumsum(m.ones(3, bool)), lambda m: m.cumsum(m.ones(3, m.int8)), lambda m: m.full((2,), 1.0),
    lambda m: m.full((2,), 1), lambda m: m.mean(m.ones(4, m.float16)), lambda m: m.var(m.arange(4)),
    lambda m: m.sum(m.arange(5.), where=m.arange(5) > 1, initial=10.), lambda m: m.nonzero(m.arange(4), size=5),
    lambda m: m.unique(m.array([3, 1, 3]), size=4, fill_value=0), lambda m: m.arange(3)[7],
    lambda m: m.float64(1.5), lambda m: m.array([2 ** 40]),
]


@pytest.mark.x64
@pytest.mark.parametrize("i", range(len(X64_CASES)))
def test_cases_x64(i):
    ours, theirs = X64_CASES[i](tnp), X64_CASES[i](jnp)
    for o, t in zip(ours if isinstance(ours, tuple) else (ours,), theirs if isinstance(theirs, tuple) else (theirs,)):
        _same(o, t, rtol=1e-12)


@pytest.mark.x64
def test_grad_weak_and_overflow_x64():
    _same(toolkit.grad(lambda x: x * x)(3.), jax.grad(lambda x: x * x)(3.))
    _same_error(lambda: tnp.array([2 ** 64]), lambda: jnp.array([2 ** 64]))
    _same(tlax.add(tnp.ones(3, tnp.float64), 1.0), jlax.add(jnp.ones(3, jnp.float64), 1.0))


# --- weak types through promote_args_inexact ----------------------------------------------------------------

_INEXACT_CASES = [
    ("int32 / 2.0", lambda m, i: i / 2.0), ("int32 / 2", lambda m, i: i / 2),
    ("divide(int32, 2.0)", lambda m, i: m.divide(i, 2.0)), ("arctan2(int32, 2.0)", lambda m, i: m.arctan2(i, 2.0)),
    ("logaddexp(int32, 1.5)", lambda m, i: m.logaddexp(i, 1.5)), ("power(int32, 0.5)", lambda m, i: m.power(i, 0.5)),
    ("copysign(int32, -1.0)", lambda m, i: m.copysign(i, -1.0)), ("uint8 / 2.5", lambda m, i: i.astype(m.uint8) / 2.5),
]


@pytest.mark.parametrize("case", _INEXACT_CASES, ids=[c[0] for c in _INEXACT_CASES])
def test_int_array_with_python_float_is_a_weak_float_as_in_jax(case):
    """JAX's lattice: int32 joined with a weak float is a weak float, so ``int32_array / 2.0`` is weakly typed
    float32 (``int32 / 2`` is not: both are ints, and the default float is strong)."""
    _, make = case
    _same(make(tnp, tnp.asarray(np.arange(1, 4, dtype=np.int32))), make(jnp, jnp.asarray(np.arange(1, 4, dtype=np.int32))))


# --- division, remainder and booleans (found while speeding up numpy operands, 2026-11-27) ---------------------

_B, _C = np.array([True, False, True, False]), np.array([True, True, False, False])
_F = np.array([1.0, -1.0, 7.5, 0.3, 5.0, -0.0, 1.0, np.inf, 3.0, -7.0, 2.5, 0.0, -3.0], np.float32)
_G = np.array([0.1, 0.1, -2.0, 0.1, 0.0, 3.0, np.inf, 2.0, -np.inf, 0.0, -0.5, 0.0, -0.0], np.float32)
_I = {np.int8: (np.array([5, -5, 0, 7, -7, 3], np.int8), np.array([0, 3, 0, -2, -2, 3], np.int8)),
      np.int32: (np.array([5, -5, 0, 7, -7, 3], np.int32), np.array([0, 3, 0, -2, -2, 3], np.int32)),
      np.uint8: (np.array([5, 0, 7, 200, 3, 1], np.uint8), np.array([0, 0, 2, 7, 5, 1], np.uint8)),
      np.uint32: (np.array([5, 0, 7, 200, 3, 1], np.uint32), np.array([0, 0, 2, 7, 5, 1], np.uint32))}
_DIVISION_ARGS = {
    "bool arrays": (_B, _C), "bool and Python bool": (_B, True), "Python bools": (True, False),
    # 1.0 // 0.1 is 9 (numpy and JAX compute it from the remainder), not floor(1.0 / 0.1) = 10; by zero, +-0, inf
    "floats": (_F, _G), "Python ints": (7, 2), "Python int by zero": (-7, 0), "Python floats": (7.5, -2.0),
    "float and Python int": (_F, 2), **{f"{np.dtype(k).name} by zero": v for k, v in _I.items()},
}


def _outputs(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("name", ["add", "multiply", "floor_divide", "remainder", "mod", "fmod", "divmod", "power",
                                  "true_divide"])
@pytest.mark.parametrize("args", list(_DIVISION_ARGS.values()), ids=list(_DIVISION_ARGS))
def test_division_and_boolean_arithmetic_as_jax(name, args):
    """JAX's add and multiply are or and and on booleans; floor_divide, remainder, fmod, divmod and power take
    booleans as ints; an integer remainder by zero is 0; results of Python scalars stay weakly typed."""
    if name == "power" and args[0] is _F:
        pytest.skip("power's float cases are test_power_values'")
    with np.errstate(all="ignore"):
        ours, theirs = getattr(tnp, name)(*args), getattr(jnp, name)(*args)
    for o, t in zip(_outputs(ours), _outputs(theirs), strict=True):
        _same(o, t)
        assert np.signbit(np.asarray(o)).tolist() == np.signbit(np.asarray(t)).tolist()


@pytest.mark.parametrize("op", ["floordiv", "mod", "add", "mul"])
def test_division_operators_under_jit_and_vmap_as_jax(op):
    import operator

    fn = getattr(operator, op)
    x, y = (_F, _G) if op in ("floordiv", "mod") else (_B, _C)
    with np.errstate(all="ignore"):
        _same(toolkit.jit(fn)(x, y), jax.jit(fn)(x, y))
        _same(toolkit.vmap(fn)(tnp.asarray(x), tnp.asarray(y)), jax.vmap(fn)(jnp.asarray(x), jnp.asarray(y)))


def test_floor_divide_and_remainder_gradients_as_jax():
    x = _F[:4]
    for name in ("floor_divide", "remainder"):
        ours = toolkit.grad(lambda a: getattr(tnp, name)(a, 0.3).sum())(x)
        theirs = jax.grad(lambda a: getattr(jnp, name)(a, 0.3).sum())(x)
        _same(ours, theirs)
    _same(toolkit.grad(lambda a: tnp.divmod(a, 0.3)[1].sum())(x), jax.grad(lambda a: jnp.divmod(a, 0.3)[1].sum())(x))


def test_complex_floor_division_refused_as_jax():
    z = np.array([1 + 1j], np.complex64)
    for name in ("floor_divide", "divmod"):
        _same_error(lambda: getattr(tnp, name)(z, z), lambda: getattr(jnp, name)(z, z))


# --- complex order, complex truth, unsigned sign, one-program conversions (2026-11-27 sweep) -------------------

_Z = np.array([1 + 2j, 2 + 1j, 1 + 1j, 1 + 2j, 0j, -1j, 1e-30j, np.inf + 0j], np.complex64)
_W = np.array([2 + 1j, 1 + 2j, 1 + 2j, 1 + 2j, 0j, 1j, 0j, -np.inf + 1j], np.complex64)


@pytest.mark.parametrize("name", ["less", "less_equal", "greater", "greater_equal", "maximum", "minimum",
                                  "equal", "not_equal", "fmax", "fmin"])
def test_complex_comparisons_and_extrema_are_lexicographic_as_jax(name):
    _same(getattr(tnp, name)(_Z, _W), getattr(jnp, name)(_Z, _W))
    _same(toolkit.jit(getattr(tnp, name))(_Z, _W), jax.jit(getattr(jnp, name))(_Z, _W))


@pytest.mark.parametrize("name", ["lt", "le", "gt", "ge", "rem"])
def test_lax_refuses_complex_order_and_remainder_as_jax(name):
    # (a complex remainder reached XLA CPU, which crashed compiling it)
    _same_error(lambda: getattr(tlax, name)(_Z, _W), lambda: getattr(jlax, name)(_Z, _W))


@pytest.mark.parametrize("name", ["remainder", "fmod", "mod"])
def test_numpy_refuses_complex_remainders_as_jax(name):
    _same_error(lambda: getattr(tnp, name)(_Z, _W), lambda: getattr(jnp, name)(_Z, _W))


def test_lax_extrema_of_complex_numbers_as_jax():
    _same(tlax.max(_Z, _W), jlax.max(_Z, _W))
    _same(tlax.min(_Z, _W), jlax.min(_Z, _W))


@pytest.mark.parametrize("name", ["logical_not", "isinf", "isfinite", "isnan", "count_nonzero", "any", "all"])
def test_a_complex_number_is_true_when_either_part_is_as_jax(name):
    _same(getattr(tnp, name)(_Z), getattr(jnp, name)(_Z))


def test_complex_to_bool_as_jax():
    """``astype(bool)`` is the truth (either part nonzero); ``lax.convert_element_type`` keeps the real part."""
    _same(tnp.asarray(_Z).astype(bool), jnp.asarray(_Z).astype(bool))
    _same(tnp.astype(_Z, bool), jnp.astype(_Z, bool))
    with pytest.warns(np.exceptions.ComplexWarning):  # JAX's; toolkit's convert says nothing
        _same(tlax.convert_element_type(_Z, np.bool_), jlax.convert_element_type(_Z, np.bool_))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.int8, np.float32])
def test_sign_of_every_integer_kind_as_jax(dtype):
    values = np.array([0, 1, 7, 200 if dtype != np.int8 else -7], dtype)
    _same(tnp.sign(values), jnp.sign(values))
    _same(tlax.sign(values), jlax.sign(values))


@pytest.mark.parametrize("kw", [{}, {"dx": 0.5}, {"axis": 0}, {"x": np.arange(10.0) ** 2},
                                {"x": np.arange(3.0) ** 2, "axis": 0}], ids=["plain", "dx", "axis", "x", "x-axis"])
def test_trapezoid_rounds_as_jax(kw):
    """JAX sums first and takes half the ends off when the spacing is constant: in ill-conditioned sums (int32
    extremes in float32) another order of operations gives another answer (7.0 against JAX's 8.5)."""
    extremes = np.array([0, -1, 1, 5, -7, 2**31 - 1, -2**31, 3, 2, 7], np.int32)
    y = extremes if "axis" not in kw else np.random.RandomState(0).randn(3, 5).astype(np.float32)
    _same(tnp.trapezoid(y, **kw), jnp.trapezoid(y, **kw))


_F32 = np.array([0.0, -0.0, 1.5, -2.5, 3.0, np.inf, -np.inf, np.nan, 1e-30, 7.0], np.float32)
_BOOLS = np.roll(np.array([True, False, True, False, True, True, False, False, True, False]), 3)


@pytest.mark.parametrize("args", [(_F32, _BOOLS), (_BOOLS, _F32), (_BOOLS, 0), (_BOOLS, -2), (_BOOLS, np.inf),
                                  (np.array([1, 0, 3]), 0.0)],
                         ids=["f32*bool", "bool*f32", "bool,0", "bool,-2", "bool,inf", "int,0.0"])
@pytest.mark.parametrize("name", ["multiply", "divide", "add", "subtract"])
def test_eager_conversions_run_in_one_program_as_jax(name, args):
    """XLA simplifies ``x * convert(bool)`` to a select (``inf * False`` is 0, not IEEE's NaN) when the
    conversion and the operation are one program, as JAX's jitted ufuncs are; so they are here, on numpy and
    device operands alike."""
    if name == "subtract" and args[0] is _BOOLS and type(args[1]) is np.ndarray and args[1].dtype == bool:
        pytest.skip("boolean subtract is an error in both")
    with np.errstate(all="ignore"):
        _same(getattr(tnp, name)(*args), getattr(jnp, name)(*args))
        device = tuple(tnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
        _same(getattr(tnp, name)(*device), getattr(jnp, name)(*args))


@pytest.mark.parametrize("name", ["equal", "less", "greater_equal", "not_equal"])
@pytest.mark.parametrize("args", [(np.array([1, 2, 3], np.int32), 2.5), (2, 3), (2.0, np.array([1, 2, 3], np.int32)),
                                  (np.array([1.0, 2.0]), np.array([2.0, 1.0]))], ids=["int-float", "ints", "float-int", "arrays"])
def test_comparisons_of_weak_operands_are_weak_bools_as_jax(name, args):
    _same(getattr(tnp, name)(*args), getattr(jnp, name)(*args))


_ZS = np.array([0, 1 + 1j, -1j, 2.5, np.inf, np.nan, -3 + 0j, 1e-30j, 7, 1j, 0.5 + 1e-20j, 100j], np.complex64)


@pytest.mark.parametrize("name", ["sin", "cos", "sinc", "tan", "sinh", "cosh"])
def test_complex_sine_and_cosine_as_jax(name):
    """stablehlo.sine on XLA CPU loses a tiny imaginary part (sin(1e-30j) was 0): JAX's formula keeps it."""
    with np.errstate(all="ignore"):
        _same(getattr(tnp, name)(_ZS), getattr(jnp, name)(_ZS))


def test_complex_step_derivative_of_sine():
    h = 1e-20
    derivative = toolkit.jit(lambda x: tnp.sin(x + 1j * h).imag / h)(np.float32(0.5))
    np.testing.assert_allclose(float(derivative), np.cos(0.5), rtol=1e-6)


@pytest.mark.parametrize("value", [np.array([2, 0, -4], np.int32), np.array([True, False]), 2, 2.0,
                                   np.array([2], np.uint8), np.array([1 + 1j], np.complex64)],
                         ids=["int32", "bool", "python-int", "python-float", "uint8", "complex"])
def test_reciprocal_of_integers_is_a_float_as_jax(value):
    _same(tnp.reciprocal(value), jnp.reciprocal(value))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.bool_, np.int32, np.float16])
def test_cumulative_sum_promotes_narrow_integers_as_jax(dtype):
    values = np.array([100, 100, 100], dtype) if dtype != np.bool_ else np.array([True] * 3)
    _same(tnp.cumulative_sum(values), jnp.cumulative_sum(values))
    _same(tnp.cumulative_sum(values, include_initial=True), jnp.cumulative_sum(values, include_initial=True))
    _same(tnp.cumulative_prod(values), jnp.cumulative_prod(values))


def test_square_and_diff_of_booleans_as_jax():
    b = np.array([True, False, False, True])
    for name in ("square", "diff"):
        _same(getattr(tnp, name)(b), getattr(jnp, name)(b))
    _same(tnp.diff(b, n=2), jnp.diff(b, n=2))
    _same(tnp.square(True), jnp.square(True))


def test_the_divergence_sweep_compares_outcomes_and_prints_differences(capsys):
    """scripts/divergence_sweep.py (the whole sweep takes minutes: run it by hand, see its docstring)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "scripts" / "divergence_sweep.py"
    spec = importlib.util.spec_from_file_location("divergence_sweep", path)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    values = np.array([1.0, -0.0], np.float32)
    assert sweep._difference(sweep._outputs(tnp.asarray(values)), sweep._outputs(jnp.asarray(values))) is None
    zeros = np.array([0.0], np.float32)
    assert "sign bits" in sweep._difference(sweep._outputs(tnp.asarray(-zeros)), sweep._outputs(jnp.asarray(zeros)))
    assert "weak type" in sweep._difference(sweep._outputs(tnp.asarray(1.0)), sweep._outputs(jnp.float32(1.0)))
    assert not sweep._compare("add", ("f32", "f32"), (values, values))
    assert sweep._compare("no_such_function", ("f32",), (values,)) is False
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("name", ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"])
def test_shifts_take_booleans_as_ints_as_jax(name):
    b = np.array([True, False, True])
    for args in [(b, b), (True, b), (True, True), (b, 1), (np.array([8], np.uint8), np.array([1], np.uint8)),
                 (np.array([-8], np.int8), 1)]:
        _same(getattr(tnp, name)(*args), getattr(jnp, name)(*args))
    _same_error(lambda: getattr(tnp, name)(np.array([1.5]), 1), lambda: getattr(jnp, name)(np.array([1.5]), 1))


_X64_INEXACT_CASES = [("square", "bool"), ("floor_divide", "bool2"), ("remainder", "bool2"), ("power", "bool2"),
                      ("left_shift", "bool2"), ("divmod", "bool2"), ("rint", "int32"), ("unwrap", "int32"),
                      ("sin", "int32"), ("true_divide", "int32 by 2"), ("arctan2", "int32 twice"), ("sin", "3"),
                      ("reciprocal", "int32"), ("histogram", "int32"), ("linspace", "0, 10")]


@pytest.mark.x64
@pytest.mark.parametrize("name, inputs", _X64_INEXACT_CASES, ids=[f"{n}-{i}" for n, i in _X64_INEXACT_CASES])
def test_x64_result_types_as_jax(name, inputs):
    """With x64 on, integers up to 32 bits (and bools) become float32 where a function needs a float (JAX's
    to_inexact_dtype; 64-bit ones float64), except where JAX takes the default float (rint, unwrap); booleans
    become int32 where a function needs a number (to_numeric_dtype)."""
    b, i = np.array([True, False, True]), np.array([1, 2, 3], np.int32)
    args = {"bool": (b,), "bool2": (b, b), "int32": (i,), "int32 by 2": (i, 2), "int32 twice": (i, i), "3": (3,),
            "0, 10": (0, 10)}[inputs]
    ours, theirs = getattr(tnp, name)(*args), getattr(jnp, name)(*args)
    for o, t in zip(_outputs(ours), _outputs(theirs), strict=True):
        _same(o, t, rtol=1e-6)


@pytest.mark.x64
@pytest.mark.parametrize("name", ["argmax", "argmin", "argsort", "nanargmax", "nanargmin", "lexsort"])
def test_x64_indices_are_int64_as_jax(name):
    a = np.array([3.0, 1.0, 2.0, 1.0])
    args = ((a,),) if name == "lexsort" else (a,)
    _same(getattr(tnp, name)(*args), getattr(jnp, name)(*args))
    if name == "argsort":
        _same(tnp.argsort(a, descending=True), jnp.argsort(a, descending=True))


@pytest.mark.parametrize("name", ["log2", "log10"])
@pytest.mark.parametrize("kind", ["complex64", "float32", "float16", "bfloat16", "int32"])
def test_log2_and_log10_bit_for_bit_as_jax(name, kind):
    """log10 is log(x) times 1/log(10) rounded to the type (a division rounded differently in the last bit); a
    complex logarithm's parts are scaled each (log2(0j) was -inf+nanj)."""
    rs = np.random.RandomState(0)
    values = {"complex64": _ZS, "int32": np.array([1, 10, 100, 7], np.int32)}.get(
        kind, (np.abs(rs.randn(200)) * 100).astype(ml_dtypes.bfloat16 if kind == "bfloat16" else np.dtype(kind)))
    with np.errstate(all="ignore"):
        _same(getattr(tnp, name)(values), getattr(jnp, name)(values))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "nansum", "nanmax", "nanmin", "nanprod", "ptp", "amax"])
def test_reductions_of_weak_values_are_strong_as_jax(name):
    """JAX's reductions end in convert_element_type: ``sum(3)`` and the sum of a weakly typed array are strong."""
    for ours, theirs in ((3, 3), (2.5, 2.5), (tlax.full((3,), 2.0), jlax.full((3,), 2.0)),
                         (tlax.full((3,), 2), jlax.full((3,), 2))):
        _same(getattr(tnp, name)(ours), getattr(jnp, name)(theirs))


@pytest.mark.x64
@pytest.mark.parametrize("name", ["median", "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile",
                                  "average", "nanvar", "nanstd", "nanmean", "angle"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_])
def test_x64_statistics_result_types_as_jax(name, dtype):
    values = np.array([1, 5, 2, 8]).astype(dtype)
    extra = {"percentile": (30,), "nanpercentile": (30,), "quantile": (0.3,), "nanquantile": (0.3,)}.get(name, ())
    kwargs = {"weights": np.array([1, 2, 3, 4], np.int32)} if name == "average" else {}
    _same(getattr(tnp, name)(values, *extra, **kwargs), getattr(jnp, name)(values, *extra, **kwargs), rtol=1e-6)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isfinite", "logical_not", "isreal", "iscomplex"])
@pytest.mark.parametrize("value", [3, 2.5, 0, True, np.array([1.5, np.nan, np.inf], np.float32),
                                   np.array([True, False]), np.array([1, 0], np.int32), _ZS],
                         ids=["py-int", "py-float", "py-zero", "py-bool", "float32", "bool", "int32", "complex64"])
def test_predicates_have_jax_weak_types(name, value):
    """isnan is x != x (weak for a Python scalar); isinf compares with a strong infinity; is_finite keeps its
    operand's weak type; truth compares with a zero as weak as the value; isreal/iscomplex compare the imaginary
    part with a zero of its own type (a bool array's with False)."""
    with np.errstate(all="ignore"):
        _same(getattr(tnp, name)(value), getattr(jnp, name)(value))
