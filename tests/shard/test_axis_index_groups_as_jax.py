"""The collectives' ``axis_index_groups=`` on 8 CPU devices, compared with jax 0.10 in the same run.

Each program is written once over a namespace ``L`` (toolkit's or jax's ``lax``, ``numpy``,
``shard_map``, ``P``, mesh) and run by both: values, the collectives' attributes in the lowered
text (``replica_groups`` above all), gradients, vmap and pmap, and the errors JAX raises.
"""

import re

import numpy as np
import pytest

import toolkit

jax = pytest.importorskip("jax")  # 8 CPU devices for both libraries: tests/shard/conftest.py

F32 = np.float32
X = np.arange(64, dtype=F32).reshape(8, 8) - 20.0
#: Positions 0..3 along "y" (size 4) in two groups; the second group lists its members out of order.
EVEN_ODD = [[0, 2], [3, 1]]
PAIRS = [[0, 1], [2, 3]]


# libs (toolkit's and JAX's namespaces over the (2, 4) mesh) and shardy: tests/shard/conftest.py
pytestmark = pytest.mark.usefixtures("shardy")


def _assert_same(out_tk, out_jx):
    leaves_tk = toolkit.tree_util.tree_leaves(out_tk)
    leaves_jx = jax.tree_util.tree_leaves(out_jx)
    assert len(leaves_tk) == len(leaves_jx)
    for a, b in zip(leaves_tk, leaves_jx):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def run_both(libs, build, *args):
    """``build(L)`` returns a function; jit it with each library and compare the outputs."""
    tk, jx = libs
    out_tk = toolkit.jit(build(tk))(*args)
    out_jx = jax.jit(build(jx))(*args)
    _assert_same(out_tk, out_jx)
    return out_tk, out_jx


def raise_both(libs, build, error, *args, match=None):
    """Both libraries raise ``error`` (toolkit's message matching ``match`` when given) for ``build``."""
    for L in libs:
        with pytest.raises(error, match=match if L.name == "toolkit" else None):
            L.jit(build(L))(*args)


def _smap(L, body, vma, in_spec=("x", "y"), out_specs=None):
    out = L.P(*in_spec) if out_specs is None else out_specs
    return L.shard_map(body, mesh=L.mesh, in_specs=L.P(*in_spec), out_specs=out, check_vma=vma)


# --- values -------------------------------------------------------------------------------------


def _grouped_collectives(L, a):
    """Every collective with groups, over "y" and over both axes (JAX's order: "y" fastest in ("x", "y"))."""
    lax = L.lax
    return {
        "pmax": lax.pmax(a, "y", axis_index_groups=EVEN_ODD),
        "pmin": lax.pmin(a, ("x", "y"), axis_index_groups=[[0, 1, 4, 5], [2, 3, 6, 7]]),
        "gather_tiled": lax.all_gather(a, "y", axis_index_groups=EVEN_ODD, axis=1, tiled=True),
        "gather_stacked": lax.all_gather(a, ("x", "y"), axis_index_groups=[[7, 0, 1, 2], [3, 4, 5, 6]]),
        "scatter_tiled": lax.psum_scatter(a, "y", axis_index_groups=EVEN_ODD, scatter_dimension=1, tiled=True),
        "scatter": lax.psum_scatter(a[:2], "y", axis_index_groups=EVEN_ODD),
        "a2a_tiled": lax.all_to_all(a, "y", 0, 1, axis_index_groups=PAIRS, tiled=True),
        "a2a": lax.all_to_all(a[:2], "y", 0, 1, axis_index_groups=[[1, 0], [2, 3]]),
        "swap": lax.pswapaxes(a, "y", 1, axis_index_groups=EVEN_ODD),
        "a2a_singletons": lax.all_to_all(a, "y", 0, 0, axis_index_groups=[[0], [1], [2], [3]], tiled=True),
    }


def test_values_without_vma_check(libs):
    """check_vma=False: every collective, psum/pmean among them (bool, int and constant operands too)."""
    def build(L):
        def body(a):
            out = _grouped_collectives(L, a)
            lax = L.lax
            out.update(
                psum=lax.psum(a, "y", axis_index_groups=EVEN_ODD),
                psum_both=lax.psum(a, ("y", "x"), axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]),
                psum_uneven=lax.psum(a, "y", axis_index_groups=[[0, 1, 2], [3]]),  # CPU's all_reduce takes them
                psum_bool=lax.psum(a > 0, "y", axis_index_groups=PAIRS),
                psum_const=a + lax.psum(3.0, "y", axis_index_groups=PAIRS),
                pmean=lax.pmean(a, "y", axis_index_groups=np.array(PAIRS)),
                pmean_int=lax.pmean(a.astype(np.int32), "y", axis_index_groups=EVEN_ODD),
                tree=lax.psum({"u": a, "v": (a * 2,)}, "y", axis_index_groups=PAIRS),
            )
            return L.tree_map(lambda v: v[None], out)  # a leading axis keeps every block apart
        return _smap(L, body, False, out_specs=L.P(("x", "y")))
    run_both(libs, build, X)


def test_values_with_vma_check(libs):
    """check_vma=True: JAX keeps the groups of all but psum/pmean (see test_psum_refused_under_vma_check)."""
    def build(L):
        def body(a):
            return L.tree_map(lambda v: v[None], _grouped_collectives(L, a))
        return _smap(L, body, True, out_specs=L.P(("x", "y")))
    run_both(libs, build, X)


@pytest.mark.x64
def test_float64_values(libs):
    x = np.linspace(-1.0, 1.0, 64).reshape(8, 8)

    def build(L):
        def body(a):
            return (L.lax.psum(a, "y", axis_index_groups=EVEN_ODD)[None],
                    L.lax.all_gather(a, "y", axis_index_groups=PAIRS, tiled=True)[None])
        return _smap(L, body, False, out_specs=L.P(("x", "y")))
    out_tk, _ = run_both(libs, build, x)
    assert np.asarray(out_tk[0]).dtype == np.float64


# --- the lowered replica groups -------------------------------------------------------------------

_COLLECTIVE_OP = re.compile(r'"stablehlo\.(all_reduce|all_gather|reduce_scatter|all_to_all)"\(%\w+\) <\{(.*?)\}>')


def _collective_attributes(text):
    return [m.groups() for m in _COLLECTIVE_OP.finditer(text)]


def test_lowered_replica_groups(libs):
    """The collective ops and their attributes (replica_groups, split_count, ...) are JAX's, -1 padding included."""
    def build(L):
        def body(a):
            lax = L.lax
            return (lax.psum(a, "y", axis_index_groups=EVEN_ODD),
                    lax.pmax(a, "y", axis_index_groups=[[0, 1, 2], [3]]),
                    lax.pmin(a, ("y", "x"), axis_index_groups=[[0, 1, 2, 3], [4, 5, 6, 7]]),
                    lax.all_gather(a, ("x", "y"), axis_index_groups=[[0, 1, 4, 5], [2, 3, 6, 7]], tiled=True),
                    lax.psum_scatter(a, "y", axis_index_groups=[[3, 1], [0, 2]], scatter_dimension=1, tiled=True),
                    lax.all_to_all(a, "y", 0, 0, axis_index_groups=PAIRS, tiled=True),
                    lax.all_to_all(a, "x", 0, 0, axis_index_groups=[[1, 0]], tiled=True))
        return _smap(L, body, False, out_specs=(L.P("x", "y"),) * 7)
    tk, jx = libs
    text_tk = toolkit.jit(build(tk)).lower(X).as_text()
    text_jx = jax.jit(build(jx)).lower(X).as_text()
    ops_tk, ops_jx = _collective_attributes(text_tk), _collective_attributes(text_jx)
    assert len(ops_jx) == 7
    assert ops_tk == ops_jx
    assert "replica_groups = dense<[[0, 1, 2], [3, -1, -1], [4, 5, 6], [7, -1, -1]]>" in text_tk


# --- gradients ----------------------------------------------------------------------------------


def _loss_terms(L, a, with_psum):
    lax = L.lax
    w = L.np.arange(1.0, 9.0, dtype=F32)[:, None]
    terms = [(lax.all_gather(a, "y", axis_index_groups=EVEN_ODD, tiled=True) ** 2 * w).sum(),
             (lax.psum_scatter(a * a, "y", axis_index_groups=PAIRS, tiled=True, scatter_dimension=1) * a[:, :1]).sum(),
             (lax.all_to_all(a, "y", 0, 1, axis_index_groups=EVEN_ODD, tiled=True) ** 3).sum()]
    if with_psum:  # psum's transpose is psum over the same groups
        terms += [(lax.psum(a * a, "y", axis_index_groups=EVEN_ODD) * a).sum(),
                  (lax.pmean(a, ("x", "y"), axis_index_groups=[[0, 5, 2, 7], [4, 1, 6, 3]]) ** 2).sum()]
    return sum(terms)


@pytest.mark.parametrize("vma", [False, True])
def test_gradients(libs, vma):
    def build(L):
        return _smap(L, L.grad(lambda a: _loss_terms(L, a, with_psum=not vma)), vma)
    run_both(libs, build, X / 10)


# --- vmap ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
                                "pswapaxes"])
def test_vmap_axis_refuses_groups(libs, op):
    """Over the vmapped axis JAX's batching rules raise NotImplementedError for groups."""
    args = {"all_to_all": (0, 0), "pswapaxes": (0,)}.get(op, ())
    x = np.ones((4, 2), F32)  # rows of the group's size: the shapes are fine, only the groups are refused
    for L in libs:
        f = L.vmap(lambda r: getattr(L.lax, op)(r, "i", *args, axis_index_groups=PAIRS), axis_name="i")
        with pytest.raises(NotImplementedError):
            f(x)


def test_vmap_axis_constants(libs):
    """A constant's psum/pmean is the group size times it (no batching rule runs); its pmax is refused."""
    def build(L):
        return L.vmap(lambda r: r + L.lax.psum(2.0, "i", axis_index_groups=PAIRS)
                      + L.lax.pmean(3.0, "i", axis_index_groups=PAIRS), axis_name="i")
    run_both(libs, build, np.arange(4, dtype=F32))
    for L in libs:
        with pytest.raises(NotImplementedError):
            L.vmap(lambda r: r + L.lax.pmax(2.0, "i", axis_index_groups=PAIRS), axis_name="i")(np.ones(4, F32))


def test_vmap_inside_shard_map(libs):
    """A vmap in the body keeps the groups of collectives over mesh axes; JAX's all_to_all rule refuses them."""
    y = np.arange(128, dtype=F32).reshape(8, 2, 8)

    def build(L):
        def body(a):
            def one(b):
                return (L.lax.psum(b, "y", axis_index_groups=EVEN_ODD),
                        L.lax.pmax(b, "y", axis_index_groups=PAIRS),
                        L.lax.all_gather(b, "y", axis_index_groups=EVEN_ODD, tiled=True),
                        L.lax.psum_scatter(b, "y", axis_index_groups=PAIRS, tiled=True))
            return tuple(o[None] for o in L.vmap(one, in_axes=1, out_axes=1)(a))
        return _smap(L, body, False, in_spec=("x", None, "y"), out_specs=L.P(("x", "y")))
    run_both(libs, build, y)

    def grouped_all_to_all(L):
        one = lambda b: L.lax.all_to_all(b, "y", 0, 0, axis_index_groups=PAIRS, tiled=True)  # noqa: E731
        return _smap(L, lambda a: L.vmap(one, in_axes=1, out_axes=1)(a), False, in_spec=("x", None, "y"))
    raise_both(libs, grouped_all_to_all, NotImplementedError, y, match="axis_index_groups")


# --- pmap ---------------------------------------------------------------------------------------


def test_pmap(libs):
    """JAX's pmap takes the groups (check_vma=False), gradients included."""
    x = np.arange(16, dtype=F32).reshape(4, 4)

    def body(L, r):
        lax = L.lax
        return (lax.psum(r, "i", axis_index_groups=EVEN_ODD), lax.pmean(r, "i", axis_index_groups=PAIRS),
                lax.all_gather(r, "i", axis_index_groups=EVEN_ODD),
                lax.psum_scatter(r, "i", axis_index_groups=EVEN_ODD, tiled=True),
                lax.all_to_all(r, "i", 0, 0, axis_index_groups=PAIRS, tiled=True),
                L.grad(lambda v: (lax.psum(v * v, "i", axis_index_groups=EVEN_ODD) * v).sum())(r))
    tk, jx = libs
    _assert_same(tk.pmap(lambda r: body(tk, r), axis_name="i")(x), jx.pmap(lambda r: body(jx, r), axis_name="i")(x))


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize("vma", [False, True])
def test_psum_refused_under_vma_check(libs, vma):
    """JAX's psum_invariant takes no groups: psum and pmean of a traced value raise under check_vma=True."""
    def build(L):
        return _smap(L, lambda a: (L.lax.psum(a, "y", axis_index_groups=PAIRS),
                                   L.lax.pmean(a, "y", axis_index_groups=PAIRS)), True,
                     out_specs=(L.P("x", "y"),) * 2)
    raise_both(libs, build, NotImplementedError, X, match="check_vma")


CALL_ERRORS = [
    # not covering range(total) exactly once (every collective checks this when called)
    ("psum", "y", [[0, 2], [1, 1]], ValueError, "cover all indices exactly once"),
    ("pmean", "y", [[0, 2], [1, 3], [3]], ValueError, "cover all indices exactly once"),
    ("pmax", "y", [[1, 2], [3, 4]], ValueError, "cover all indices exactly once"),
    ("all_gather", "y", [[0, 0]], ValueError, "cover all indices exactly once"),
    ("psum_scatter", "y", [[1]], ValueError, "cover all indices exactly once"),
    ("all_to_all", "y", [[0, 1], [1, 2]], ValueError, "cover all indices exactly once"),
    # positional axes
    ("psum", 0, [[0]], ValueError, "named axes"),
    ("pmin", ("y", 0), PAIRS, ValueError, "named axes"),
    # covering fewer or more positions than the axes have (JAX's lowering: verifier error / index error)
    ("psum", "y", [[0, 1]], ValueError, "cover 2 of the 4 positions"),
    ("all_gather", "y", [[0, 1]], ValueError, "cover 2 of the 4 positions"),
    ("psum", "y", [[0, 1, 2, 3], [4, 5, 6, 7]], IndexError, "index 4"),
    ("all_gather", "y", [[0, 1, 2, 3], [4, 5, 6, 7]], IndexError, "index 4"),
    # no groups at all
    ("psum", "y", [], ValueError, "cover 0 of the 4"),
    ("all_gather", "y", [], IndexError, "empty"),
    ("pmean", "y", [], IndexError, "empty"),
    # unequal groups: all_reduce takes them, the others do not
    ("all_gather", "y", [[0, 1, 2], [3]], ValueError, "same size"),
    ("psum_scatter", "y", [[0, 1, 2], [3]], ValueError, "same size"),
    ("all_to_all", "y", [[0, 1, 2], [3]], ValueError, "equally sized"),
    # sizes checked against the group's size
    ("all_to_all_untiled", "y", PAIRS, ValueError, "they are 2 and 4"),
    ("psum_scatter_untiled", "y", PAIRS, ValueError, None),
]


@pytest.mark.parametrize("op,axis,groups,error,match", CALL_ERRORS)
def test_errors(libs, op, axis, groups, error, match):
    x = np.ones((24, 8), F32)

    def build(L):
        lax = L.lax
        call = {"psum": lambda a: lax.psum(a, axis, axis_index_groups=groups),
                "pmean": lambda a: lax.pmean(a, axis, axis_index_groups=groups),
                "pmax": lambda a: lax.pmax(a, axis, axis_index_groups=groups),
                "pmin": lambda a: lax.pmin(a, axis, axis_index_groups=groups),
                "all_gather": lambda a: lax.all_gather(a, axis, axis_index_groups=groups, tiled=True),
                "psum_scatter": lambda a: lax.psum_scatter(a, axis, axis_index_groups=groups, tiled=True),
                "psum_scatter_untiled": lambda a: lax.psum_scatter(a[:4], axis, axis_index_groups=groups),
                "all_to_all": lambda a: lax.all_to_all(a, axis, 0, 0, axis_index_groups=groups, tiled=True),
                "all_to_all_untiled": lambda a: lax.all_to_all(a[:4], axis, 0, 0, axis_index_groups=groups),
                }[op]
        return _smap(L, call, False, out_specs=L.P())
    raise_both(libs, build, error, x, match=match)
