"""vmap of ``Exported.call`` (beyond JAX, which has no batching rule for it), for exports written by toolkit
and by JAX, shape-polymorphic or not: equal to a Python loop over the batch; and export of a vmapped function."""

import json
import os
import sys

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import export

jax = pytest.importorskip("jax")
from jax import export as jexport  # noqa: E402

CORPUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpora", "jax_poly_harness")
rng = np.random.default_rng(0)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def loop(call, batch, in_axes):
    """``stack([call(*element) for element in batch])``: the meaning vmap must have."""
    size = next(np.shape(x)[a] for x, a in zip(batch, in_axes) if a is not None)
    outs = [call(*[x if a is None else np.take(x, i, axis=a) for x, a in zip(batch, in_axes)]) for i in range(size)]
    leaves = [toolkit.tree_util.tree_leaves(o) for o in outs]
    return [np.stack([np.asarray(o[k]) for o in leaves]) for k in range(len(leaves[0]))]


def check(call, batch, in_axes, rtol=2e-5, atol=2e-5):
    want = loop(call, batch, in_axes)
    for fn in (toolkit.vmap(call, in_axes), toolkit.jit(toolkit.vmap(call, in_axes))):
        got = toolkit.tree_util.tree_leaves(fn(*batch))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol)


def _row_mixing(x, w):
    h = tnp.tanh(x @ w)
    return h - tnp.mean(h, axis=0), tnp.sum(h)  # mixes the rows of x: folding b would be wrong


def test_toolkit_polymorphic_export():
    b, = export.symbolic_shape("b")
    exp = export.export(toolkit.jit(_row_mixing))(toolkit.ShapeDtypeStruct((b, 3), np.float32),
                                                  toolkit.ShapeDtypeStruct((3, 4), np.float32))
    w = f32(3, 4)
    check(exp.call, [f32(5, 7, 3), w], (0, None))
    check(exp.call, [f32(7, 3, 4), f32(3, 4, 4)], (2, 2))
    # a deserialized export, and the call inside a bigger jitted computation with grad
    again = export.deserialize(exp.serialize(vjp_order=1))
    check(again.call, [f32(4, 2, 3), w], (0, None))
    xs = f32(4, 2, 3)
    def scalar(x, w):  # both outputs get cotangents (a zero cotangent of a symbolic output is a separate issue)
        h, s = again.call(x, w)
        return tnp.sum(h * h) + s

    g = toolkit.grad(lambda w: toolkit.vmap(scalar, (0, None))(xs, w).sum())(w)
    g_loop = sum(np.asarray(toolkit.grad(scalar, argnums=1)(x, w)) for x in xs)
    np.testing.assert_allclose(np.asarray(g), g_loop, rtol=1e-4, atol=1e-5)


def test_toolkit_static_export_and_export_of_vmap():
    w = f32(3, 4)
    exp = export.export(toolkit.jit(_row_mixing))(f32(2, 3), w)
    check(exp.call, [f32(3, 2, 3), w], (0, None))
    # exporting a vmapped function; JAX runs the blob
    b, = export.symbolic_shape("b")
    vexp = export.export(toolkit.jit(toolkit.vmap(_row_mixing, (0, None))))(
        toolkit.ShapeDtypeStruct((b, 2, 3), np.float32), toolkit.ShapeDtypeStruct((3, 4), np.float32))
    xs = f32(5, 2, 3)
    theirs = jexport.deserialize(bytearray(vexp.serialize())).call(xs, w)
    for a, c in zip(theirs, loop(exp.call, [xs, w], (0, None))):
        np.testing.assert_allclose(np.asarray(a), c, rtol=2e-5, atol=2e-5)


def test_jax_written_export():
    def fun(x, y):
        return jax.numpy.cumsum(x, axis=0) * y[0] + jax.numpy.max(x)
    b = jexport.symbolic_shape("b")[0]
    blob = jexport.export(jax.jit(fun))(jax.ShapeDtypeStruct((b, 3), np.float32),
                                        jax.ShapeDtypeStruct((2, 3), np.float32)).serialize()
    exp = export.deserialize(bytes(blob))
    check(exp.call, [f32(4, 6, 3), f32(2, 3)], (0, None))
    check(exp.call, [f32(6, 3, 4), f32(2, 3, 4)], (2, 2))


def _corpus_cases(limit=8):
    path = os.path.join(CORPUS, "manifest.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        cases = json.load(f)["cases"]
    picked, groups = [], set()
    for c in sorted(cases, key=lambda c: c["name"]):
        if c["group"] in groups or not c["dim_vars"] or set(c["custom_call_targets"]) - {"shape_assertion"}:
            continue
        if set(c["in_dtypes"]) | set(c["out_dtypes"]) != {"float32"} or c["in_structure"]["c"][1]["c"]:
            continue
        if c["name"].startswith("vmap_") or len(c["in_avals"]) > 3:
            continue
        groups.add(c["group"])
        picked.append(c)
    step = max(1, len(picked) // limit)
    return picked[::step][:limit]


@pytest.mark.skipif(not os.path.exists(CORPUS), reason="needs ../shared/corpora/jax_poly_harness")
@pytest.mark.parametrize("entry", _corpus_cases(), ids=lambda c: c["name"])
def test_jax_poly_harness_corpus(entry):
    sys.path.insert(0, CORPUS)
    from corpus_common import load_case_arrays, run_arrays
    arrays = load_case_arrays(CORPUS, entry)
    run = entry["runs"][0]
    inputs = run_arrays(arrays, run["prefix"], "in", run["n_in"])
    expected = run_arrays(arrays, run["prefix"], "out", run["n_out"])
    with open(os.path.join(CORPUS, entry["files"]["bin"]), "rb") as f:
        exp = export.deserialize(f.read())
    batch = [np.stack([x, x * np.float32(0.5)]) for x in inputs]  # element 0 is the recorded run
    got = toolkit.tree_util.tree_leaves(toolkit.jit(toolkit.vmap(exp.call))(*batch))
    want = loop(exp.call, batch, (0,) * len(batch))
    for g, w, e in zip(got, want, expected):
        np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)
        np.testing.assert_allclose(np.asarray(g)[0], e, rtol=1e-4, atol=1e-4)


# --- folding the batch into the polymorphic dimension, where provably equal --------------------


def _rowwise(x, w):
    h = tnp.tanh(x @ w) * 2 + tnp.sum(x, axis=1, keepdims=True)
    return tnp.sort(h, axis=1), tnp.max(h, axis=1)


def _uses_iota(x, w):
    return (x @ w) + tnp.arange(x.shape[0], dtype=np.float32)[:, None]


def _uses_size(x, w):
    return (x @ w) / x.shape[0]


@pytest.mark.parametrize("fun,folds", [(_rowwise, True), (_row_mixing, False), (_uses_iota, False),
                                       (_uses_size, False)])
def test_fold_into_dimension_variable_only_when_rows_are_independent(fun, folds):
    from toolkit.export.call_batching import fold_variable
    b, = export.symbolic_shape("b")
    exp = export.export(toolkit.jit(fun))(toolkit.ShapeDtypeStruct((b, 3), np.float32),
                                          toolkit.ShapeDtypeStruct((3, 4), np.float32))
    assert (fold_variable(exp, [True, False]) == "b") is folds
    assert fold_variable(exp, [True, True]) is None  # w batched: (B, 3, 4) has no row dimension to fold into
    xs, w = f32(5, 7, 3), f32(3, 4)
    check(exp.call, [xs, w], (0, None))
    check(exp.call, [f32(7, 3, 5), w], (2, None))
    program = str(toolkit.jit(toolkit.vmap(exp.call, (0, None))).trace(xs, w).program)
    assert ("scan" not in program) is folds
    if folds:  # one call on the 35 folded rows
        assert "f32[35,3]" in program
    # a deserialized export carries no program: always the loop
    again = export.deserialize(exp.serialize())
    assert fold_variable(again, [True, False]) is None
    check(again.call, [xs, w], (0, None))
