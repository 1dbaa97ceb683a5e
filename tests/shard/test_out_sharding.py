"""``out_sharding=`` of einsum, reshape and the creation functions on a (2, 4) mesh of Explicit axes, against JAX 0.10.

Each case runs the same code with ``toolkit.numpy``/``toolkit.lax`` and ``jax.numpy``/``jax.lax``
(eagerly and under jit) and compares the result's type (``typeof``), its placement and values;
the error cases compare the messages.
"""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.core.sharding_types import ShardingTypeError
from toolkit.shard import AxisType, NamedSharding, P

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
A = (np.arange(64, dtype=np.float32).reshape(8, 8) - 20) / 9
C = np.arange(512, dtype=np.float32).reshape(8, 8, 8) / 100


class Lib:
    """What a case needs of one library: numpy, lax, P, device_put by spec, jit."""

    def __init__(self, np_, lax_, spec, put, jit, named, get_mesh):
        self.np, self.lax, self.P, self.jit = np_, lax_, spec, jit
        self._put, self._named, self._get_mesh = put, named, get_mesh

    def put(self, a, *spec):
        return self._put(a, self.P(*spec))

    def named(self, *spec):
        """``NamedSharding(current mesh, P(*spec))``."""
        return self._named(self._get_mesh(), self.P(*spec))


def _tlib():
    return Lib(tnp, lax, P, toolkit.device_put, toolkit.jit, NamedSharding, toolkit.shard.get_mesh)


def _jlib(jx):
    import jax.numpy as jnp
    from jax.sharding import NamedSharding as JNamedSharding
    from jax.sharding import PartitionSpec as JP
    return Lib(jnp, jx.lax, JP, jx.device_put, jx.jit, JNamedSharding, jx.sharding.get_mesh)


# Each case is a function of a Lib; where the library's functions are given arrays those are placed
# inside the case, so the jit variant gets them as arguments through `L.jit`.
CASES = {
    # creation
    "zeros": lambda L: L.np.zeros((8, 4), out_sharding=L.P("x")),
    "zeros_jit": lambda L: L.jit(lambda: L.np.zeros((8, 4), out_sharding=L.P("x")))(),
    "ones_int_merged_axes": lambda L: L.np.ones((8, 4), np.int32, out_sharding=L.P(("x", "y"))),
    "empty": lambda L: L.np.empty((8, 4), out_sharding=L.P(None, "y")),
    "full": lambda L: L.np.full((8, 4), 3.0, np.float32, out_sharding=L.P("x", "y")),
    "full_jit": lambda L: L.jit(lambda: L.np.full((8, 4), 2, np.int32, out_sharding=L.P("y")))(),
    "full_array_fill": lambda L: L.np.full((8, 4), L.np.arange(4.0), out_sharding=L.P("x")),
    "zeros_scalar": lambda L: L.np.zeros((), out_sharding=L.P()),
    "zeros_like": lambda L: L.np.zeros_like(L.put(X, "x"), out_sharding=L.P(None, "y")),
    "ones_like_jit": lambda L: L.jit(lambda a: L.np.ones_like(a, out_sharding=L.P("y")))(L.put(X, "x")),
    "full_like": lambda L: L.np.full_like(L.put(X, "x"), 2, out_sharding=L.P("y")),
    "zeros_like_shape": lambda L: L.np.zeros_like(L.put(X, "x"), shape=(16,), out_sharding=L.P("x")),
    "arange": lambda L: L.np.arange(8, out_sharding=L.P("x")),
    "arange_jit": lambda L: L.jit(lambda: L.np.arange(16, out_sharding=L.P(("x", "y"))))(),
    "arange_step": lambda L: L.np.arange(0, 16, 2, out_sharding=L.P("y")),
    "arange_float": lambda L: L.np.arange(1.0, 9.0, out_sharding=L.P("y")),
    "broadcasted_iota": lambda L: L.lax.broadcasted_iota(np.int32, (8, 4), 1, out_sharding=L.P("x", "y")),
    "broadcasted_iota_jit": lambda L: L.jit(
        lambda: L.lax.broadcasted_iota(np.float32, (8, 4), 0, out_sharding=L.P("y")))(),
    # reshape: merging 8,4@y is not inferable without out_sharding
    "lax_reshape": lambda L: L.lax.reshape(L.put(X, None, "y"), (32,), out_sharding=L.P("x")),
    "lax_reshape_jit": lambda L: L.jit(lambda a: L.lax.reshape(a, (32,), out_sharding=L.P("x")))(L.put(X, None, "y")),
    "np_reshape": lambda L: L.np.reshape(L.put(X, None, "y"), (4, 8), out_sharding=L.P("y", "x")),
    "method_reshape": lambda L: L.put(X, None, "y").reshape(4, 8, out_sharding=L.P("y")),
    "method_reshape_minus1_jit": lambda L: L.jit(lambda a: a.reshape(-1, out_sharding=L.P("y")))(L.put(X, None, "y")),
    "reshape_same_shape": lambda L: L.np.reshape(L.put(X, None, "y"), (8, 4), out_sharding=L.P("x")),
    "ravel": lambda L: L.np.ravel(L.put(X, None, "y"), out_sharding=L.P("y")),
    # einsum: a contraction over sharded dimensions is ambiguous without out_sharding
    "einsum_matmul": lambda L: L.np.einsum("ij,jk->ik", L.put(A, None, "y"), L.put(A, "y"), out_sharding=L.P("x")),
    "einsum_transposed": lambda L: L.np.einsum("ij,jk->ki", L.put(A, None, "y"), L.put(A, "y"),
                                               out_sharding=L.P("x")),
    "einsum_jit": lambda L: L.jit(lambda a, b: L.np.einsum("ij,jk->ki", a, b, out_sharding=L.P(None, "x")))(
        L.put(A, None, "y"), L.put(A, "y")),
    "einsum_three_operands": lambda L: L.np.einsum("ij,jk,kl->il", L.put(A, None, "y"), L.put(A, "y"),
                                                   L.put(A, None, "y"), out_sharding=L.P("y")),
    "einsum_reduction": lambda L: L.np.einsum("ij->i", L.put(A, None, "y"), out_sharding=L.P("x")),
    "einsum_reduction_3d": lambda L: L.np.einsum("ijk->ik", L.put(C, "x"), out_sharding=L.P("y")),
    "einsum_batched": lambda L: L.np.einsum("bij,bjk->bik", L.put(C, "x"), L.put(C, "x"), out_sharding=L.P("x", "y")),
    "einsum_batched_permuted": lambda L: L.np.einsum("bij,bjk->kbi", L.put(C, "x"), L.put(C, "x"),
                                                     out_sharding=L.P("x", "y")),
    "einsum_two_contracted": lambda L: L.np.einsum("ijk,jk->i", L.put(C, "x"), L.put(A, None, "y"),
                                                   out_sharding=L.P("y")),
    "einsum_full_contraction": lambda L: L.np.einsum("ij,ij->", L.put(A, None, "y"), L.put(A, None, "y"),
                                                     out_sharding=L.P()),
    "einsum_outer": lambda L: L.np.einsum("ij,k->ijk", L.put(A, None, "y"), L.put(A[0]),
                                          out_sharding=L.P("y", None, "x")),
    "einsum_trailing_none": lambda L: L.np.einsum("ij,jk->ik", L.put(A, None, "y"), L.put(A, "y"),
                                                  out_sharding=L.P("x", "y", None)),
    "einsum_named_sharding": lambda L: L.np.einsum("ij,jk->ik", L.put(A, None, "y"), L.put(A, "y"),
                                                   out_sharding=L.named("y")),
    "zeros_named_sharding_jit": lambda L: (lambda s: L.jit(lambda: L.np.zeros((8, 4), out_sharding=s))())(
        L.named(None, "y")),
}


def _run(lib, mesh, fun, set_mesh):
    with set_mesh(mesh):
        return fun(lib)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_sharding_matches_jax(tmesh, jx, jmesh, name):
    t = _run(_tlib(), tmesh, CASES[name], toolkit.set_mesh)
    j = _run(_jlib(jx), jmesh, CASES[name], jx.set_mesh)
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    # Eagerly too the array is placed as its type says.
    assert isinstance(t.sharding, NamedSharding)
    assert tuple(t.sharding.spec) == tuple(j.sharding.spec)
    np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-5)


def test_reshape_needs_out_sharding_like_jax(tmesh, jx, jmesh):
    """Without out_sharding the merge raises (as in JAX); with it the result is typed as given."""
    with toolkit.set_mesh(tmesh):
        x = toolkit.device_put(X, P(None, "y"))
        with pytest.raises(ShardingTypeError, match="This reshape is not supported"):
            lax.reshape(x, (32,))
        assert str(toolkit.typeof(lax.reshape(x, (32,), out_sharding=P("y")))) == "float32[32@y]"


def test_eager_calls_are_cached_by_value_and_type(tmesh):
    """Eager creation runs one cached jit per static arguments: 1 and 1.0 are different fills."""
    with toolkit.set_mesh(tmesh):
        i = tnp.full((8,), 1, out_sharding=P("x"))
        f = tnp.full((8,), 1.0, out_sharding=P("x"))
        i2 = tnp.full((8,), 1, out_sharding=P("x"))
    assert i.dtype == np.int32 and f.dtype == np.float32 and i2.dtype == np.int32
    # A Python scalar fill is weakly typed, as JAX's (jax.typeof(jnp.full((8,), 1)) is ~int32[8]).
    assert str(toolkit.typeof(i)) == "~int32[8@x]" and str(toolkit.typeof(f)) == "~float32[8@x]"


def test_auto_mesh_lays_out_without_typing(jx):
    from jax.sharding import AxisType as JAxisType
    from jax.sharding import PartitionSpec as JP
    import jax.numpy as jnp
    tm = toolkit.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    jm = jx.make_mesh((2, 4), ("x", "y"), axis_types=(JAxisType.Auto,) * 2)
    with toolkit.set_mesh(tm):
        t = tnp.zeros((8,), out_sharding=P())
        with pytest.raises(ValueError) as terr:
            tnp.zeros((8,), out_sharding=P("x"))
    with jx.set_mesh(jm):
        j = jnp.zeros((8,), out_sharding=JP())
        with pytest.raises(ValueError) as jerr:
            jnp.zeros((8,), out_sharding=JP("x"))
    assert str(toolkit.typeof(t)) == str(jx.typeof(j)) == "float32[8]"
    assert str(jerr.value).replace("jnp.", "toolkit.numpy.").startswith(str(terr.value))
    assert "cannot contain axis names that are of type Auto or Manual" in str(terr.value)


# -- errors: JAX's messages ------------------------------------------------------------------------

ERRORS = {
    "not_a_sharding_zeros": lambda L: L.np.zeros((8, 8), out_sharding="x"),
    "not_a_sharding_full": lambda L: L.np.full((8,), 1, out_sharding="y"),
    "not_a_sharding_full_like": lambda L: L.np.full_like(X, 1, out_sharding="y"),
    "not_a_sharding_ones_like": lambda L: L.np.ones_like(X, out_sharding="y"),
    "not_a_sharding_arange": lambda L: L.np.arange(8, out_sharding="y"),
    "not_a_sharding_iota": lambda L: L.lax.broadcasted_iota(np.int32, (8,), 0, out_sharding="y"),
    "not_a_sharding_reshape": lambda L: L.lax.reshape(L.put(X, None, "y"), (32,), out_sharding="x"),
    "not_a_sharding_einsum": lambda L: L.np.einsum("ij->i", L.put(A, None, "y"), out_sharding="x"),
    "not_a_sharding_matmul": lambda L: L.np.matmul(L.put(A, None, "y"), L.put(A, "y"), out_sharding="x"),
    "axis_not_in_mesh_zeros": lambda L: L.np.zeros((8,), out_sharding=L.P("z")),
    "axis_not_in_mesh_reshape": lambda L: L.lax.reshape(L.put(X, None, "y"), (32,), out_sharding=L.P("z")),
    "axis_not_in_mesh_einsum": lambda L: L.np.einsum("ij,jk->ik", L.put(A, None, "y"), L.put(A, "y"),
                                                     out_sharding=L.P("z")),
    "axis_not_in_mesh_matmul": lambda L: L.np.matmul(L.put(A, None, "y"), L.put(A, "y"), out_sharding=L.P("z")),
    "axis_twice_zeros": lambda L: L.np.zeros((8, 8), out_sharding=L.P("x", "x")),
    "axis_twice_einsum": lambda L: L.np.einsum("ij,jk->ik", L.put(A, None, "y"), L.put(A, "y"),
                                               out_sharding=L.P(None, ("x", "y", "x"))),
    "indivisible_zeros": lambda L: L.np.zeros((6,), out_sharding=L.P("y")),
    "indivisible_reshape": lambda L: L.lax.reshape(L.put(X, None, "y"), (2, 16), out_sharding=L.P("y")),
    "indivisible_iota": lambda L: L.lax.broadcasted_iota(np.int32, (6,), 0, out_sharding=L.P("y")),
    "indivisible_einsum": lambda L: L.np.einsum("ij,k->ik", L.put(A[:6]), L.put(A[0]), out_sharding=L.P("y")),
    "longer_than_rank_zeros": lambda L: L.np.zeros((8,), out_sharding=L.P("x", "y")),
    "longer_than_rank_reshape": lambda L: L.lax.reshape(L.put(X, None, "y"), (32,), out_sharding=L.P("x", "y")),
    "longer_than_rank_iota": lambda L: L.lax.broadcasted_iota(np.int32, (8,), 0, out_sharding=L.P("y", "x")),
    "longer_than_rank_matmul": lambda L: L.np.matmul(L.put(A, None, "y"), L.put(A, "y"), out_sharding=L.P(None, "y", "x")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(tmesh, jx, jmesh, name):
    def error(lib, mesh, set_mesh):
        with set_mesh(mesh):
            with pytest.raises(Exception) as err:
                ERRORS[name](lib)
        return err.value
    t = error(_tlib(), tmesh, toolkit.set_mesh)
    j = error(_jlib(jx), jmesh, jx.set_mesh)
    if name.startswith("longer_than_rank"):
        # JAX fails an assertion, ``AssertionError: (ndim, spec)``; toolkit says what is wrong.
        assert type(j) is AssertionError and str(j).startswith("(")
        assert type(t) is ValueError and "only trailing None entries may exceed the rank" in str(t)
        return
    if name.startswith("indivisible"):
        # The same up to the mesh's repr (JAX's AbstractMesh names the device kind and platform).
        assert str(t).split("AbstractMesh")[0] == str(j).split("AbstractMesh")[0]
        assert type(t) is type(j) is ValueError
        return
    # toolkit's messages name toolkit's functions where JAX's name jnp's.
    assert str(t) == str(j).replace("jnp.", "toolkit.numpy.")
    assert type(t).__name__ == type(j).__name__  # DuplicateSpecError for an axis used twice, in both


def test_mesh_of_sharding_must_be_the_context_mesh(tmesh):
    other = toolkit.make_mesh((4, 2), ("x", "y"))
    with toolkit.set_mesh(tmesh):
        with pytest.raises(ValueError, match=r"^Context mesh .* should match the mesh of sharding .* passed to "
                                             r"toolkit\.numpy\.zeros\.$"):
            tnp.zeros((8,), out_sharding=NamedSharding(other, P("x")))


def test_partition_spec_needs_a_mesh():
    with pytest.raises(ValueError, match="needs a mesh in context"):  # JAX's type for out_sharding=
        tnp.zeros((8,), out_sharding=P("x"))


# -- lowering: the constraint JAX's module has -----------------------------------------------------

def _sdy_lines(text):
    return [line.split("=", 1)[-1].strip() for line in text.splitlines()
            if "sdy.sharding_constraint" in line or "func.func public @main" in line]


def test_lowering_has_jax_constraints(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP

    def body(np_, lax_, spec):
        return lambda y: (lax_.reshape(y, (32,), out_sharding=spec("x")) + np_.arange(32, out_sharding=spec("x"))
                          + np_.zeros((32,), out_sharding=spec("x")))
    with toolkit.set_mesh(tmesh):
        t = toolkit.jit(body(tnp, lax, P)).lower(toolkit.device_put(X, P(None, "y"))).as_text()
    with jx.set_mesh(jmesh):
        j = jx.jit(body(jnp, jx.lax, JP)).lower(jx.device_put(X, JP(None, "y"))).as_text()
    assert _sdy_lines(t) == _sdy_lines(j)
    assert sum('sdy.sharding_constraint' in line for line in t.splitlines()) == 6
