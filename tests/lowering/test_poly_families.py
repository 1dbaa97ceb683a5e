"""Every primitive family under shape polymorphism: lowered once, specialized per concrete shape.

Each case is a function and symbolic argument specs. It is lowered once
(``jit(f).lower(specs)``), then the ``PolymorphicCompiled`` runs it at two or
three concrete sizes; results must equal the static ``toolkit.jit`` result at
the same shapes. Failure cases check that violated assumptions surface as the
shape assertion's message. When jax is importable, a few functions are also
exported by ``jax.export`` with the same symbolic spec: our module uses the same
dynamic ops, and after bind + refine our ``@main`` has the signature jaxlib's
``refine_polymorphic_shapes`` gives JAX's module.
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
import toolkit.lax as lax
import toolkit.nn as nn
import toolkit.numpy as tnp
from toolkit.core.shape_poly import InconclusiveDimensionOperation, SymbolicScope, symbolic_shape

_W43 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
_KERNEL = np.linspace(-1, 1, 12, dtype=np.float32).reshape(2, 1, 3, 2)

# family -> [(name, fun, specs, sizes)]; specs are comma-separated dimension texts (float32 unless
# "name:int32"), sizes are the values of the variables to run at.
_B = ({"b": 1}, {"b": 3}, {"b": 6})
_B2 = ({"b": 2}, {"b": 5})
_BC = ({"b": 2, "c": 3}, {"b": 4, "c": 1})

FAMILIES = {
    "elementwise": [
        ("arith", lambda x: (x * 2 + 1) / (tnp.abs(x) + 1) - x ** 2, "b, 4", _B),
        ("transcendental", lambda x: tnp.exp(x) + tnp.log1p(tnp.abs(x)) + tnp.tanh(x) + tnp.arctan2(x, x + 2),
         "b, 4", _B2),
        ("special", lambda x: lax.erf_inv(tnp.clip(x, -0.9, 0.9)) + lax.lgamma(tnp.abs(x) + 1)
         + lax.digamma(tnp.abs(x) + 1), "b, 4", _B2),
        ("integer", lambda x: lax.population_count(x) + lax.clz(x) + tnp.left_shift(x, 1)
         + (x % 3) + (x // 2), "b, 4:int32", _B2),
        ("compare_select", lambda x: tnp.where(x > 0, x, -x) + lax.select_n(x > 0.5, x, x * 3)
         + lax.clamp(np.float32(-0.5), x, np.float32(0.5)), "b, 4", _B2),
        ("convert_bitcast", lambda x: lax.bitcast_convert_type(x, np.int32).astype(np.float32) * 0
         + x.astype(np.int32).astype(np.float32) + lax.round(x), "b, 4", _B2),
        ("complex", lambda x: tnp.real(lax.complex(x, x) * lax.complex(x, -x)) + tnp.imag(lax.complex(x, x)),
         "b, 4", _B2),
        ("broadcast_two_vars", lambda x, y: x + y * 2, ("b, 1", "1, c"), _BC),
        ("size_as_value", lambda x: x * x.shape[0] + tnp.sum(x) / x.shape[0], "b, 4", _B),
    ],
    "structural": [
        ("reshape", lambda x: x.reshape(-1).reshape(x.shape[0], 2, 2).reshape(x.shape[0] * 4), "b, 4", _B),
        ("reshape_half", lambda x: x.reshape(x.shape[0] // 2, 8), "2*b, 4", _B2),
        ("transpose_rev", lambda x: lax.rev(x.T, (0,)), "b, 4", _B),
        ("concatenate", lambda x, y: tnp.concatenate([x, y, x], 0), ("b, 4", "c, 4"), _BC),
        ("pad", lambda x: lax.pad(x, np.float32(-1), [(1, 2, 1), (0, -1, 0)]), "b, 4", _B),
        ("iota_broadcast", lambda x: lax.broadcasted_iota(np.int32, (x.shape[0], 3), 0) + tnp.zeros(
            (x.shape[0], 1), np.int32), "b, 4", _B),
        ("expand_squeeze_stack", lambda x: tnp.stack([tnp.squeeze(tnp.expand_dims(x, 1), 1), x], 2), "b, 4", _B2),
        ("dynamic_slice_symbolic_size", lambda x: lax.dynamic_slice(
            x, (tnp.argmax(x[:, 0]).astype(np.int32), np.int32(1)), (x.shape[0] - 1, 2)), "b, 4", _B2),
        ("dynamic_update_slice", lambda x: lax.dynamic_update_slice(
            x, x[1:] * 2, (tnp.argmin(x[:, 0]).astype(np.int32), np.int32(0))), "b, 4", _B2),
    ],
    "slicing": [
        ("x[1:]", lambda x: x[1:], "b, 4", _B),
        ("x[:-1]", lambda x: x[:-1], "b, 4", _B),
        ("x[::2]", lambda x: x[::2], "b, 4", _B),
        ("x[::-1]", lambda x: x[::-1], "b, 4", _B),
        ("x[1::3]", lambda x: x[1::3], "b, 4", _B),
        ("x[-2:]", lambda x: x[-2:], "b, 4", _B),
        ("x[:2]", lambda x: x[:2], "b, 4", _B),
        ("x[1:-1]", lambda x: x[1:-1], "b, 4", _B),
        ("x[::-2]", lambda x: x[::-2], "b, 4", _B),
        ("x[-1:0:-1]", lambda x: x[-1:0:-1], "b, 4", _B),
        ("x[5:]", lambda x: x[5:], "b, 4", _B),
        ("x[b//2:]", lambda x: x[x.shape[0] // 2:], "b, 4", _B),
        ("x[-1]", lambda x: x[-1], "b, 4", _B),
        ("x[None, ..., ::2]", lambda x: x[None, ..., ::2], "4, b", _B),
        ("diff", lambda x: tnp.diff(x, n=2, axis=0), "b, 4", ({"b": 2}, {"b": 5})),
        ("lax.slice", lambda x: lax.slice(x, (1, 0), (x.shape[0], 4), (2, 1)), "b, 4", _B),
    ],
    "reductions": [
        ("sum_max_prod", lambda x: (tnp.sum(x, 0), tnp.max(x, 1), tnp.prod(x, 0)), "b, 4", _B),
        ("mean_var_std", lambda x: (tnp.mean(x), tnp.var(x, 0), tnp.std(x, 0, ddof=1)), "b, c", _BC[:1] + (
            {"b": 5, "c": 2},)),
        ("argmax_argmin", lambda x: (tnp.argmax(x, 0), tnp.argmin(x), tnp.argmax(x, 1)), "b, 4", _B),
        ("any_all_count", lambda x: (tnp.any(x > 0, 0), tnp.all(x > -1), tnp.count_nonzero(x > 0, 1)), "b, 4", _B),
        ("variadic_reduce", lambda x: lax.reduce((x, x * 2), (0.0, -np.inf),
                                                 lambda a, b: (a[0] + b[0], tnp.maximum(a[1], b[1])), (0,)),
         "b, 4", _B),
    ],
    "linalg": [
        ("matmul", lambda x: x @ _W43, "b, 4", _B),
        ("gram", lambda x: x.T @ x, "b, 4", _B),
        ("contract_two_vars", lambda x, y: x @ y, ("b, k", "k, c"), ({"b": 2, "k": 3, "c": 4},
                                                                    {"b": 1, "k": 5, "c": 2})),
        ("batched", lambda x: tnp.matmul(x, tnp.swapaxes(x, 1, 2)), "b, s, 4", ({"b": 2, "s": 3}, {"b": 1, "s": 5})),
        ("einsum", lambda x, y: tnp.einsum("bij,bjk->bik", x, y) + tnp.einsum("bij->b", x)[:, None, None],
         ("b, 2, 3", "b, 3, 4"), _B2),
        ("einsum_trace", lambda x: tnp.einsum("ii->", x) + tnp.trace(x), "b, b", _B),
        ("outer", lambda x: tnp.outer(x[:, 0], x[0]), "b, 4", _B),
    ],
    "convolution": [
        ("valid", lambda x: lax.conv(x[None, None], _KERNEL, (1, 1), "VALID"), "b, 4", ({"b": 3}, {"b": 6})),
        ("same", lambda x: lax.conv(x[None, None], _KERNEL, (1, 1), "SAME"), "b, 4", _B),
        ("same_strided", lambda x: lax.conv(x[None, None], _KERNEL, (2, 1), "SAME"), "b, 4", _B),
        ("batch_nwc", lambda x: lax.conv_general_dilated(x, np.ones((3, 2, 3), np.float32), (1,), "SAME",
                                                         dimension_numbers=("NWC", "WIO", "NWC")),
         "b, s, 2", ({"b": 2, "s": 3}, {"b": 1, "s": 7})),
    ],
    "windowed": [
        ("max_pool_valid", lambda x: lax.reduce_window_max(x, (2, 2), (1, 1), "VALID"), "b, 4", ({"b": 2}, {"b": 5})),
        ("sum_same", lambda x: lax.reduce_window_sum(x, (2, 2), (1, 1), "SAME"), "b, 4", _B),
        ("max_same_strided", lambda x: lax.reduce_window_max(x, (3, 2), (2, 2), "SAME"), "b, 4", _B),
        ("max_pool_2d", lambda x: lax.reduce_window_max(x[None, :, :, None], (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
         "b, c", ({"b": 2, "c": 4}, {"b": 5, "c": 3})),
        ("cumsum", lambda x: lax.cumsum(x, 0), "b, 4", ({"b": 1}, {"b": 5}, {"b": 64})),
        ("cumsum_reverse", lambda x: lax.cumsum(x, 0, reverse=True), "b, 4", _B),
        ("cumprod_cummax_cummin", lambda x: (lax.cumprod(x, 0), lax.cummax(x, 0), lax.cummin(x, 0, reverse=True)),
         "b, 4", ({"b": 1}, {"b": 7})),
        ("cumsum_int", lambda x: tnp.cumsum(x, axis=0), "b, 4:int32", ({"b": 3}, {"b": 33})),
        ("cumsum_other_axis", lambda x: tnp.cumsum(x, axis=1), "b, 4", _B2),
    ],
    "indexing": [
        ("gather_static", lambda x: x[np.array([0, 0, 1])] + x[np.array([0, -1])].sum(), "b, 4", _B2),
        ("gather_columns", lambda x: x[:, np.array([0, 3])], "b, 4", _B),
        ("gather_batch", lambda x, i: x[i % 3], ("3, 4", "c:int32"), ({"c": 2}, {"c": 5})),
        ("dynamic_index", lambda x: x[tnp.argmax(x[:, 0])], "b, 4", _B),
        ("scatter_add", lambda x, i, y: x.at[i % 3].add(y), ("3, 4", "c:int32", "c, 4"), ({"c": 2}, {"c": 5})),
        ("scatter_slices", lambda x: (x.at[1:].set(0.0), x.at[::2].set(0.0), x.at[-1].set(0.0),
                                      x.at[1:-1].add(1.0)), "b, 4", _B2),
        ("take", lambda x: (tnp.take(x, np.array([1, 0]), axis=0), tnp.take(x, np.array([0, 5, -1]), 0, mode="wrap"),
                            tnp.take(x, np.array([0, 5, -1]), 0, mode="clip")), "b, 4", _B2),
        ("take_along_axis", lambda x: tnp.take_along_axis(x, tnp.argsort(x, 0), 0), "b, 4", _B),
        ("fori_dynamic_index", lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c + x[i] * i,
                                                       tnp.zeros(4, np.float32)), "b, 4", _B),
    ],
    "sorting": [
        ("sort_argsort", lambda x: (tnp.sort(x, 0), tnp.argsort(x, 0), tnp.sort(x.T, -1)), "b, 4", _B),
        ("variadic_sort", lambda x: lax.sort((x[:, 0], x[:, 1]), num_keys=1)[1], "b, 4", _B),
        ("top_k", lambda x: lax.top_k(x, 2), "b, 4", _B),
        ("top_k_symbolic_axis", lambda x: lax.top_k(x.T, 2), "b, 4", _B2),
        ("searchsorted_lexsort", lambda x: (tnp.searchsorted(tnp.sort(x[:, 0]), x[:, 1]),
                                            tnp.lexsort((x[:, 0], x[:, 1]))), "b, 4", _B),
    ],
    "control_flow": [
        ("cond", lambda x: lax.cond(x.sum() > 0, lambda y: y * 2, lambda y: y - 1, x), "b, 4", _B),
        ("cond_on_size", lambda x: lax.cond(tnp.asarray(x.shape[0]) > 2, lambda y: y.sum(0), lambda y: -y.sum(0), x),
         "b, 4", _B),
        ("switch", lambda x: lax.switch(tnp.argmax(x[0]) % 2, [lambda y: y * 2, lambda y: y[::-1]], x), "b, 4", _B),
        ("while", lambda x: lax.while_loop(lambda c: c[0] < x.shape[0], lambda c: (c[0] + 1, c[1] + x[c[0]]),
                                           (0, tnp.zeros(4, np.float32)))[1], "b, 4", _B),
        ("fori_symbolic_bound", lambda x: lax.fori_loop(0, x.shape[0], lambda i, c: c * 0.5 + x[i], x[0]),
         "b, 4", _B),
        ("scan", lambda x: lax.scan(lambda c, xi: (c + xi, c * 2), tnp.zeros(4, np.float32), x), "b, 4", _B),
        ("scan_reverse", lambda x: lax.scan(lambda c, xi: (c * 0.5 + xi, c), tnp.zeros(4, np.float32), x,
                                            reverse=True), "b, 4", _B),
        ("scan_symbolic_carry", lambda x: lax.scan(lambda c, xi: (c + xi, c * xi), tnp.zeros(x.shape[0], np.float32),
                                                   x.T), "b, 4", _B),
        ("scan_length", lambda x: lax.scan(lambda c, _: (c + 1.0, c), 0.0, None, length=x.shape[0])[1] + x[:, 0],
         "b, 4", _B),
    ],
    "nn": [
        ("softmax_family", lambda x: (nn.softmax(x, axis=0), nn.log_softmax(x), nn.logsumexp(x, axis=0),
                                      nn.standardize(x, axis=0)), "b, 4", _B2),
        ("activations", lambda x: nn.gelu(x) + nn.silu(x) + nn.relu6(x) + nn.elu(x) + nn.softplus(x), "b, 4", _B),
        ("glu", lambda x: nn.glu(x, axis=0), "2*b, 4", _B2),
        ("one_hot", lambda x: (nn.one_hot(tnp.argmax(x, 1), 4), nn.one_hot(tnp.argmax(x, 1), x.shape[0])),
         "b, 4", _B),
    ],
    "numpy_extras": [
        ("pad_modes", lambda x: (tnp.pad(x, ((1, 2), (0, 1))), tnp.pad(x, ((1, 2), (0, 1)), mode="edge"),
                                 tnp.pad(x, ((1, 2), (0, 1)), mode="reflect"),
                                 tnp.pad(x, ((3, 2), (0, 1)), mode="symmetric"),
                                 tnp.pad(x, ((4, 5), (1, 0)), mode="wrap")), "b, 4", _B),
        ("split", lambda x: (tnp.split(x, 2, axis=1), tnp.array_split(x, 3, axis=0), tnp.vsplit(x, [1])),
         "b, 4", _B),
        ("split_even", lambda x: tnp.split(x, 2, axis=0), "2*b, 4", _B2),
        ("tile_repeat", lambda x: (tnp.tile(x, (2, 1)), tnp.repeat(x, 2, axis=0), tnp.repeat(x, 3, axis=1)),
         "b, 4", _B),
        ("tile_repeat_symbolic_counts", lambda x: (tnp.tile(x, (x.shape[0], 1)), tnp.repeat(x[:, 0], x.shape[0])),
         "b, 4", _B),
        ("roll", lambda x: (tnp.roll(x, 1, axis=0), tnp.roll(x, 2), tnp.roll(x, x.shape[0] // 2, axis=0)),
         "b, 4", _B),
        ("flip_rot", lambda x: (tnp.flip(x, 0), tnp.rot90(x), tnp.fliplr(x)), "b, 4", _B),
        ("triangles", lambda x: (tnp.tril(x), tnp.triu(x, 1), tnp.eye(x.shape[0], x.shape[1], 1) * x,
                                 tnp.tri(x.shape[0]) @ x), "b, c", _BC),
        ("diagonal", lambda x: (tnp.diagonal(x), tnp.diagonal(x, 1), tnp.diagonal(x, -1), tnp.diag(x[:, 0])),
         "b, b", _B),
        ("arange_linspace", lambda x: (tnp.arange(x.shape[0]), tnp.arange(1, x.shape[0] + 1, 2),
                                       tnp.arange(x.shape[0], 0, -1), tnp.linspace(0, 1, x.shape[0]),
                                       tnp.linspace(-1, 1, x.shape[0], endpoint=False)), "b, 4", _B),
        ("unravel_ravel", lambda x: (tnp.unravel_index(tnp.argmax(x), x.shape),
                                     tnp.ravel_multi_index((tnp.argmax(x, 0), tnp.arange(4)), (x.shape[0], 4), mode="clip")),
         "b, 4", _B),
        ("stacking", lambda x, y: (tnp.vstack([x, y]), tnp.hstack([x, x]), tnp.append(x, y, axis=0)),
         ("b, 4", "c, 4"), _BC),
        ("where_clip_isclose", lambda x: (tnp.where(x > 0, x, 0.0), tnp.clip(x, -0.5, 0.5), tnp.isclose(x, x * 1.0)),
         "b, 4", _B),
        ("meshgrid_moveaxis", lambda x: (tnp.meshgrid(x[:, 0], x[0])[0], tnp.moveaxis(x[None], 0, 2)), "b, 4", _B),
    ],
}

CASES = [pytest.param(fun, specs, sizes, id=f"{family}-{name}")
         for family, cases in FAMILIES.items() for name, fun, specs, sizes in cases]


def _parse_spec(text: str) -> tuple[str, np.dtype]:
    dims, _, dtype = text.partition(":")
    return dims, np.dtype(dtype or "float32")


def _specs(specs) -> list[toolkit.ShapeDtypeStruct]:
    scope = SymbolicScope()
    out = []
    for text in (specs,) if isinstance(specs, str) else specs:
        dims, dtype = _parse_spec(text)
        out.append(toolkit.ShapeDtypeStruct(symbolic_shape(dims, scope=scope), dtype))
    return out


def _concrete_args(specs, env: dict[str, int], rng: np.random.Generator) -> list[np.ndarray]:
    args = []
    for spec in _specs(specs):
        shape = tuple(d if type(d) is int else d.evaluate(env) for d in spec.shape)
        if spec.dtype.kind == "f":
            args.append(rng.standard_normal(shape).astype(spec.dtype))
        else:
            args.append(rng.integers(0, 7, shape).astype(spec.dtype))
    return args


def _leaves(tree) -> list[np.ndarray]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree)]


@pytest.mark.parametrize("fun,specs,sizes", CASES)
def test_family_specializes_like_static(fun, specs, sizes):
    compiled = toolkit.jit(fun).lower(*_specs(specs)).compile()
    rng = np.random.default_rng(0)
    static = toolkit.jit(fun)
    for env in sizes:
        args = _concrete_args(specs, env, rng)
        got, want = _leaves(compiled(*args)), _leaves(static(*args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (env, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=str(env))


def test_cumsum_matches_numpy_at_large_sizes():
    # The symbolic-length path is a log-depth prefix scan: check it against numpy, not only the static path.
    compiled = toolkit.jit(lambda x: (lax.cumsum(x, 0), lax.cummax(x, 0, reverse=True))).lower(
        *_specs("b, 3:int32")).compile()
    for n in (1, 2, 31, 32, 33, 1000):
        x = np.random.default_rng(n).integers(-50, 50, (n, 3)).astype(np.int32)
        total, running_max = compiled(x)
        np.testing.assert_array_equal(np.asarray(total), np.cumsum(x, 0))
        np.testing.assert_array_equal(np.asarray(running_max), np.maximum.accumulate(x[::-1], 0)[::-1])


@pytest.mark.parametrize("name,spec,sizes", [
    ("convnet", "b, 2*h, 2*w, 3", [dict(batch=1, size=8), dict(batch=3, size=16)]),
    ("rnn", "t, b, 8", [dict(steps=3, batch=2), dict(steps=7, batch=1)]),
    ("newton", "n", [1, 5, 256]),
])
def test_reference_programs_lowered_once(name, spec, sizes):
    from toolkit.examples.reference_programs import PROGRAMS
    program = PROGRAMS[name]
    fun = toolkit.jit(program.build(toolkit))
    if name == "newton":
        (a,) = program.make_inputs(np.random.default_rng(0))
        compiled = fun.lower(*_specs(spec)).compile()
        for n in sizes:
            np.testing.assert_allclose(np.asarray(compiled(a[:n])), np.asarray(fun(a[:n])), rtol=1e-6)
        return
    params, _ = program.make_inputs(np.random.default_rng(0), **sizes[0])
    compiled = fun.lower(params, *_specs(spec)).compile()
    for kwargs in sizes:
        _, x = program.make_inputs(np.random.default_rng(1), **kwargs)
        np.testing.assert_allclose(np.asarray(compiled(params, x)), np.asarray(fun(params, x)), rtol=1e-5, atol=1e-5)


# --- failures --------------------------------------------------------------------------------------------------


def test_constraint_violation_reports_the_constraint():
    spec = toolkit.ShapeDtypeStruct(symbolic_shape("b, 4", constraints=("b >= 3",)), np.float32)
    compiled = toolkit.jit(lambda x: tnp.cumsum(x[1:], 0)).lower(spec).compile()
    assert compiled(np.ones((3, 4), np.float32)).shape == (2, 4)
    with pytest.raises(ValueError, match="Constraint 'b >= 3' is not satisfied"):
        compiled(np.ones((2, 4), np.float32))


def test_odd_size_for_even_split_reports_the_remainder():
    compiled = toolkit.jit(lambda x: tnp.split(x, 2, axis=0)).lower(*_specs("2*b, 4")).compile()
    assert [a.shape for a in compiled(np.ones((6, 4), np.float32))] == [(3, 4), (3, 4)]
    with pytest.raises(ValueError, match="Division had remainder 1 when computing the value of 'b'"):
        compiled(np.ones((5, 4), np.float32))


def test_top_k_larger_than_a_symbolic_axis_is_asserted():
    compiled = toolkit.jit(lambda x: lax.top_k(x, 3)[0]).lower(*_specs("4, b")).compile()
    assert compiled(np.ones((4, 3), np.float32)).shape == (4, 3)
    with pytest.raises(ValueError, match=r"top_k: k=3 and the last dimension: needs 'b' >= 3, got 'b' = 2"):
        compiled(np.ones((4, 2), np.float32))


def test_lax_slice_beyond_a_symbolic_size_is_asserted():
    compiled = toolkit.jit(lambda x: lax.slice(x, (1,), (4,))).lower(*_specs("b")).compile()
    np.testing.assert_array_equal(np.asarray(compiled(np.arange(6, dtype=np.float32))), [1, 2, 3])
    with pytest.raises(ValueError, match=r"slice: limit of dimension 0: needs 'b' >= 4, got 'b' = 3"):
        compiled(np.arange(3, dtype=np.float32))


def test_update_larger_than_a_symbolic_operand_is_asserted():
    compiled = toolkit.jit(lambda x, y: lax.dynamic_update_slice(x, y, (np.int32(0), np.int32(0)))).lower(
        *_specs(("b, 4", "c, 4"))).compile()
    assert np.asarray(compiled(np.zeros((4, 4), np.float32), np.ones((2, 4), np.float32))).sum() == 8
    with pytest.raises(ValueError, match=r"dynamic_update_slice: update size of dimension 0: needs 'b' >= 'c', "
                                         r"got 'b' = 2 and 'c' = 3"):
        compiled(np.zeros((2, 4), np.float32), np.ones((3, 4), np.float32))


def test_inconsistent_sizes_of_one_variable_are_asserted():
    compiled = toolkit.jit(lambda x, y: tnp.concatenate([x, y], 1)).lower(*_specs(("b, 4", "b, 2"))).compile()
    assert compiled(np.ones((3, 4), np.float32), np.ones((3, 2), np.float32)).shape == (3, 6)
    with pytest.raises(ValueError, match="inconsistency between dimension 0 of args\\[1\\]"):
        compiled(np.ones((3, 4), np.float32), np.ones((2, 2), np.float32))


def test_uneven_split_of_a_symbolic_axis_is_refused_when_tracing():
    with pytest.raises(ValueError, match="does not result in an equal division"):
        toolkit.jit(lambda x: tnp.split(x, 3, axis=0)).lower(*_specs("b, 4"))


def test_python_comparison_of_a_symbolic_size_is_inconclusive():
    with pytest.raises(InconclusiveDimensionOperation, match="'b' > '2'"):
        toolkit.jit(lambda x: x * 2 if x.shape[0] > 2 else x).lower(*_specs("b, 4"))


@pytest.mark.x64  # a uint64[2] state (with x64 off it is uint32[2], as in JAX)
def test_random_bits_of_symbolic_shape():
    fun = lambda x: lax.rng_bit_generator(np.array([1, 2], np.uint64), x.shape)[1]  # noqa: E731
    lowered = toolkit.jit(fun).lower(*_specs("b, 4"))
    assert "custom_call @stablehlo.dynamic_rng_bit_generator" in lowered.as_text()
    compiled = lowered.compile()
    for b in (1, 3):
        x = np.zeros((b, 4), np.float32)
        np.testing.assert_array_equal(np.asarray(compiled(x)), np.asarray(toolkit.jit(fun)(x)))


def test_custom_call_with_symbolic_results_is_refused_clearly():
    spec = _specs("b, 4")[0]
    with pytest.raises(NotImplementedError, match="custom_call 'my_op' with results of symbolic shape"):
        toolkit.jit(lambda x: lax.custom_call("my_op", toolkit.ShapeDtypeStruct(x.shape, np.float32), x)).lower(spec)


def test_sharding_constraint_on_a_symbolic_shape_is_refused_clearly():
    from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P
    mesh = Mesh(np.array(toolkit.devices()[:1]).reshape(1, 1), ("x", "y"))
    target = NamedSharding(mesh, P(None, "y"))
    with pytest.raises(NotImplementedError, match="with_sharding_constraint on a symbolic shape"):
        toolkit.jit(lambda x: lax.with_sharding_constraint(x * 2, target)).lower(*_specs("b, 4"))


# --- the dynamic ops we emit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fun,spec,ops", [
    (lambda x: x[1:], "b, 4", ["stablehlo.real_dynamic_slice"]),
    (lambda x: lax.dynamic_slice(x, (np.int32(0), np.int32(0)), (x.shape[0] - 1, 2)), "b, 4",
     ["stablehlo.real_dynamic_slice", "stablehlo.clamp"]),
    (lambda x: lax.conv(x[None, None], _KERNEL, (2, 1), "SAME"), "b, 4", ["stablehlo.dynamic_conv"]),
    (lambda x: lax.reduce_window_max(x, (3, 2), (2, 2), "SAME"), "b, 4", ["stablehlo.dynamic_pad"]),
    (lambda x: lax.cumsum(x, 0), "b, 4", ["stablehlo.while", "stablehlo.real_dynamic_slice"]),
    (lambda x: lax.scan(lambda c, xi: (c + xi, c), tnp.zeros(x.shape[0]), x.T)[1], "b, 4",
     ["stablehlo.real_dynamic_slice", "stablehlo.dynamic_reshape"]),
])
def test_dynamic_ops_in_the_module(fun, spec, ops):
    text = toolkit.jit(fun).lower(*_specs(spec)).as_text()
    for op in ops:
        assert op in text, op


# --- against jax.export ------------------------------------------------------------------------------------------


def _jax_cases():
    # name: (function of (lax, numpy) modules, spec, concrete shape); the same code runs on jax and toolkit.
    return {
        "slice": (lambda L, N: lambda x: L.slice(x, (1, 0), (x.shape[0], 4), (2, 1)), "b, 4", (7, 4)),
        "pad_reshape_iota": (lambda L, N: lambda x: L.reshape(
            L.pad(x, np.float32(0), [(1, 2, 1), (0, 0, 0)]), ((2 * x.shape[0] + 2) * 4,))
            + L.broadcasted_iota(np.float32, ((2 * x.shape[0] + 2) * 4,), 0), "b, 4", (3, 4)),
        "broadcast_in_dim": (lambda L, N: lambda x: L.broadcast_in_dim(x, (x.shape[0], 3, 4), (0, 2)), "b, 4",
                             (5, 4)),
        "conv_same_strided": (lambda L, N: lambda x: L.conv(x, _KERNEL, (2, 1), "SAME"), "1, 1, b, 4", (1, 1, 5, 4)),
        "dynamic_slice": (lambda L, N: lambda x: L.dynamic_slice(x, (np.int32(1), np.int32(0)),
                                                                 (x.shape[0] - 1, 2)), "b, 4", (6, 4)),
        "gather_columns": (lambda L, N: lambda x: x[:, np.array([0, 3])].sum(1), "b, 4", (6, 4)),
        "scan": (lambda L, N: lambda x: L.scan(lambda c, xi: (c + xi, c * 2), N.zeros(4, np.float32), x)[1], "b, 4",
                 (6, 4)),
        "fori": (lambda L, N: lambda x: L.fori_loop(0, x.shape[0], lambda i, c: c + x[i], N.zeros(4, np.float32)),
                 "b, 4", (5, 4)),
        "cond": (lambda L, N: lambda x: L.cond(x.sum() > 0, lambda y: y * 2, lambda y: y - 1, x), "b, 4", (5, 4)),
        "reduce_window_valid": (lambda L, N: lambda x: L.reduce_window(x, -np.inf, L.max, (2, 2), (1, 1), "VALID"),
                                "b, 4", (5, 4)),
        "dot_concat_rev": (lambda L, N: lambda x: L.dot_general(x, L.rev(L.concatenate([x, x], 1), (0,)),
                                                                (((0,), (0,)), ((), ()))), "b, 4", (5, 4)),
        "dynamic_update_slice_mean": (lambda L, N: lambda x: N.mean(L.dynamic_update_slice(
            x, x[:1] * 2, (np.int32(1), np.int32(0))), 0), "b, 4", (5, 4)),
    }


_JAX_CASE_NAMES = ["slice", "pad_reshape_iota", "broadcast_in_dim", "conv_same_strided", "dynamic_slice",
                   "gather_columns", "scan", "fori", "cond", "reduce_window_valid", "dot_concat_rev",
                   "dynamic_update_slice_mean"]


def _dynamic_op_kinds(text: str) -> set[str]:
    import re
    kinds = set(re.findall(r"stablehlo\.(dynamic_\w+|real_dynamic_slice)", text))
    return kinds


def _main_signature(module) -> str:
    from jaxlib.mlir import ir
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main":
            return str(ir.TypeAttr(op.operation.attributes["function_type"]).value)
    raise AssertionError("no @main")


@pytest.mark.parametrize("name", _JAX_CASE_NAMES)
def test_matches_jax_export(name):
    jax = pytest.importorskip("jax")
    build, spec, shape = _jax_cases()[name]
    jax_fun, our_fun = build(jax.lax, jax.numpy), build(lax, tnp)
    jax_text = _jax_module_text(jax_fun, spec)
    lowered = toolkit.jit(our_fun).lower(*_specs(spec))
    our_text = lowered.as_text()
    assert _dynamic_op_kinds(our_text) == _dynamic_op_kinds(jax_text)
    assert _main_signature_after_refine(our_text, shape, ours=True) == \
        _main_signature_after_refine(jax_text, shape, ours=False)

    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(lowered.compile()(x)), np.asarray(jax.jit(jax_fun)(x)),
                               rtol=1e-5, atol=1e-5)


def _jax_module_text(fun, spec: str) -> str:
    import jax
    from jax import export
    return export.export(jax.jit(fun))(jax.ShapeDtypeStruct(export.symbolic_shape(spec), np.float32)).mlir_module()


def _main_signature_after_refine(text: str, shape: tuple, *, ours: bool) -> str:
    """``@main``'s type after binding ``shape``: our passes for our module, jaxlib's C++ refinement for JAX's."""
    import io

    from jaxlib import _jax  # oracle only
    from jaxlib.mlir import ir, passmanager

    from toolkit.ir.context import make_context
    from toolkit.passes import run_pipeline

    types = "tensor<" + "x".join(map(str, shape)) + "xf32>"
    with make_context():
        module = ir.Module.parse(text)
        if ours:
            run_pipeline(module, f"builtin.module(toolkit-bind-shapes{{types={types}}}, toolkit-refine-shapes)")
        else:
            passmanager.PassManager.parse(f"builtin.module(stablehlo-refine-arguments{{types={types}}})").run(
                module.operation)
            buffer = io.BytesIO()
            module.operation.write_bytecode(buffer)
            module = ir.Module.parse(_jax.mlir.refine_polymorphic_shapes(
                buffer.getvalue(), enable_shape_assertions=True, validate_static_shapes=True))
        return _main_signature(module)


def test_cumulative_ops_differ_from_jax_by_design():
    # JAX lowers cumsum over a symbolic axis to custom_call @stablehlo.dynamic_reduce_window (a whole-axis window),
    # which only StableHLO's C++ canonicalization makes static; ours is a prefix-scan loop. Same refined signature.
    jax = pytest.importorskip("jax")
    jax_text = _jax_module_text(lambda x: jax.lax.cumsum(x, 0), "b, 4")
    our_text = toolkit.jit(lambda x: lax.cumsum(x, 0)).lower(*_specs("b, 4")).as_text()
    assert "@stablehlo.dynamic_reduce_window" in jax_text
    assert "stablehlo.while" in our_text and "dynamic_reduce_window" not in our_text
    assert _main_signature_after_refine(our_text, (9, 4), ours=True) == \
        _main_signature_after_refine(jax_text, (9, 4), ours=False)
