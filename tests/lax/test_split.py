"""``toolkit.lax.split`` (JAX's ``split`` primitive) and the leaner gradients of issue 25 item 2.

Each lowering change keeps results equal to JAX's and gives XLA what JAX gives it:
``split`` transposes to one ``concatenate`` (pieces cut by ``slice`` transposed to a ``pad``
each), ``dot_general``'s transpose emits no identity ``transpose``, and ``softmax`` /
``log_softmax`` shift by ``stop_gradient(max)`` with no ``is_finite`` check.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import toolkit
from toolkit import lax
from toolkit.testing import lowered_text, spec

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.arange(24, dtype=np.float32).reshape(4, 6) / 7


def _ops(text: str, name: str) -> int:
    return len(re.findall(rf"stablehlo\.{name}\b", text))


@pytest.mark.parametrize("sizes,axis", [((2, 4), 1), ((1, 0, 3), 0), ((6,), -1), ((3, 1, 2), 1)])
def test_split_values_as_jax(sizes, axis):
    x = X if sum(sizes) == X.shape[axis] else X.T
    ours, theirs = lax.split(x, sizes, axis), jax.lax.split(x, sizes, axis)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_split_jit_lowering_is_one_slice_per_piece():
    text = lowered_text(lambda x: lax.split(x, (1, 2, 3), axis=1), spec((4, 6)))
    assert _ops(text, "slice") == 3
    assert "[0:4, 3:6]" in text


def test_split_grad_is_a_concatenate_as_jax():
    def loss(lib, x):
        pieces = lib.lax.split(x, (1, 2, 3), 1)
        return sum(((i + 1) * p * p).sum() for i, p in enumerate(pieces))

    np.testing.assert_allclose(np.asarray(toolkit.grad(lambda x: loss(toolkit, x))(X)),
                               np.asarray(jax.grad(lambda x: loss(jax, x))(X)), rtol=1e-6)
    text = lowered_text(toolkit.grad(lambda x: loss(toolkit, x)), spec((4, 6)))
    assert _ops(text, "concatenate") == 1 and _ops(text, "pad") == 0


def test_split_unused_piece_gets_zeros():
    g = toolkit.grad(lambda x: lax.split(x, (2, 4), 1)[1].sum())(X)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(jax.grad(lambda x: jax.lax.split(x, (2, 4), 1)[1].sum())(X)))


def test_split_jvp_and_vmap_as_jax():
    t = np.ones_like(X)
    ours = toolkit.jvp(lambda x: lax.split(x, (2, 4), 1), (X,), (t,))[1]
    theirs = jax.jvp(lambda x: jax.lax.split(x, (2, 4), 1), (X,), (t,))[1]
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for in_axes in (0, 1):
        ours = toolkit.vmap(lambda r: lax.split(r, (1, 3), 0), in_axes=in_axes)(X[:, :4] if in_axes == 0 else X[:4])
        theirs = jax.vmap(lambda r: jax.lax.split(r, (1, 3), 0), in_axes=in_axes)(X[:, :4] if in_axes == 0 else X[:4])
        for a, b in zip(ours, theirs):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_numpy_split_uses_the_primitive():
    text = lowered_text(toolkit.grad(lambda x: sum(p.sum() for p in toolkit.numpy.split(x, 3, axis=1))),
                        spec((4, 6)))
    assert _ops(text, "concatenate") == 1 and _ops(text, "pad") == 0
    # Indices out of order still follow numpy (empty pieces), through slices.
    for a, b in zip(toolkit.numpy.split(X, [4, 2], axis=1), np.split(X, [4, 2], axis=1)):
        np.testing.assert_array_equal(np.asarray(a), b)


@pytest.mark.parametrize("sizes,axis,message", [
    ((2, 3), 1, "Sum of sizes 5 must be equal to dimension 1"),
    ((-1, 7), 1, "Sizes passed to split must be nonnegative"),
    ((3, 3), 2, "axis 2 is out of bounds"),
])
def test_split_bad_input(sizes, axis, message):
    with pytest.raises(ValueError, match=message):
        lax.split(X, sizes, axis)


def test_dot_general_grad_has_no_identity_transpose():
    text = lowered_text(toolkit.grad(lambda x, w: (x @ w).sum()), spec((4, 8)), spec((8, 3)))
    assert _ops(text, "transpose") == 0
    # A batched matmul's gradient needs its transposes, no more than JAX's.
    def f(lib, a, b):
        return (lib.numpy.einsum("bij,bjk->bik", a, b) ** 2).sum()
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    ours = lowered_text(toolkit.grad(lambda a, b: f(toolkit, a, b), argnums=(0, 1)), spec(a.shape), spec(b.shape))
    theirs = jax.jit(jax.grad(lambda a, b: f(jax, a, b), argnums=(0, 1))).lower(a, b).as_text()
    assert _ops(ours, "transpose") <= _ops(theirs, "transpose")


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_gradient_structure_and_values_as_jax(fn):
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32)
    ours = toolkit.grad(lambda x: (getattr(toolkit.nn, fn)(x) * w).sum())(x)
    theirs = jax.grad(lambda x: (getattr(jax.nn, fn)(x) * w).sum())(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)
    text = lowered_text(toolkit.grad(lambda x: (getattr(toolkit.nn, fn)(x) * w).sum()), spec((3, 5)))
    assert _ops(text, "is_finite") == 0 and _ops(text, "select") == 0 and _ops(text, "compare") == 0


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_infinities_as_jax(fn):
    rows = np.array([[1.0, np.inf, 0.0], [-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 2.0]], np.float32)
    # NaN where JAX has NaN (a row holding +inf or only -inf), the same finite values elsewhere.
    np.testing.assert_allclose(np.asarray(getattr(toolkit.nn, fn)(rows)), np.asarray(getattr(jax.nn, fn)(rows)),
                               rtol=1e-6)
