"""jax.lax's array helpers (toolkit/lax/array_helpers.py, mulhi), each against JAX in the same run."""

import numpy as np
import pytest

import toolkit
from toolkit import lax

from _oracle import assert_same, assert_same_typed

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(0)


def test_rounding_method_is_jax_and_drives_round():
    assert {m.name: int(m) for m in lax.RoundingMethod} == {m.name: int(m) for m in jlax.RoundingMethod}
    x = np.array([0.5, 1.5, 2.5, -0.5], np.float32)
    for m in lax.RoundingMethod:
        assert_same(lax.round(x, m), jlax.round(x, jlax.RoundingMethod(int(m))))


@pytest.mark.parametrize("shapes", [((1,), (4,)), ((3, 1), (4,)), ((3, 1), (1, 4), (5, 1, 1)), ((2, 0), (1, 1)),
                                    ((),), ((), (3,))])
def test_broadcast_shapes(shapes):
    assert lax.broadcast_shapes(*shapes) == jlax.broadcast_shapes(*shapes)


def test_broadcast_shapes_errors():
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_shapes((3, 1), (4, 1))
    with pytest.raises(ValueError):
        jlax.broadcast_shapes((3, 1), (4, 1))
    with pytest.raises(TypeError, match="At least one shape"):
        lax.broadcast_shapes()
    with pytest.raises(TypeError, match="sequences of integers"):
        lax.broadcast_shapes((1.5, 2))


@pytest.mark.parametrize("shape,like", [((3,), (2, 3)), ((1, 3), (4, 3)), ((), (2, 2)), ((2, 1), (2, 5))])
def test_broadcast_like(shape, like):
    x = RNG.standard_normal(shape).astype(np.float32)
    y = np.zeros(like, np.int32)
    assert_same(lax.broadcast_like(x, y), jlax.broadcast_like(x, y))
    assert_same(toolkit.jit(lax.broadcast_like)(x, y), jax.jit(jlax.broadcast_like)(x, y))


def test_broadcast_like_error():
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_like(np.zeros((3,)), np.zeros((2, 4)))


@pytest.mark.parametrize("value", [1, 1.0, 1j, True, np.float16(1), np.zeros(2, np.uint8), np.int32, float,
                                   "float32", np.zeros(2, np.float64)])
def test_dtype(value):
    assert lax.dtype(value) == jlax.dtype(value)


@pytest.mark.x64
@pytest.mark.parametrize("value", [1, 1.0, np.int64, np.zeros(2, np.float64), "int64"])
def test_dtype_x64(value):
    assert lax.dtype(value) == jlax.dtype(value)


def test_dtype_of_arrays_and_errors():
    assert lax.dtype(toolkit.numpy.ones(3)) == np.float32
    with pytest.warns(UserWarning, match="Explicitly requested dtype int64"):
        assert lax.dtype(np.int64) == np.int32
    with pytest.raises(ValueError, match="Invalid argument to dtype"):
        lax.dtype(None)
    with pytest.raises(TypeError):
        lax.dtype(object())
    with pytest.raises(TypeError):
        jlax.dtype([1, 2])
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        lax.dtype([1, 2])


@pytest.mark.parametrize("shape,dtype", [((2, 3), np.float32), (4, np.int32), ((), np.bool_)])
def test_empty_is_jax_cpu_zeros(shape, dtype):
    ours = toolkit.jit(lambda: lax.empty(shape, dtype))()
    theirs = jax.jit(lambda: jlax.empty(shape, dtype))()
    assert_same(ours, theirs)
    assert "stablehlo.broadcast_in_dim" in toolkit.jit(lambda: lax.empty(shape, dtype)).lower().as_text() \
        or shape == ()


def test_index_take():
    src = RNG.standard_normal((5, 4, 3)).astype(np.float32)
    idxs = (np.array([0, 4, -1, 7], np.int32), np.array([1, 3, 0, 2], np.int32))
    assert_same(toolkit.jit(lambda s, i: lax.index_take(s, i, (0, 1)))(src, idxs), jlax.index_take(src, idxs, (0, 1)))
    assert_same(lax.index_take(src, idxs[:1], (2,)), jlax.index_take(src, idxs[:1], (2,)))
    with pytest.raises(ValueError, match="2 index arrays for 1 axes"):
        lax.index_take(src, idxs, (0,))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32,
                                   pytest.param(np.int64, marks=pytest.mark.x64),
                                   pytest.param(np.uint64, marks=pytest.mark.x64)])
def test_mulhi(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, size=64, dtype=dtype, endpoint=True)
    y = RNG.integers(info.min, info.max, size=64, dtype=dtype, endpoint=True)
    x[:4] = [info.min, info.max, 0, info.max]
    y[:4] = [info.min, info.max, info.max, 1]
    assert_same(toolkit.jit(lax.mulhi)(x, y), jax.jit(jlax.mulhi)(x, y))
    assert_same(lax.mulhi(x, y[:1].reshape(())), jlax.mulhi(x, y[:1].reshape(())))


def test_mulhi_lowers_to_chlo_and_refuses_floats():
    text = toolkit.jit(lax.mulhi).lower(np.ones(3, np.int32), np.ones(3, np.int32)).as_text()
    assert "chlo.mulhi" in text
    with pytest.raises(TypeError, match="mulhi"):
        lax.mulhi(np.ones(3, np.float32), np.ones(3, np.float32))
    # piecewise constant (JAX: ad.defjvp_zero): the JVP is a zero tangent
    out, t = toolkit.jvp(lambda x: lax.convert_element_type(
        lax.mulhi(lax.convert_element_type(x, np.int32), np.int32(7)), np.float32) + x,
        (np.float32([1, 2]),), (np.float32([1, 1]),))
    np.testing.assert_array_equal(t, [1, 1])


def _scatter_dnums():
    return lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))


def test_scatter_sub():
    x = RNG.standard_normal((5, 3)).astype(np.float32)
    idx = np.array([[0], [2], [0], [9]], np.int32)
    upd = RNG.standard_normal((4, 3)).astype(np.float32)
    jd = jlax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    assert_same(lax.scatter_sub(x, idx, upd, _scatter_dnums()), jlax.scatter_sub(x, idx, upd, jd), rtol=1e-6)
    xi = np.arange(15, dtype=np.uint32).reshape(5, 3)
    ui = np.full((4, 3), 7, np.uint32)
    assert_same(lax.scatter_sub(xi, idx, ui, _scatter_dnums()), jlax.scatter_sub(xi, idx, ui, jd))
    g = toolkit.jit(toolkit.grad(lambda u: lax.scatter_sub(x, idx, u, _scatter_dnums()).sum()))(upd)
    jg = jax.grad(lambda u: jlax.scatter_sub(x, idx, u, jd).sum())(upd)
    assert_same(g, jg)


@pytest.mark.parametrize("unique", [False, True])
def test_scatter_apply(unique):
    x = np.arange(1, 7, dtype=np.float32)
    idx = np.array([[1], [4], [9]] if unique else [[1], [4], [1], [1], [9]], np.int32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    jd = jlax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    shape = (idx.shape[0],)
    ours = toolkit.jit(lambda v: lax.scatter_apply(v, idx, lambda a: a * 2 + 1, dn, update_shape=shape,
                                                   unique_indices=unique))(x)
    theirs = jax.jit(lambda v: jlax.scatter_apply(v, idx, lambda a: a * 2 + 1, jd, update_shape=shape,
                                                  unique_indices=unique))(x)
    assert_same(ours, theirs)


@pytest.mark.parametrize("shape", [(), (3,), (2, 5), (2**31, 1)])
def test_shape_as_value(shape):
    ours, theirs = lax.shape_as_value(shape), jlax.shape_as_value(shape)
    assert type(ours) is type(theirs) or shape == ()
    assert_same(ours, theirs)


def test_shape_as_value_symbolic():
    from toolkit import export
    (b,) = export.symbolic_shape("b")
    exp = export.export(toolkit.jit(lambda x: lax.shape_as_value(x.shape)))(toolkit.ShapeDtypeStruct((b, 3),
                                                                                                       np.float32))
    np.testing.assert_array_equal(exp.call(np.zeros((4, 3), np.float32)), [4, 3])


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_stack_unstack(axis):
    xs = [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(4)]
    assert_same(toolkit.jit(lambda *a: lax.stack(a, axis))(*xs), jax.jit(lambda *a: jlax.stack(a, axis))(*xs))
    y = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    ours, theirs = toolkit.jit(lambda v: lax.unstack(v, axis))(y), jax.jit(lambda v: jlax.unstack(v, axis))(y)
    assert isinstance(ours, tuple) and len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert_same(o, t)


def test_stack_unstack_grads_and_errors():
    x = RNG.standard_normal((3, 2)).astype(np.float32)
    g = toolkit.jit(toolkit.grad(lambda v: (lax.stack(lax.unstack(v, 1), 0) ** 2).sum()))(x)
    jg = jax.grad(lambda v: (jlax.stack(jlax.unstack(v, 1), 0) ** 2).sum())(x)
    assert_same(g, jg, rtol=1e-6)
    with pytest.raises(TypeError, match="same shape"):
        lax.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="at least one"):
        lax.stack([])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack(x, 2)


@pytest.mark.parametrize("shape,reps", [((2, 2), (2, 3)), ((3,), (2,)), ((2, 1), (1, 3)), ((), ()), ((2,), (0,))])
def test_tile(shape, reps):
    x = RNG.integers(0, 9, shape).astype(np.int32)
    assert_same(toolkit.jit(lambda v: lax.tile(v, reps))(x), jax.jit(lambda v: jlax.tile(v, reps))(x))


def test_tile_errors_and_lowering():
    with pytest.raises(ValueError, match="len\\(reps\\) must be equal"):
        lax.tile(np.zeros((2, 2)), (2,))
    with pytest.raises(ValueError, match="non-negative"):
        lax.tile(np.zeros((2,)), (-1,))
    text = toolkit.jit(lambda v: lax.tile(v, (2, 3))).lower(np.zeros((2, 2), np.float32)).as_text()
    assert "tensor<2x2x3x2xf32>" in text  # JAX's reshape, broadcast_in_dim, reshape


@pytest.mark.parametrize("value", [2.0, 3, True, np.float64(2.5), np.int8(3), np.arange(3.0), np.ones((2, 2), np.int16)])
def test_stage_eagerly_keeps_dtype_and_weak_type(value):
    assert_same_typed(lax.stage(value), jlax.stage(value))
    assert isinstance(lax.stage(value), toolkit.Array)


def test_stage_in_traces_is_a_constant_or_the_value_itself():
    x = np.ones(2, np.float32)
    ours = toolkit.jit(lambda v: lax.stage(np.ones(2, np.float32)) * v).lower(x).as_text()
    theirs = jax.jit(lambda v: jlax.stage(np.ones(2, np.float32)) * v).lower(x).as_text()
    assert ours.replace("jit__lambda_", "jit__lambda") == theirs  # JAX folds a staged constant into a constant
    assert_same(toolkit.jit(lambda v: lax.stage(v) + lax.stage(1.0))(x), jax.jit(lambda v: jlax.stage(v) + 1.0)(x))
    assert_same(toolkit.vmap(lax.stage)(np.ones((2, 3))), jax.vmap(jlax.stage)(np.ones((2, 3))))
    assert_same(toolkit.grad(lambda v: lax.stage(v) * 2.0)(3.0), jax.grad(lambda v: jlax.stage(v) * 2.0)(3.0))
    for bad in ([1, 2], (1.0,), "a", None):
        with pytest.raises(TypeError, match="interpreting argument to stage"):
            lax.stage(bad)
        with pytest.raises(TypeError, match="interpreting argument to stage"):
            jlax.stage(bad)
