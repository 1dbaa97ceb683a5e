"""vmap(..., axis_name=...): the collectives of toolkit.lax over the vmapped axis, against jax.vmap.

Over a vmapped axis a collective acts across the batch elements: psum sums
them, axis_index numbers them, all_gather stacks them, and so on. Also: the
same under grad, jit, control flow and nested vmaps, mixed with a
shard_map's mesh axes, and the errors for what is not supported.
"""

import functools

import numpy as np
import pytest

import toolkit
from toolkit.shard import PartitionSpec as P

jax = pytest.importorskip("jax")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)  # four batch elements of f32[3]
XX = RNG.standard_normal((2, 4, 3)).astype(np.float32)


def same_as_jax(make, *args, **vmap_kwargs):
    """``make(lib)`` builds the function of one element; vmap it with axis_name "i" in both and compare."""
    ours = toolkit.vmap(make(toolkit), axis_name="i", **vmap_kwargs)(*args)
    theirs = jax.vmap(make(jax), axis_name="i", **vmap_kwargs)(*args)
    assert_same(ours, theirs)


def assert_same(ours, theirs):
    ours, theirs = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["psum", "pmean", "pmax", "pmin"])
def test_reductions_over_the_batch(name):
    same_as_jax(lambda lib: lambda x: getattr(lib.lax, name)(x, "i"), X)
    same_as_jax(lambda lib: lambda x: x / getattr(lib.lax, name)(x, "i"), X, in_axes=1)


def test_reductions_of_constants_bools_and_ints():
    same_as_jax(lambda lib: lambda x: x + lib.lax.psum(1.0, "i"), X)  # the batch size
    same_as_jax(lambda lib: lambda x: lib.lax.psum(x > 0, "i"), X)
    same_as_jax(lambda lib: lambda x: lib.lax.pmax(x, "i"), np.arange(12, dtype=np.int32).reshape(4, 3))
    same_as_jax(lambda lib: lambda x, w: lib.lax.psum(w, "i") + x, X, X[0], in_axes=(0, None))


def test_axis_index_and_axis_size():
    same_as_jax(lambda lib: lambda x: x * lib.lax.axis_index("i") + lib.lax.axis_size("i"), X)
    same_as_jax(lambda lib: lambda: lib.lax.axis_index("i"), axis_size=5)  # no argument at all


@pytest.mark.parametrize("axis,tiled", [(0, False), (0, True), (1, False)])
def test_all_gather(axis, tiled):
    same_as_jax(lambda lib: lambda x: lib.lax.all_gather(x, "i", axis=axis, tiled=tiled), X)


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter(tiled):
    xs = RNG.standard_normal((4, 8 if tiled else 4, 2)).astype(np.float32)
    same_as_jax(lambda lib: lambda x: lib.lax.psum_scatter(x, "i", scatter_dimension=0, tiled=tiled), xs)


def test_ppermute():
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    same_as_jax(lambda lib: lambda x: lib.lax.ppermute(x, "i", perm), X)
    # A partial permutation (JAX's vmap rule asks for a full one): elements nobody sends to get zeros.
    out = toolkit.vmap(lambda x: toolkit.lax.ppermute(x, "i", [(0, 2), (3, 1)]), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(out), np.stack([np.zeros(3), X[3], X[0], np.zeros(3)]))


@pytest.mark.parametrize("split,concat,tiled", [(0, 0, True), (0, 1, True), (1, 0, True), (0, 1, False),
                                                (1, 0, False)])
def test_all_to_all(split, concat, tiled):
    xs = RNG.standard_normal((4, 8, 4) if tiled else (4, 4, 4)).astype(np.float32)
    same_as_jax(lambda lib: lambda x: lib.lax.all_to_all(x, "i", split, concat, tiled=tiled), xs)


def test_under_grad_and_jit():
    def grad_of_vmap(lib):
        return lib.grad(lambda xs: lib.vmap(lambda x: (x / lib.lax.psum(x, "i")).sum(), axis_name="i")(xs).sum())
    assert_same(grad_of_vmap(toolkit)(X), grad_of_vmap(jax)(X))
    same_as_jax(lambda lib: lib.grad(lambda x: lib.lax.psum(x ** 2, "i").sum()), X)
    same_as_jax(lambda lib: lib.grad(lambda x: (x - lib.lax.pmean(x, "i")).sum() ** 2), X)
    centered = toolkit.jit(toolkit.vmap(lambda x: x - toolkit.lax.pmean(x, "i"), axis_name="i"))
    np.testing.assert_allclose(np.asarray(centered(X)), X - X.mean(0), atol=1e-6)
    total = toolkit.jit(toolkit.vmap(lambda x: toolkit.lax.psum(x, "i"), axis_name="i", out_axes=None))
    np.testing.assert_allclose(np.asarray(total(X)), X.sum(0), atol=1e-5)


def test_inside_jit_and_control_flow():
    same_as_jax(lambda lib: lambda x: lib.jit(lambda y: y * lib.lax.axis_index("i") + lib.lax.psum(y, "i"))(x), X)
    # A nested jit with no batched operand still differs per element.
    same_as_jax(lambda lib: lambda x: x + lib.jit(lambda: lib.lax.axis_index("i"))(), X)
    same_as_jax(lambda lib: lambda x: lib.lax.scan(lambda c, e: (c + lib.lax.psum(e, "i"), c), 0.0, x)[0], X)
    same_as_jax(lambda lib: lambda x: lib.lax.cond(x[0] > 0, lambda y: lib.lax.psum(y, "i"),
                                                   lambda y: 2 * lib.lax.psum(y, "i"), x), X)
    same_as_jax(lambda lib: lambda x: lib.lax.fori_loop(0, 3, lambda k, c: c + lib.lax.axis_index("i"), x), X)
    same_as_jax(lambda lib: lambda x: lib.lax.while_loop(
        lambda c: c[1] < 3, lambda c: (c[0] + lib.lax.psum(c[0], "i"), c[1] + 1), (x, 0))[0], X)


@pytest.mark.parametrize("axes", ["i", "j", ("i", "j"), ("j", "i")])
def test_nested_vmaps(axes):
    def make(lib):
        return lib.vmap(lib.vmap(lambda x: lib.lax.psum(x, axes), axis_name="j"), axis_name="i")
    assert_same(make(toolkit)(XX), make(jax)(XX))

    def positions(lib):
        return lib.vmap(lib.vmap(lambda x: x * lib.lax.axis_index("i") + 10 * lib.lax.axis_index("j")
                                 + lib.lax.all_gather(x, "i").sum(0), axis_name="j"), axis_name="i")
    assert_same(positions(toolkit)(XX), positions(jax)(XX))


@pytest.mark.parametrize("check_vma", [True, False])
@pytest.mark.parametrize("axes", ["i", ("x", "i"), ("i", "x"), "x"])
def test_inside_a_shard_map_body(mesh, axes, check_vma):
    """The vmap inside the body: its axis and the mesh's together (JAX 0.10.2 raises for check_vma=True)."""
    xs = RNG.standard_normal((8, 4, 3)).astype(np.float32)

    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=check_vma)
    def centered(block):  # four of the eight elements per shard of "x"
        return toolkit.vmap(lambda x: x - toolkit.lax.pmean(x, axes), axis_name="i")(block)

    blocks = xs.reshape(2, 4, 4, 3)
    if axes == "i":
        means = blocks.mean(1, keepdims=True)
    elif axes == "x":
        means = blocks.mean(0, keepdims=True)
    else:
        means = blocks.mean((0, 1), keepdims=True)
    np.testing.assert_allclose(np.asarray(centered(xs)), (blocks - means).reshape(xs.shape), atol=1e-5)


def test_unsupported_and_wrong_names(mesh):
    with pytest.raises(NameError, match="unbound axis name: k.*axis_name='k'"):
        toolkit.vmap(lambda x: toolkit.lax.psum(x, "k"), axis_name="i")(X)
    with pytest.raises(TypeError, match="axis_name must be hashable"):
        toolkit.vmap(lambda x: x, axis_name=["i"])(X)
    with pytest.raises(NotImplementedError, match="all_gather over the vmapped axis 'i' together with"):
        toolkit.shard_map(lambda b: toolkit.vmap(lambda x: toolkit.lax.all_gather(x, ("x", "i")), axis_name="i")(b),
                          mesh=mesh, in_specs=P("x"), out_specs=P("x"))(np.ones((8, 3), np.float32))
    with pytest.raises(ValueError, match="bound both by a shard_map and by a vmap"):
        toolkit.shard_map(lambda b: toolkit.vmap(lambda x: toolkit.lax.psum(x, "x"), axis_name="x")(b),
                          mesh=mesh, in_specs=P("x"), out_specs=P("x"))(np.ones((8, 3), np.float32))
    outer = toolkit.vmap(lambda x: toolkit.shard_map(lambda b: b + toolkit.lax.psum(b, "i"), mesh=mesh,
                                                     in_specs=P("x"), out_specs=P("x"))(x), axis_name="i")
    with pytest.raises(NotImplementedError, match="inside a shard_map body that the vmap encloses"):
        outer(np.ones((2, 8), np.float32))


def test_axis_index_over_mesh_and_vmapped_axes(mesh):
    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    def positions(block):  # two shards of "x", four elements each: the element's global position
        return toolkit.vmap(lambda x: x * 0 + toolkit.lax.axis_index(("x", "i")), axis_name="i")(block)

    out = positions(np.zeros((8, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.repeat(np.arange(8), 3).reshape(8, 3))
