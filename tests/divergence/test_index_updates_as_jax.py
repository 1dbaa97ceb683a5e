"""``x.at[idx]`` updates and fills with values of another type, against JAX in this process (a pass of 11
index updates over the divergence sweep's inputs found these): JAX promotes the array and the update together,
scatters, and converts back; refuses add/multiply of booleans; wraps a Python int fill value; orders complex
numbers in min/max updates (real part, then imaginary part)."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

ARRAYS = {"u8": np.array([0, 1, 255, 5, 7], np.uint8), "i32": np.array([0, -1, 2**31 - 1, 5, -7], np.int32),
          "u32": np.array([0, 1, 2**32 - 1, 5, 7], np.uint32), "f32": np.array([0.5, -1.5, 2.5, 3, 4], np.float32)}
UPDATES = {
    "add": lambda m, x, v: m.asarray(x).at[2].add(v), "mul": lambda m, x, v: m.asarray(x).at[2].multiply(v),
    "repeated_add": lambda m, x, v: m.asarray(x).at[np.array([0, 0, 3])].add(v),
    "min": lambda m, x, v: m.asarray(x).at[2].min(v), "max": lambda m, x, v: m.asarray(x).at[1].max(v),
    "set": lambda m, x, v: m.asarray(x).at[1:3].set(v),
}


def _same(ours, theirs):
    assert (ours.dtype, ours.shape, bool(ours.weak_type)) == (theirs.dtype, theirs.shape, bool(theirs.aval.weak_type))
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("update", sorted(UPDATES))
@pytest.mark.parametrize("key", sorted(ARRAYS))
@pytest.mark.parametrize("value", [2.5, -2, np.int32(-7), np.float32(1e10), np.complex64(3 + 1j)], ids=repr)
def test_index_update_promotes_scatters_and_converts_back_as_jax(update, key, value):
    if update in ("add", "mul", "repeated_add", "set") and isinstance(value, np.complexfloating):
        pytest.skip("complex into a real array: JAX warns and drops the imaginary part (ComplexWarning)")
    _same(UPDATES[update](tnp, ARRAYS[key], value), UPDATES[update](jnp, ARRAYS[key], value))


def test_adding_or_multiplying_booleans_is_jaxs_type_error():
    x = np.array([True, False, True])
    for update in ("add", "multiply"):
        with pytest.raises(TypeError) as theirs:
            getattr(jnp.asarray(x).at[1], update)(True)
        with pytest.raises(TypeError) as ours:
            getattr(tnp.asarray(x).at[1], update)(True)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_a_python_int_fill_value_wraps_as_jax(dtype):
    x = np.arange(3, dtype=dtype)
    _same(tnp.asarray(x).at[5].get(mode="fill", fill_value=-2), jnp.asarray(x).at[5].get(mode="fill", fill_value=-2))
    _same(tnp.take(x, np.array([1, 7]), mode="fill", fill_value=-2),
          jnp.take(x, np.array([1, 7]), mode="fill", fill_value=-2))


COMPLEX = np.array([0, 1 + 1j, -1j, 2.5, np.inf, np.nan, -3 + 0j, 1e-30j, 7, 1j], np.complex64)


@pytest.mark.parametrize("update", ["min", "max"])
@pytest.mark.parametrize("value", [np.complex64(1 + 2j), np.complex64(1 - 2j), 2.5, np.complex64(complex(np.nan, 1)),
                                   np.float32(-np.inf)], ids=repr)
def test_min_max_updates_of_complex_arrays_order_as_jax(update, value):
    """Each index meets the update once, and index 1 three times (duplicates combine in order-free min/max)."""
    index = np.array([0, 1, 1, 2, 4, 5, 1, 9])
    ours = getattr(tnp.asarray(COMPLEX).at[index], update)(value)
    theirs = getattr(jnp.asarray(COMPLEX).at[index], update)(value)
    _same(ours, theirs)


def test_lax_scatter_min_max_of_complex_values_as_jax():
    from toolkit import lax

    dnums = dict(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    index = np.array([[1], [3], [1]])
    updates = np.array([1 + 1j, 1 - 1j, 1 + 5j], np.complex64)
    x = COMPLEX[:5]
    for name in ("scatter_min", "scatter_max"):
        ours = getattr(lax, name)(x, index, updates, lax.ScatterDimensionNumbers(**dnums))
        theirs = getattr(jax.lax, name)(x, index, updates, jax.lax.ScatterDimensionNumbers(**dnums))
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_multiply_updates_are_differentiable_as_jax():
    # scatter_mul had no JVP rule: jax's x.at[i].multiply(v) differentiates (in x always, in v with unique indices).
    x, v = np.arange(1.0, 6.0, dtype=np.float32), np.array([2.0, 3.0, 4.0], np.float32)
    repeated, unique = np.array([0, 2, 2]), np.array([0, 2, 4])
    cases = [
        lambda m, ad: ad.grad(lambda x: (m.asarray(x).at[repeated].multiply(v) ** 2).sum())(x),
        lambda m, ad: ad.jit(ad.grad(lambda x: (m.asarray(x).at[repeated].multiply(3.0) * x).sum()))(x),
        lambda m, ad: ad.grad(lambda x, v: (m.asarray(x).at[unique].multiply(v, unique_indices=True) * x).sum(),
                              (0, 1))(x, v),
        lambda m, ad: ad.jvp(lambda x, v: m.asarray(x).at[unique].multiply(v, unique_indices=True), (x, v),
                             (np.ones(5, np.float32), np.ones(3, np.float32))),
    ]
    for case in cases:
        ours, theirs = case(tnp, toolkit), case(jnp, jax)
        for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    for m, ad in ((tnp, toolkit), (jnp, jax)):
        with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
            ad.grad(lambda v: (m.asarray(x).at[repeated].multiply(v) ** 2).sum())(v)


def test_a_sequence_of_traced_values_as_updates_as_jax():
    # convert() went through numpy for a list or tuple, so x.at[0:2].set((a, b)) failed under jit.
    def case(m, x, a, b):
        return x.at[0:2].set((a, b)), x.at[1:3].add([a, 3.0]), x.astype("int32").at[0:2].multiply((2, b.astype("int32")))
    args = (np.zeros(3, np.float32), np.float32(1.5), np.float32(2.0))
    ours, theirs = toolkit.jit(lambda *a: case(tnp, *a))(*args), jax.jit(lambda *a: case(jnp, *a))(*args)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
