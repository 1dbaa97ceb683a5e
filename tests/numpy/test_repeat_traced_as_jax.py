"""``toolkit.numpy.repeat`` by a traced ``repeats`` array with ``total_repeat_length`` against ``jnp.repeat`` in
the same run: JAX's algorithm (run starts scattered, cumulative sums, a gather) gives JAX's values, dtypes and
weak types under ``jit`` and ``vmap`` and eagerly — cut and padded lengths, counts of zero, negative counts,
one count for every element, narrow count dtypes, ``axis=None``, scalars, empty axes — gradients with respect
to ``a``, and JAX's errors: a traced ``repeats`` without ``total_repeat_length``, counts that do not broadcast
to the axis, float counts, several counts for a scalar, a symbolic ``repeats`` with ``total_repeat_length``."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import export

from _oracle import assert_same_typed, raises_like

jax = pytest.importorskip("jax")
jnp = jax.numpy

A = np.arange(12, dtype=np.float32).reshape(3, 4) - 4.5
I16 = np.arange(6, dtype=np.int16).reshape(2, 3)

# name -> (a, repeats, axis, total_repeat_length)
CASES = {
    "axis0_padded": (A, np.array([1, 2, 0], np.int32), 0, 5),
    "axis0_cut": (A, np.array([1, 2, 0], np.int32), 0, 2),
    "axis1_zeros": (A, np.array([0, 3, 0, 2], np.int32), 1, 9),
    "leading_zero_count": (A, np.array([0, 0, 1, 2], np.int32), -1, 4),
    "negative_count": (A, np.array([-1, 2, 3, 1], np.int32), -1, 6),
    "one_count_for_all": (A, np.int32(2), 1, 7),
    "flattened_int8_counts": (A, np.array([2], np.int8), None, 30),
    "uint8_counts_int_array": (I16, np.array([1, 3], np.uint8), 0, 4),
    "total_zero": (A, np.array([1, 2, 0], np.int32), 0, 0),
    "empty_axis": (np.ones((2, 0), np.float32), np.zeros(0, np.int32), 1, 3),
    "weak_scalar_flattened": (2.0, np.array([2], np.int32), None, 3),
    "scalar_any_axis": (np.float32(-1.5), np.array([4], np.int32), 3, 2),
}


def _repeat_all(np_module):
    def run(*args):
        out = {}
        for (name, (_, _, axis, total)), a, r in zip(CASES.items(), args[::2], args[1::2]):
            out[name] = np_module.repeat(a, r, axis=axis, total_repeat_length=total)
        return out
    return run


def _flat_args():
    return [x for a, r, _, _ in CASES.values() for x in (a, r)]


def test_traced_repeats_values_dtypes_and_weak_types_under_jit():
    ours = toolkit.jit(_repeat_all(tnp))(*_flat_args())
    theirs = jax.jit(_repeat_all(jnp))(*_flat_args())
    for name in CASES:
        assert_same_typed(ours[name], theirs[name], what=name)


def test_concrete_array_repeats_eagerly():
    # A concrete array of counts with total_repeat_length takes the same path eagerly; without it, the counts
    # are static (JAX reads a concrete array's values).
    for name in ("axis0_padded", "negative_count", "one_count_for_all"):
        a, r, axis, total = CASES[name]
        assert_same_typed(tnp.repeat(a, tnp.asarray(r), axis=axis, total_repeat_length=total),
                          jnp.repeat(a, jnp.asarray(r), axis=axis, total_repeat_length=total), what=name)
    assert_same_typed(tnp.repeat(A, tnp.asarray([2, 0, 1]), axis=0), jnp.repeat(A, jnp.asarray([2, 0, 1]), axis=0))


@pytest.mark.x64
def test_traced_repeats_float64_int64():
    a, r = A.astype(np.float64), np.array([2, 0, 3], np.int64)

    def f(np_module):
        return lambda a, r: np_module.repeat(a, r, axis=0, total_repeat_length=6)
    assert_same_typed(toolkit.jit(f(tnp))(a, r), jax.jit(f(jnp))(a, r))


def test_vmap_over_repeats_and_over_a():
    counts = np.array([[1, 2, 0, 1], [0, 0, 4, 1], [3, 3, 3, 3]], np.int32)

    def f(np_module, vmap):
        def run(a, counts):
            by_counts = vmap(lambda r: np_module.repeat(a, r, axis=1, total_repeat_length=5))(counts)
            by_rows = vmap(lambda row, r: np_module.repeat(row, r, total_repeat_length=6))(a, counts)
            by_columns = vmap(lambda col: np_module.repeat(col, counts[0, :3], axis=0, total_repeat_length=3),
                              in_axes=1)(a)
            return by_counts, by_rows, by_columns
        return run
    ours = toolkit.jit(f(tnp, toolkit.vmap))(A, counts)
    theirs = jax.jit(f(jnp, jax.vmap))(A, counts)
    for o, t, what in zip(ours, theirs, ("by_counts", "by_rows", "by_columns")):
        assert_same_typed(o, t, what=what)


def test_gradient_with_respect_to_a():
    weights = np.linspace(0.5, 2.0, 8 * 4, dtype=np.float32).reshape(8, 4)

    def loss(np_module):
        return lambda a, r: np_module.sum(np_module.repeat(a, r, axis=0, total_repeat_length=8) ** 2 * weights)
    r = np.array([3, 0, 2], np.int32)  # cut-free, padded with the last row: its gradient gathers four rows
    ours = toolkit.jit(toolkit.grad(loss(tnp)))(A, r)
    theirs = jax.jit(jax.grad(loss(jnp)))(A, r)
    assert_same_typed(ours, theirs)


def test_traced_repeats_without_total_repeat_length_is_a_concretization_error():
    r = np.array([1, 2, 0], np.int32)
    with pytest.raises(jax.errors.ConcretizationTypeError, match="total number of repeats must be static"):
        jax.jit(lambda r: jnp.repeat(A, r, axis=0))(r)
    with pytest.raises(toolkit.errors.ConcretizationTypeError,
                       match=r"traced array with shape int32\[3\]\nWhen jit-compiling toolkit.numpy.repeat, the total "
                             "number of repeats must be static"):
        toolkit.jit(lambda r: tnp.repeat(A, r, axis=0))(r)


@pytest.mark.parametrize("a, r, axis", [
    (A, np.array([1, 2], np.int32), 0),  # counts that do not broadcast to the axis
    (A, np.array([1.0, 2.0, 0.0], np.float32), 0),  # float counts: JAX's indexer TypeError
    (np.float32(2), np.array([1, 2], np.int32), 0),  # several counts for a scalar
])
def test_errors_are_jax(a, r, axis):
    def call(np_module, jit):
        return lambda: jit(lambda r: np_module.repeat(a, r, axis=axis, total_repeat_length=4))(r)
    if a.ndim == 0 or r.dtype.kind == "f":
        raises_like(call(tnp, toolkit.jit), call(jnp, jax.jit))
    else:  # the broadcast's message is each library's own; the type is JAX's
        with pytest.raises(ValueError):
            call(jnp, jax.jit)()
        with pytest.raises(ValueError, match="cannot be broadcast"):
            call(tnp, toolkit.jit)()


def test_symbolic_repeats_with_total_repeat_length_is_jax_value_error():
    def f(np_module):
        def run(x):
            return np_module.repeat(x, x.shape[0], axis=0, total_repeat_length=3)
        return run
    with pytest.raises(ValueError, match="supported only when `total_repeat_length` is None"):
        jax.export.export(jax.jit(f(jnp)))(jax.ShapeDtypeStruct(jax.export.symbolic_shape("n"), np.float32))
    with pytest.raises(ValueError, match="supported only when `total_repeat_length` is None"):
        export.export(toolkit.jit(f(tnp)))(toolkit.ShapeDtypeStruct(export.symbolic_shape("n"), np.float32))
