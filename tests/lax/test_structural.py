"""``jax.lax``'s wrappers in toolkit/lax/structural.py (``expand_dims``, ``squeeze``, ``collapse``,
``broadcast_to_rank``, ``full_like``, ``slice_in_dim``/``index_in_dim`` and their dynamic variants) checked
against ``jax.lax`` 0.10.2."""

import numpy as np
import pytest
from _oracle import assert_same as _same
from _oracle import is_weak as _weak
from _oracle import raises_like

import toolkit
import toolkit.lax as tl

jax = pytest.importorskip("jax")
jl = pytest.importorskip("jax.lax")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
XI = np.arange(60, dtype=np.int32).reshape(3, 4, 5)


@pytest.mark.parametrize("dims", [(0,), (-1,), (1, 3), (0, -1)])
@pytest.mark.parametrize("x", [X, XI])
def test_expand_dims(x, dims):
    _same(tl.expand_dims(x, dims), jl.expand_dims(x, dims))


@pytest.mark.parametrize("dims", [(), (1,), (-1,), (1, 3), (3, 1)])
def test_squeeze(dims):
    x = np.ones((3, 1, 4, 1), np.float32)
    _same(tl.squeeze(x, dims), jl.squeeze(x, dims))


@pytest.mark.parametrize("bad", [
    lambda m: m.expand_dims(np.ones(2), (0, -3)),
    lambda m: m.expand_dims(np.ones(2), (0, 0)),
    lambda m: m.expand_dims(np.ones(2), (5,)),
    lambda m: m.squeeze(np.ones((2, 1)), (0,)),
    lambda m: m.squeeze(np.ones((2, 1)), (1, 1)),
    lambda m: m.squeeze(np.ones((2, 1)), (2,)),
    lambda m: m.collapse(np.ones((2, 3, 4)), 2, 1),
    lambda m: m.index_in_dim(np.ones(3), 5),
    lambda m: m.index_in_dim(np.ones(3), -4),
    lambda m: m.dynamic_slice_in_dim(np.ones(3), -1, 1, allow_negative_indices=False),
])
def test_errors_match_jax(bad):
    raises_like(lambda: bad(tl), lambda: bad(jl))


@pytest.mark.parametrize("args", [(0, 2, 1, 0), (1, None, 2, 1), (-3, None, 1, 2), (None, -1, 1, 0),
                                  (0, 5, 2, -1)])
def test_slice_in_dim(args):
    start, limit, stride, axis = args
    _same(tl.slice_in_dim(X, start, limit, stride, axis), jl.slice_in_dim(X, start, limit, stride, axis))


@pytest.mark.parametrize("index", [0, 2, -1, -3])
@pytest.mark.parametrize("keepdims", [True, False])
def test_index_in_dim(index, keepdims):
    _same(tl.index_in_dim(XI, index, 0, keepdims), jl.index_in_dim(XI, index, 0, keepdims))
    _same(tl.index_in_dim(XI, index, 2, keepdims), jl.index_in_dim(XI, index, 2, keepdims))


@pytest.mark.parametrize("start", [0, 2, -1, -4, 7, -9, np.int32(1), np.uint32(3)])
def test_dynamic_slice_and_index_in_dim(start):
    _same(tl.dynamic_slice_in_dim(X, start, 2, 1), jl.dynamic_slice_in_dim(X, start, 2, 1))
    _same(tl.dynamic_index_in_dim(XI, start, 2, keepdims=False), jl.dynamic_index_in_dim(XI, start, 2, keepdims=False))
    # traced index, eager and under jit
    ours = toolkit.jit(lambda x, i: tl.dynamic_slice_in_dim(x, i, 3, axis=2))(X, np.asarray(start))
    _same(ours, jl.dynamic_slice_in_dim(X, np.asarray(start), 3, axis=2))
    ours = toolkit.jit(lambda x, i: tl.dynamic_index_in_dim(x, i, 1, False))(XI, np.asarray(start))
    _same(ours, jl.dynamic_index_in_dim(XI, np.asarray(start), 1, False))


@pytest.mark.parametrize("start", [0, 1, -1, -3, 9])
def test_dynamic_update_in_dim(start):
    upd = np.full((3, 2, 5), 7.0, np.float32)
    _same(tl.dynamic_update_slice_in_dim(X, upd, start, 1), jl.dynamic_update_slice_in_dim(X, upd, start, 1))
    ours = toolkit.jit(lambda x, u, i: tl.dynamic_update_slice_in_dim(x, u, i, axis=1))(X, upd, np.int32(start))
    _same(ours, jl.dynamic_update_slice_in_dim(X, upd, np.int32(start), axis=1))
    row = np.full((3, 5), -1, np.int32)
    _same(tl.dynamic_update_index_in_dim(XI, row, start, 1), jl.dynamic_update_index_in_dim(XI, row, start, 1))
    row = np.ones((1, 3), np.float32)
    z = np.zeros((4, 4), np.float32)
    _same(tl.dynamic_update_index_in_dim(z, row, start, 0), jl.dynamic_update_index_in_dim(z, row, start, 0))
    _same(tl.dynamic_update_index_in_dim(z, np.ones(3, np.float32), start, 0),
          jl.dynamic_update_index_in_dim(z, np.ones(3, np.float32), start, 0))


@pytest.mark.parametrize("args", [(0,), (1,), (0, 2), (1, 3), (-2,), (0, -1), (1, 1)])
def test_collapse(args):
    _same(tl.collapse(X, *args), jl.collapse(X, *args))


@pytest.mark.parametrize("x", [3.0, np.float32(2), np.ones((2, 3), np.int32), X])
@pytest.mark.parametrize("rank", [3, 4])
def test_broadcast_to_rank(x, rank):
    ours, theirs = tl.broadcast_to_rank(x, rank), jl.broadcast_to_rank(x, rank)
    _same(ours, theirs)
    assert _weak(ours) == _weak(theirs)


@pytest.mark.parametrize("case", [
    (np.ones((2, 3), np.float32), 3, None, None),
    (np.ones((2, 3), np.int32), 3.7, None, None),
    (np.ones((2,), np.float32), 2, np.int8, (4, 1)),
    (2.0, 5, None, None),
    (3, 1.5, None, (2,)),
    (np.ones(2, np.float16), -1, jnp.bfloat16, None),
])
def test_full_like(case):
    x, fill, dtype, shape = case
    ours, theirs = tl.full_like(x, fill, dtype, shape), jl.full_like(x, fill, dtype, shape)
    _same(ours, theirs)
    assert _weak(ours) == _weak(theirs)


def test_full_like_traced():
    ours = toolkit.jit(lambda x: tl.full_like(x, 4))(np.ones((2, 2), np.int16))
    _same(ours, jl.full_like(np.ones((2, 2), np.int16), 4))


# lax.dynamic_slice / dynamic_update_slice themselves wrap negative starts, as JAX's (allow_negative_indices=True by
# default): they clamped them to 0 before, a silently different slice for JAX code with x[-k:]-style starts.
@pytest.mark.parametrize("starts", [(0, 1, 2), (-1, -2, -3), (-3, 7, -9), (np.int32(-1), 0, np.int32(1)),
                                    (np.uint32(1), np.uint32(0), np.uint32(4))])
def test_dynamic_slice_and_update_wrap_negative_starts_as_jax(starts):
    _same(tl.dynamic_slice(X, starts, (2, 2, 2)), jl.dynamic_slice(X, starts, (2, 2, 2)))
    upd = np.full((2, 2, 2), 7.0, np.float32)
    _same(tl.dynamic_update_slice(X, upd, starts), jl.dynamic_update_slice(X, upd, starts))
    traced = [np.asarray(s) for s in starts]
    _same(toolkit.jit(lambda x, *s: tl.dynamic_slice(x, s, (2, 2, 2)))(X, *traced),
          jax.jit(lambda x, *s: jl.dynamic_slice(x, s, (2, 2, 2)))(X, *traced))
    _same(toolkit.jit(lambda x, u, *s: tl.dynamic_update_slice(x, u, s))(X, upd, *traced),
          jax.jit(lambda x, u, *s: jl.dynamic_update_slice(x, u, s))(X, upd, *traced))


def test_dynamic_slice_allow_negative_indices_per_dimension_and_errors_as_jax():
    starts = (np.int32(-1), np.int32(-1), np.int32(-1))
    for allow in (False, (True, False, True)):
        _same(toolkit.jit(lambda x, *s: tl.dynamic_slice(x, s, (1, 2, 2), allow_negative_indices=allow))(X, *starts),
              jax.jit(lambda x, *s: jl.dynamic_slice(x, s, (1, 2, 2), allow_negative_indices=allow))(X, *starts))
    raises_like(lambda: tl.dynamic_slice(X, (-1, 0, 0), (1, 2, 2), allow_negative_indices=False),
                lambda: jl.dynamic_slice(X, (-1, 0, 0), (1, 2, 2), allow_negative_indices=False))
    raises_like(lambda: tl.dynamic_slice(X, (0, 0), (1, 2, 2)), lambda: jl.dynamic_slice(X, (0, 0), (1, 2, 2)))


def test_gradient_through_a_negative_dynamic_slice_as_jax():
    def f(m):
        return lambda x, i: m.dynamic_slice(x, (i, 0, 1), (2, 3, 2)).sum() * 3.0
    ours = toolkit.grad(f(tl))(X, np.int32(-2))
    theirs = jax.grad(f(jl))(X, np.int32(-2))
    _same(ours, theirs)


@pytest.mark.parametrize("dimensions", [None, (0, 1, 2), (2, 0, 1), (1, 0, 2)])
def test_reshape_with_dimensions_as_jax(dimensions):
    _same(tl.reshape(X, (5, 12), dimensions), jl.reshape(X, (5, 12), dimensions))
    _same(toolkit.jit(lambda x: tl.reshape(x, (60,), dimensions=dimensions))(X),
          jax.jit(lambda x: jl.reshape(x, (60,), dimensions=dimensions))(X))
