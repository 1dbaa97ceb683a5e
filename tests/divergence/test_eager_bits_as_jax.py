"""Eager ``toolkit.numpy`` calls give JAX's bits: what a bit-for-bit comparison (the divergence sweep compares to
2e-6) found — programs XLA simplifies as a whole in JAX, and JAX's rules for constants' weak types, ``power``'s
integer exponents, ``round``, ``ediff1d`` and ``inner`` — each against JAX in this process."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.default_rng(0)
FLOATS = (RNG.standard_normal(3000) * 7).astype(np.float32)


def _same(ours, theirs):
    """Same dtype, weak type, shape and bits (NaNs equal)."""
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert bool(ours.weak_type) == bool(theirs.aval.weak_type), (ours.weak_type, theirs.aval.weak_type)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def _same_error(ours, theirs):
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(want.type):
        ours()


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.complex64, np.int32])
@pytest.mark.parametrize("divisor", [3, 7.5, 0.1, np.float32(3), np.array(3.0, np.float32), True])
def test_eager_division_by_a_scalar_is_jaxs_bit_for_bit(dtype, divisor):
    """JAX's jitted true_divide broadcasts the scalar in its program and XLA multiplies by its reciprocal
    there; toolkit's eager division did a true division (1 ulp off on a third of float32 quotients)."""
    x = FLOATS.astype(dtype)
    _same(tnp.asarray(x) / divisor, jnp.asarray(x) / divisor)
    _same(tnp.divide(x, divisor), jnp.divide(x, divisor))
    # Jitted, the scalar is a constant XLA folds: JAX's bits again (for complex numbers not the eager ones, in
    # JAX as here).
    _same(toolkit.jit(lambda a: a / divisor)(x), jax.jit(lambda a: a / divisor)(x))


def test_eager_division_of_a_scalar_by_an_array_is_jaxs():
    _same(3.0 / tnp.asarray(FLOATS), 3.0 / jnp.asarray(FLOATS))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("other", [3, 2.5, 0.1, -7])
def test_logaddexp_eager_is_one_program_as_jaxs_ufunc(name, other):
    """JAX's ufunc objects call a jit of their function: fused alike, rounded alike."""
    _same(getattr(tnp, name)(FLOATS, other), getattr(jnp, name)(FLOATS, other))
    _same(getattr(tnp, name)(other, FLOATS), getattr(jnp, name)(other, FLOATS))
    half = FLOATS.astype(np.float16)
    _same(getattr(tnp, name)(half, np.float16(2)), getattr(jnp, name)(half, np.float16(2)))


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "hypot", "arctan2", "true_divide", "power"])
@pytest.mark.parametrize("args", [(2.5, np.array([1, 2], np.int32)), (np.array([1, 2], np.int32), 2.5), (2.5, 3)],
                         ids=["float-ints", "ints-float", "scalars"])
def test_weak_types_of_constants_as_jax(name, args):
    """JAX's lax._const is weak only for a weak scalar: a weak array times a constant is strong
    (logaddexp2(2.5, int_array), hypot), where logaddexp, with no constant, stays weak."""
    _same(getattr(tnp, name)(*args), getattr(jnp, name)(*args))


@pytest.mark.parametrize("base", [2.5, np.array([1.5, -2.0, 0.0], np.float32), np.float16(2),
                                  np.array([1 + 1j, 2j, 0], np.complex64)], ids=["py", "f32", "f16", "c64"])
@pytest.mark.parametrize("exponent", [np.array([1, 2, 0], np.int32), np.array([[3], [0]], np.int8)],
                         ids=["i32", "i8-2d"])
def test_power_of_an_integer_exponent_is_lax_pow_unpromoted_as_jax(base, exponent):
    _same(tnp.power(base, exponent), jnp.power(base, exponent))
    _same(toolkit.jit(tnp.power)(base, exponent), jax.jit(jnp.power)(base, exponent))


def test_power_gradients_at_zero_as_jax():
    for f, g in [(lambda x: tnp.power(x, np.int32(0)), lambda x: jnp.power(x, np.int32(0))),
                 (lambda x: tnp.power(x, 0.0), lambda x: jnp.power(x, 0.0)),
                 (lambda x: tnp.power(x, np.int32(3)), lambda x: jnp.power(x, np.int32(3)))]:
        ours, theirs = float(toolkit.grad(f)(0.0)), float(jax.grad(g)(0.0))
        assert ours == theirs or (np.isnan(ours) and np.isnan(theirs))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.complex64])
@pytest.mark.parametrize("decimals", [0, 1, 2, 3, -1, 40])
def test_round_as_jax(dtype, decimals):
    """float16 scales in float32; complex parts round apart; decimals past the type's range change nothing."""
    x = (FLOATS[:500] * (1 + 1j if dtype == np.complex64 else 1)).astype(dtype)
    _same(tnp.round(x, decimals), jnp.round(x, decimals))
    _same(tnp.round(2.345, 2), jnp.round(2.345, 2))


def test_round_of_integers_and_booleans_as_jax():
    ints = np.array([15, 25, -35], np.int32)
    _same(tnp.round(ints, 1), jnp.round(ints, 1))
    _same_error(lambda: tnp.round(ints, -1), lambda: jnp.round(ints, -1))  # NotImplementedError
    _same_error(lambda: tnp.round(np.array([True]), 0), lambda: jnp.round(np.array([True]), 0))  # ValueError
    _same_error(lambda: tnp.round(ints, 1.5), lambda: jnp.round(ints, 1.5))  # TypeError: decimals is an index


def test_ediff1d_of_booleans_is_jaxs_type_error():
    b = np.array([True, False, True])
    _same_error(lambda: tnp.ediff1d(b), lambda: jnp.ediff1d(b))
    i = np.array([1, 4, 9], np.int32)
    _same(tnp.ediff1d(i, to_begin=-1, to_end=np.array([7, 8])), jnp.ediff1d(i, to_begin=-1, to_end=np.array([7, 8])))


@pytest.mark.parametrize("a, b", [(np.arange(3.0, dtype=np.float32), 3), (3, np.arange(3.0, dtype=np.float32)),
                                  (2.0, 3), (np.int8(2), np.arange(3.0, dtype=np.float32))])
def test_inner_with_a_scalar_multiplies_as_jax(a, b):
    _same(tnp.inner(a, b), jnp.inner(a, b))


_MIXED = {"int": 3, "float": 2.5, "bool": True, "np.bool_": np.bool_(True), "bools": np.array([True, False, True]),
          "ints": np.array([0, 2, -1], np.int32), "complexes": np.array([0, 1j, 1], np.complex64)}


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor", "power"])
@pytest.mark.parametrize("first", sorted(_MIXED))
def test_logical_ops_and_power_of_mixed_scalars_as_jax(name, first):
    """Logical ops promote before taking truth values (logical_and(3, True) is a weak bool, as in JAX); a Python
    bool exponent is a concrete integer (power(x, True) is x ** 1) and an integer power's constants are strong."""
    for second in _MIXED.values():
        x, y = _MIXED[first], second
        _same(getattr(tnp, name)(x, y), getattr(jnp, name)(x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.complex64, np.int32, np.uint8,
                                   np.bool_])
def test_square_is_jaxs_primitive_bit_for_bit(dtype):
    """jax.lax.square lowers to chlo.square, which squares a complex number as (a - b)(a + b) + 2abi: x * x
    (what toolkit's integer_pow gave) differed in the last bit on a third of complex64 values."""
    x = FLOATS[:600] + 1j * FLOATS[600:1200] if dtype == np.complex64 else FLOATS[:600]
    x = x.astype(dtype)
    _same(tnp.square(x), jnp.square(x))
    _same(toolkit.jit(tnp.square)(x), jax.jit(jnp.square)(x))
    if dtype != np.bool_:
        _same(toolkit.lax.square(x), jax.lax.square(x))
    _same(tnp.square(2.0), jnp.square(2.0))


def test_square_differentiates_as_jax():
    for at in (0.0, 1.5, -3.0):
        assert float(toolkit.grad(tnp.square)(at)) == float(jax.grad(jnp.square)(at))
    c, t = np.complex64(1 + 2j), np.complex64(1j)
    for ours, theirs in zip(toolkit.jvp(toolkit.lax.square, (c,), (t,)), jax.jvp(jax.lax.square, (c,), (t,))):
        _same(ours, theirs)
    _same(toolkit.vmap(toolkit.lax.square)(FLOATS[:5]), jax.vmap(jax.lax.square)(FLOATS[:5]))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.bool_])
def test_i0_is_jaxs_formula_bit_for_bit(dtype):
    """exp(|x|) * bessel_i0e(|x|), as JAX (toolkit evaluated its own Chebyshev series: ~4e-7 relative off)."""
    x = np.concatenate([[0.0, -0.0, 1.0], FLOATS[:500]]).astype(dtype)
    _same(tnp.i0(x), jnp.i0(x))
    _same(toolkit.jit(tnp.i0)(x), jax.jit(jnp.i0)(x))


def test_i0_derivative_is_0_at_0_as_jaxs_custom_jvp():
    assert float(toolkit.grad(tnp.i0)(0.0)) == float(jax.grad(jnp.i0)(0.0)) == 0.0
    assert float(toolkit.grad(toolkit.grad(tnp.i0))(0.0)) == float(jax.grad(jax.grad(jnp.i0))(0.0))
    for at in (1.5, -3.0, 20.0):  # elsewhere within an ulp (JAX's custom rule multiplies in another order)
        np.testing.assert_allclose(float(toolkit.grad(tnp.i0)(at)), float(jax.grad(jnp.i0)(at)), rtol=3e-7)


VARIANCE_ARGUMENTS = [dict(), dict(axis=0), dict(axis=(0, 2)), dict(axis=1, ddof=1), dict(ddof=2),
                      dict(axis=2, correction=1), dict(axis=1, keepdims=True), dict(axis=0, ddof=1.5)]


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
def test_eager_variance_divides_by_a_computed_count_as_jax(name):
    # JAX's var/std wrapper passes the correction to its jitted helper as an argument even when it is the default
    # 0, so the program divides by N - correction computed at run time; toolkit's divided by a constant, which XLA
    # rounds otherwise (6 of 14 var/std cases differed in the last bit).
    x = FLOATS[:315].reshape(5, 7, 9)
    for kwargs in VARIANCE_ARGUMENTS:
        if name.startswith("nan") and "correction" in kwargs:
            continue
        _same(getattr(tnp, name)(x, **kwargs), getattr(jnp, name)(x, **kwargs))


def test_dot_product_attention_is_jaxs_bit_for_bit():
    # Its products are einsums: in JAX's operand order (the two-operand contraction as JAX makes it) they are JAX's.
    q = FLOATS[:396].reshape(2, 6, 3, 11)
    for fn in (lambda lib, v: lib.nn.dot_product_attention(v, v, v),
               lambda lib, v: lib.nn.dot_product_attention(v, v[::-1], v, is_causal=True)):
        _same(fn(toolkit, q), fn(jax, q))
        _same(toolkit.jit(lambda v: fn(toolkit, v))(q), jax.jit(lambda v: fn(jax, v))(q))
