"""``take_along_axis(..., mode="one_hot")`` against ``jax.numpy`` in the same run: JAX computes it as a contraction
with the indices' one-hot encoding rather than a gather, so out-of-range indices give 0 (negative ones wrap once
unless ``wrap_negative_indices=False``), a NaN or infinity in a row makes the row's results NaN, and the result is
strongly typed in the array's dtype. Values, dtypes and weak types eagerly and under ``jit``, broadcasting of
size-1 dimensions either side, ``axis=None``, every dtype kind, float64 and int64 indices under x64, gradients and
``vmap``, and JAX's errors."""

from __future__ import annotations

import types

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import assert_same_typed

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TOOLKIT = types.SimpleNamespace(np=tnp, ad=toolkit, lax=toolkit.lax)
JAX = types.SimpleNamespace(np=jnp, ad=jax, lax=jax.lax)

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
# In range, the last element, negative (wraps once), too large, too negative (stays negative): 0 for the last two.
ROW_INDICES = np.array([[[0, 3, -1, 5, -9]]])
# A row holding an infinity and one holding a NaN: 0 * inf and 0 * nan make every element taken from them NaN.
NONFINITE = np.array([[1.0, np.inf, 2.0], [np.nan, 1.0, 2.0], [-0.0, 1.0, 2.0]], np.float32)


def _one_hot(ns, arr, indices, axis, **kwargs):
    return ns.np.take_along_axis(arr, indices, axis, mode="one_hot", **kwargs)


def _cases(ns, a):
    """Every shape case on the float32 array ``a`` (one result each)."""
    return (
        _one_hot(ns, a, ROW_INDICES, 2),  # indices broadcast over the leading dimensions
        _one_hot(ns, a, np.array([[[0], [2], [-4]]]), 1),  # and over the trailing ones
        _one_hot(ns, a, np.zeros((1, 2, 4), np.int32), 1),  # a size-1 leading index dimension
        _one_hot(ns, a, np.array([[[1, 0, 2, 1]], [[2, 2, 0, 1]]]), 1),  # full leading and trailing dimensions
        _one_hot(ns, a, np.ones((2, 3, 1), np.int32), -1),
        _one_hot(ns, a, np.array([0, 23, -1, 24, -25]), None),  # flattened (the 1-D contraction)
        _one_hot(ns, a, ROW_INDICES, 2, wrap_negative_indices=False),  # negative indices give 0
        _one_hot(ns, a, ROW_INDICES, 2, fill_value=3.0),  # ignored
        _one_hot(ns, NONFINITE, np.array([[0, 2], [1, 1], [0, 0]]), 1),
        _one_hot(ns, a, np.zeros((2, 0, 4), np.int32), 1),  # an empty result
        _one_hot(ns, np.zeros((2, 0, 3), np.float32), np.zeros((2, 1, 3), np.int32), 1),  # an empty axis
    )


def _compare(ours, theirs, what):
    assert len(ours) == len(theirs), what
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert_same_typed(a, b, what=f"{what} [{i}]")


def test_values_and_shapes_as_jax():
    _compare(_cases(TOOLKIT, A), _cases(JAX, A), "eager")
    ours = toolkit.jit(lambda a: _cases(TOOLKIT, a))(A)
    theirs = jax.jit(lambda a: _cases(JAX, a))(A)
    _compare(ours, theirs, "jit")


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, "bfloat16", np.complex64])
def test_dtypes_as_jax(dtype):
    dtype = jnp.dtype(dtype)
    a = A.astype(dtype)
    indices = np.array([[[0, 2, -1, 7]], [[3, 3, 1, -2]]], np.int16)
    ours, theirs = _one_hot(TOOLKIT, a, indices, 2), _one_hot(JAX, a, indices, 2)
    assert_same_typed(ours, theirs, what=dtype.name)


def test_weakly_typed_arrays_give_strong_results_as_jax():
    # JAX's einsum with preferred_element_type drops the weak type (the gather modes keep it).
    def case(ns):
        weak = ns.lax.broadcast(ns.np.asarray(2.5), (3,))
        return ns.ad.jit(lambda w: (_one_hot(ns, w, np.array([0, 2, 5]), 0),
                                    ns.np.take_along_axis(w, np.array([0, 2]), 0)))(weak)
    _compare(case(TOOLKIT), case(JAX), "weak")


def _wide_indices(ns, a, indices):
    # JAX converts the indices to int32 before wrapping negative ones (modulo 2**32: 2**40 is 0, 2**32 + 1 is 1,
    # uint32's 2**32 - 1 is -1), for every mode; numpy constants and traced indices alike.
    return tuple(ns.np.take_along_axis(a, i, 2, mode=mode) for i in (indices, ns.np.asarray(indices))
                 for mode in ("one_hot", None, "clip"))


@pytest.mark.x64
def test_float64_and_int64_indices_as_jax():
    a = A.astype(np.float64)
    indices = np.array([[[0, -1, 2**40, 2**32 + 1, 2**31, -2**32 + 1]]], np.int64)
    _compare(_wide_indices(TOOLKIT, a, indices), _wide_indices(JAX, a, indices), "x64")


def test_uint32_indices_as_jax():
    indices = np.array([[[0, 2**32 - 1, 2**31, 3]]], np.uint32)
    _compare(_wide_indices(TOOLKIT, A, indices), _wide_indices(JAX, A, indices), "uint32")


def test_gradients_and_vmap_as_jax():
    weights = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    indices = np.array([[[1, 0, 2, 1]], [[2, 2, 0, 1]]])

    def case(ns):
        grad = ns.ad.grad(lambda a: (_one_hot(ns, a, indices, 1) * weights[:, :1]).sum())(A)
        per_slice = np.array([[[0, 1, -1, 2]], [[1, 1, 0, 0]], [[5, 0, 1, -3]]])
        batched = ns.ad.vmap(lambda a, i: _one_hot(ns, a, i, 0), in_axes=(1, 0))(A, per_slice)
        return ns.ad.jit(lambda: (grad, batched))() if ns is JAX else (grad, batched)
    _compare(case(TOOLKIT), case(JAX), "grad, vmap")
    _compare(toolkit.jit(lambda: case(TOOLKIT))(), jax.jit(lambda: case(JAX))(), "grad, vmap under jit")


@pytest.mark.parametrize("arr, indices, axis", [
    (A, ROW_INDICES.astype(np.float32), 2),  # float indices: TypeError
    (A, np.zeros((3, 4), np.int32), 1),  # ranks differ
    (A, np.zeros((1, 1, 2), np.int32), 1),  # shapes do not broadcast
    (A, np.zeros((1, 1, 1), np.int32), 3),  # axis out of range
    (A, np.zeros((2, 2), np.int32), None),  # axis=None takes 1-D indices
    (np.float32(3.0), np.int32(0), 0),  # a scalar has no axis
    (np.zeros((1,) * 52, np.float32), np.zeros((1,) * 52, np.int32), 51),  # JAX's limit on leading dimensions
])
def test_errors_as_jax(arr, indices, axis):
    with pytest.raises(Exception) as theirs:
        _one_hot(JAX, arr, indices, axis)
    with pytest.raises(theirs.type) as ours:
        _one_hot(TOOLKIT, arr, indices, axis)
    if "One Hot" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)
