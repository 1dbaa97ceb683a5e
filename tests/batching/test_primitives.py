"""Per-primitive batching rules compared with ``jax.vmap`` in the same run (table-driven over the families).

Each case is ``(name, f_toolkit, f_jax, args, in_axes variants)``; ``f_toolkit`` uses ``toolkit.lax`` and
``f_jax`` the same call on ``jax.lax``. Every in_axes variant is run with ``toolkit.jit(toolkit.vmap(...))``.
"""

import numpy as np
import pytest

import toolkit
from toolkit import lax

jax = pytest.importorskip("jax")
jl = jax.lax

rng = np.random.default_rng(0)
B = 3


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def batched(x, axis):
    """A batch of B variants of ``x`` stacked along ``axis``."""
    if x.dtype == bool:
        return np.stack([x ^ bool(i % 2) for i in range(B)], axis=axis)
    if np.issubdtype(x.dtype, np.integer) and x.dtype.kind == "i":  # indices: stay in bounds
        return np.stack([(x + i) % 3 for i in range(B)], axis=axis).astype(x.dtype)
    return np.stack([x + np.asarray(i, x.dtype) for i in range(B)], axis=axis)


def _prep(args, in_axes):
    return [a if ax is None else batched(a, ax) for a, ax in zip(args, in_axes)]


def same(f_tk, f_jax, args, in_axes, out_axes=0, rtol=2e-5, atol=2e-5):
    vals = _prep(args, in_axes)
    got = toolkit.jit(toolkit.vmap(f_tk, in_axes=in_axes, out_axes=out_axes))(*vals)
    want = jax.jit(jax.vmap(f_jax, in_axes=in_axes, out_axes=out_axes))(*vals)
    got_l, want_l = toolkit.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert np.asarray(g).shape == np.asarray(w).shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=atol)


x23, y23, x234 = f32(2, 3), f32(2, 3), f32(2, 3, 4)
i5 = np.array([3, 0, 2, 1, 4], np.int32)

GD = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
JGD = jl.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
SD = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
JSD = jl.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
idx = np.array([[2], [0], [2]], np.int32)

CASES = [
    # elementwise
    ("sin", lax.sin, jl.sin, [x23], [(0,), (1,), (-1,)]),
    ("add", lax.add, jl.add, [x23, y23], [(0, 0), (1, None), (None, 2), (0, 1)]),
    ("atan2", lax.atan2, jl.atan2, [x23, y23], [(1, 0)]),
    ("lt", lax.lt, jl.lt, [x23, y23], [(0, None)]),
    ("integer_pow", lambda x: lax.integer_pow(x, 3), lambda x: jl.integer_pow(x, 3), [x23], [(1,)]),
    ("convert", lambda x: lax.convert_element_type(x, np.int32), lambda x: jl.convert_element_type(x, np.int32),
     [x23 * 10], [(0,)]),
    ("select_n", lambda p, a, b: lax.select_n(p, a, b), lambda p, a, b: jl.select_n(p, a, b),
     [x23 > 0, x23, y23], [(0, None, None), (None, 1, 0), (1, 1, None)]),
    ("select_scalar", lambda p, a, b: lax.select_n(p, a, b), lambda p, a, b: jl.select_n(p, a, b),
     [np.array(True), x23, y23], [(0, None, 1), (0, None, None)]),
    ("clamp", lax.clamp, jl.clamp, [np.float32(-0.5), x23, np.float32(0.5)], [(None, 1, None), (0, 0, 0)]),
    ("bitcast", lambda x: lax.bitcast_convert_type(x, np.int32), lambda x: jl.bitcast_convert_type(x, np.int32),
     [x23], [(1,)]),
    # structural
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 5, 3), (0, 2)),
     lambda x: jl.broadcast_in_dim(x, (2, 5, 3), (0, 2)), [x23], [(0,), (2,)]),
    ("reshape", lambda x: lax.reshape(x, (6,)), lambda x: jl.reshape(x, (6,)), [x23], [(1,), (2,)]),
    ("transpose", lambda x: lax.transpose(x, (2, 0, 1)), lambda x: jl.transpose(x, (2, 0, 1)), [x234], [(1,), (3,)]),
    ("slice", lambda x: lax.slice(x, (0, 1), (2, 3), (1, 2)), lambda x: jl.slice(x, (0, 1), (2, 3), (1, 2)),
     [x23], [(0,), (2,)]),
    ("pad", lambda x, v: lax.pad(x, v, ((1, 0, 1), (0, 2, 0))), lambda x, v: jl.pad(x, v, ((1, 0, 1), (0, 2, 0))),
     [x23, np.float32(7)], [(1, None), (None, 0), (0, 0)]),
    ("concatenate", lambda a, b: lax.concatenate([a, b], 1), lambda a, b: jl.concatenate([a, b], 1),
     [x23, y23], [(0, None), (2, 1)]),
    ("rev", lambda x: lax.rev(x, (0, 2)), lambda x: jl.rev(x, (0, 2)), [x234], [(1,), (3,)]),
    ("dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, np.int32(1)), (1, 2)),
     lambda x, i: jl.dynamic_slice(x, (i, np.int32(1)), (1, 2)), [x23, np.int32(1)],
     [(0, None), (None, 0), (1, 0)]),
    ("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(1))),
     lambda x, u, i: jl.dynamic_update_slice(x, u, (i, np.int32(1))), [x23, f32(1, 2), np.int32(1)],
     [(0, None, None), (None, 1, None), (None, None, 0), (1, 0, 0)]),
    ("iota_add", lambda x: x + lax.iota(np.float32, 3), lambda x: x + jl.iota(np.float32, 3), [f32(3)], [(0,)]),
    # reductions
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), lambda x: jl.reduce_sum(x, (0, 2)), [x234], [(0,), (2,), (3,)]),
    ("reduce_max", lambda x: lax.reduce_max(x, (1,)), lambda x: jl.reduce_max(x, (1,)), [x234], [(1,)]),
    ("argmax", lambda x: lax.argmax(x, 1, np.int32), lambda x: jl.argmax(x, 1, np.int32), [x234], [(0,), (2,)]),
    ("reduce_generic", lambda x: lax.reduce((x, x), (np.float32(0), np.float32(1)),
                                           lambda a, b: (lax.add(a[0], b[0]), lax.mul(a[1], b[1])), (1,)),
     lambda x: jl.reduce((x, x), (np.float32(0), np.float32(1)),
                         lambda a, b: (jl.add(a[0], b[0]), jl.mul(a[1], b[1])), (1,)), [x23], [(0,), (2,)]),
    # linalg
    ("dot_general", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
     lambda a, b: jl.dot_general(a, b, (((1,), (0,)), ((), ()))), [x23, f32(3, 4)],
     [(0, None), (None, 1), (2, 0), (1, 2)]),
    ("dot_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
     lambda a, b: jl.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), [x234, f32(2, 4, 5)],
     [(1, None), (None, 2), (3, 0)]),
    # indexing
    ("gather", lambda x, i: lax.gather(x, i, GD, (1, 3)), lambda x, i: jl.gather(x, i, JGD, (1, 3)),
     [f32(4, 3), idx], [(0, None), (None, 0), (1, 1)]),
    ("gather_clip", lambda x, i: lax.gather(x, i, GD, (1, 3), mode="clip"),
     lambda x, i: jl.gather(x, i, JGD, (1, 3), mode="clip"), [f32(4, 3), idx + 1], [(None, 0), (2, 0)]),
    ("scatter_add", lambda x, i, u: lax.scatter_add(x, i, u, SD), lambda x, i, u: jl.scatter_add(x, i, u, JSD),
     [f32(4, 3), idx, f32(3, 3)], [(0, None, None), (None, 0, None), (None, None, 1), (1, 0, 0)]),
    ("scatter_max", lambda x, i, u: lax.scatter_max(x, i, u, SD), lambda x, i, u: jl.scatter_max(x, i, u, JSD),
     [f32(4, 3), idx, f32(3, 3)], [(None, 0, 2)]),
    # sorting
    ("sort", lambda x: lax.sort(x, 1), lambda x: jl.sort(x, 1), [x234], [(0,), (2,)]),
    ("sort_multi", lambda k, v: lax.sort((k, v), 0, num_keys=1), lambda k, v: jl.sort((k, v), 0, num_keys=1),
     [f32(5), f32(5)], [(0, None), (None, 0)]),
    ("top_k", lambda x: lax.top_k(x, 2), lambda x: jl.top_k(x, 2), [x234], [(0,), (3,)]),
    # windowed
    ("reduce_window", lambda x: lax.reduce_window_max(x, (2, 2), (1, 1), "SAME"),
     lambda x: jl.reduce_window(x, -np.inf, jl.max, (2, 2), (1, 1), "SAME"), [f32(4, 5)], [(0,), (2,)]),
    ("cumsum", lambda x: lax.cumsum(x, 1), lambda x: jl.cumsum(x, 1), [x234], [(1,)]),
    # convolution
    ("conv_lhs", lambda x, w: lax.conv(x, w, (1, 1), "SAME"), lambda x, w: jl.conv(x, w, (1, 1), "SAME"),
     [f32(2, 3, 5, 5), f32(4, 3, 3, 3)], [(0, None), (None, 0), (1, 4)]),
    ("conv_grouped", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=3),
     lambda x, w: jl.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=3),
     [f32(2, 3, 4, 4), f32(6, 1, 2, 2)], [(0, 0)]),
    # control flow
    ("cond", lambda p, x: lax.cond(p > 0, lambda v: v * 2, lambda v: -v, x),
     lambda p, x: jl.cond(p > 0, lambda v: v * 2, lambda v: -v, x), [np.float32(1), x23],
     [(None, 0), (0, None), (0, 1)]),
    ("switch", lambda i, x: lax.switch(i, [lambda v: v + 1, lax.sin, lax.cos], x),
     lambda i, x: jl.switch(i, [lambda v: v + 1, jl.sin, jl.cos], x), [np.int32(1), x23], [(0, None), (0, 0)]),
    ("while", lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (np.int32(0), x))[1],
     lambda n, x: jl.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5), (np.int32(0), x))[1],
     [np.int32(2), x23], [(None, 0), (0, None), (0, 1)]),
    ("fori", lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2 + 1, x),
     lambda x: jl.fori_loop(0, 3, lambda i, c: c * 2 + 1, x), [x23], [(1,)]),
    ("scan", lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs),
     lambda c, xs: jl.scan(lambda c, x: (c + x, c * x), c, xs), [f32(3), f32(4, 3)],
     [(0, None), (None, 1), (None, 0), (0, 2)]),
    ("cond_partial", lambda p, x, y: lax.cond(p > 0, lambda a, b: (a * 2, b), lambda a, b: (-a, b + 1), x, y),
     lambda p, x, y: jl.cond(p > 0, lambda a, b: (a * 2, b), lambda a, b: (-a, b + 1), x, y),
     [np.float32(1), x23, y23], [(None, 0, None), (None, None, 1)]),
    ("while_consts", lambda s, x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * s), (0, x))[1],
     lambda s, x: jl.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * s), (0, x))[1],
     [np.float32(0.5), x23], [(0, None), (None, 1)]),
    ("nested_loops", lambda n, xs: lax.fori_loop(0, n, lambda i, c: lax.scan(lambda h, x: (h * 0.5 + x, h), c, xs)[0],
                                                 xs[0]),
     lambda n, xs: jl.fori_loop(0, n, lambda i, c: jl.scan(lambda h, x: (h * 0.5 + x, h), c, xs)[0], xs[0]),
     [np.int32(2), f32(4, 3)], [(0, None), (None, 0), (0, 1)]),
    ("scatter_set", lambda x, i, u: lax.scatter(x, i, u, SD, unique_indices=True),
     lambda x, i, u: jl.scatter(x, i, u, JSD, unique_indices=True),
     [f32(4, 3), np.array([[2], [0]], np.int32), f32(2, 3)], [(1, None, None), (None, 0, 0)]),
    ("scatter_mul_min", lambda x, i, u: (lax.scatter_mul(x, i, u, SD), lax.scatter_min(x, i, u, SD)),
     lambda x, i, u: (jl.scatter_mul(x, i, u, JSD), jl.scatter_min(x, i, u, JSD)),
     [f32(4, 3), idx, f32(3, 3)], [(0, 0, None)]),
    ("gather_fill_both", lambda x, i: lax.gather(x, i, GD, (1, 3), mode="fill", fill_value=-1.0),
     lambda x, i: jl.gather(x, i, JGD, (1, 3), mode="fill", fill_value=-1.0), [f32(4, 3), idx * 2],
     [(0, 0), (1, None)]),
    ("reduce_prod_argmin", lambda x: (lax.reduce_prod(x, (0,)), lax.argmin(x, 0, np.int32)),
     lambda x: (jl.reduce_prod(x, (0,)), jl.argmin(x, 0, np.int32)), [x23], [(1,)]),
    # random bits
    ("rng_bit_generator", lambda k: lax.rng_bit_generator(k, (2, 3), np.uint32, lax.RandomAlgorithm.RNG_THREE_FRY),
     lambda k: jl.rng_bit_generator(k, (2, 3), np.uint32, jl.RandomAlgorithm.RNG_THREE_FRY),
     [np.array([1, 2, 3, 4], np.uint32)], [(0,)]),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_primitive(case):
    _, f_tk, f_jax, args, variants = case
    for in_axes in variants:
        same(f_tk, f_jax, args, in_axes)


def test_batched_init_values_loop_where_jax_refuses():
    """JAX raises for batched reduce_window/reduce init values; toolkit loops over the batch."""
    xs, inits = f32(3, 5), np.array([0, 1, 2], np.float32)
    for f_tk, f_jax in ((lambda x, v: lax.reduce_window(x, v, lax.add, (2,), (1,), "VALID"),
                         lambda x, v: jl.reduce_window(x, v, jl.add, (2,), (1,), "VALID")),
                        (lambda x, v: lax.reduce(x, v, lax.max, (0,)), lambda x, v: jl.reduce(x, v, jl.max, (0,)))):
        got = toolkit.jit(toolkit.vmap(f_tk))(xs, inits)
        want = np.stack([np.asarray(f_jax(x, v)) for x, v in zip(xs, inits)])
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
