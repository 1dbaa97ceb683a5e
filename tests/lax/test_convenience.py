"""``toolkit.lax`` convenience wrappers (toolkit/lax/convenience.py) checked against ``jax.lax`` 0.10.2."""

import numpy as np
import pytest
from _oracle import raises_like

import toolkit
import toolkit.lax as tl
import toolkit.numpy as tnp

jax = pytest.importorskip("jax")
jl = pytest.importorskip("jax.lax")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
XI = np.arange(60, dtype=np.int32).reshape(3, 4, 5)


def _same(ours, theirs, rtol=0.0, atol=0.0):
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours.shape, ours.dtype, theirs.shape,
                                                                         theirs.dtype)
    if rtol or atol:
        cast = np.complex128 if np.iscomplexobj(ours) else np.float64
        np.testing.assert_allclose(ours.astype(cast), theirs.astype(cast), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(ours, theirs)


def _weak(x):
    return bool(getattr(x, "weak_type", False))


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
    lambda m: m.batch_matmul(np.ones((2, 3)), np.ones((2, 3, 4))),
    lambda m: m.batch_matmul(np.ones(3), np.ones(3)),
    lambda m: m.reciprocal(np.arange(3, dtype=np.int32)),
    lambda m: m.associative_scan(3, np.ones(3)),
    lambda m: m.associative_scan(m.add, (np.ones(3), np.ones(4))),
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


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16, np.int32, np.complex64])
def test_square_and_reciprocal(dtype):
    x = (np.arange(1, 7).reshape(2, 3) - 3.5).astype(dtype) if dtype != np.int32 else np.arange(-3, 3, dtype=dtype)
    _same(tl.square(x), jl.square(x))
    if dtype != np.int32:
        _same(tl.reciprocal(x), jl.reciprocal(x), rtol=1e-6)
    assert _weak(tl.square(2.0)) == _weak(jl.square(2.0))
    assert _weak(tl.reciprocal(2.0)) == _weak(jl.reciprocal(2.0))


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


@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_key_val(dimension):
    keys = RNG.integers(0, 4, (5, 6)).astype(np.int32)
    vals = RNG.standard_normal((5, 6)).astype(np.float32)
    for a, b in zip(tl.sort_key_val(keys, vals, dimension), jl.sort_key_val(keys, vals, dimension)):
        _same(a, b)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 2, 4, 1))])
def test_batch_matmul(shapes):
    a = RNG.standard_normal(shapes[0]).astype(np.float32)
    b = RNG.standard_normal(shapes[1]).astype(np.float32)
    _same(tl.batch_matmul(a, b), jl.batch_matmul(a, b), rtol=1e-5, atol=1e-5)
    ai, bi = (a * 3).astype(np.int32), (b * 3).astype(np.int32)
    _same(tl.batch_matmul(ai, bi), jl.batch_matmul(ai, bi))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp(dtype, axis, reverse):
    x = X.astype(dtype)
    x[0, 0, 0] = -np.inf
    tol = 1e-5 if dtype == np.float32 else 2e-2
    # JAX's cumlogsumexp rejects negative axes ("XLA operations do not allow negative axes"); toolkit's takes them.
    _same(tl.cumlogsumexp(x, axis, reverse), jl.cumlogsumexp(x, axis % 3, reverse), rtol=tol, atol=tol)


def test_cumlogsumexp_jit_and_errors():
    _same(toolkit.jit(lambda x: tl.cumlogsumexp(x, 1))(X), jl.cumlogsumexp(X, 1), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        tl.cumlogsumexp(XI)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_sum_and_max(n, reverse):
    x = RNG.integers(-5, 5, (n, 3)).astype(np.int32)
    _same(tl.associative_scan(tl.add, x, reverse=reverse), jl.associative_scan(jl.add, x, reverse=reverse))
    _same(tl.associative_scan(tl.max, x, reverse=reverse, axis=1),
          jl.associative_scan(jl.max, x, reverse=reverse, axis=1))
    b = x > 0
    _same(tl.associative_scan(tl.bitwise_or, b, reverse=reverse), jl.associative_scan(jl.bitwise_or, b, reverse=reverse))


def test_associative_scan_pytree_linear_recurrence():
    # h_t = a_t * h_{t-1} + b_t as an associative scan over (a, b) pairs.
    a = RNG.uniform(0.5, 1.0, (9, 4)).astype(np.float32)
    b = RNG.standard_normal((9, 4)).astype(np.float32)

    def op(m):
        def fn(x, y):
            return m.mul(y[0], x[0]), m.add(m.mul(y[0], x[1]), y[1])
        return fn

    ours = toolkit.jit(lambda a, b: tl.associative_scan(op(tl), (a, b), axis=0))(a, b)
    theirs = jl.associative_scan(op(jl), (a, b), axis=0)
    for o, t in zip(ours, theirs):
        _same(o, t, rtol=1e-5, atol=1e-6)
    ours = tl.associative_scan(lambda x, y: {"v": tl.add(x["v"], y["v"])}, {"v": b}, reverse=True, axis=-1)
    # JAX reverses before canonicalizing the axis (its rev rejects -1): compare with axis=1.
    _same(ours["v"], jl.associative_scan(lambda x, y: {"v": x["v"] + y["v"]}, {"v": b}, reverse=True, axis=1)["v"],
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 5, 7, 0])
def test_map(batch_size):
    xs = RNG.standard_normal((5, 3)).astype(np.float32)
    ys = np.arange(5, dtype=np.int32)

    def f(m):
        def fn(t):
            x, y = t
            return {"s": m.reduce_sum(x, (0,)) if m is tl else x.sum(), "y": y * 2}
        return fn

    ours = tl.map(f(tl), (xs, ys), batch_size=batch_size)
    theirs = jl.map(f(jl), (xs, ys), batch_size=batch_size)
    _same(ours["s"], theirs["s"], rtol=1e-5, atol=1e-6)
    _same(ours["y"], theirs["y"])
    ours = toolkit.jit(lambda xs: tl.map(lambda x: tnp.sin(x) * 2, xs, batch_size=batch_size))(xs)
    _same(ours, jl.map(lambda x: jnp.sin(x) * 2, xs, batch_size=batch_size), rtol=1e-6, atol=1e-6)
