"""Sharding rules of gather, scatter, conv_general_dilated, top_k, sort, rng_bit_generator and scan's stacked
outputs on a (2, 4) mesh of Explicit axes, checked against JAX 0.10 in the same run: the result's type,
its values, and JAX's error message where JAX refuses the shardings."""

import re

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp
from toolkit import lax
from toolkit.core.sharding_types import SHARDING_RULES, ShardingTypeError
from toolkit.lax import convolution, indexing, random_bits, sorting
from toolkit.shard import P

pytestmark = pytest.mark.multidevice

X = np.arange(32, dtype=np.float32).reshape(8, 4)
IDX = np.array([1, 2, 3], np.int32)
IMG = np.arange(2 * 8 * 8 * 4, dtype=np.float32).reshape(2, 8, 8, 4) / 100  # NHWC
IMGN = np.arange(8 * 4 * 8 * 8, dtype=np.float32).reshape(8, 4, 8, 8) / 100  # NCHW
K = (np.arange(3 * 3 * 4 * 8, dtype=np.float32).reshape(3, 3, 4, 8) - 100) / 300  # HWIO
KO = (np.arange(8 * 4 * 3 * 3, dtype=np.float32).reshape(8, 4, 3, 3) - 100) / 300  # OIHW


def test_the_primitives_have_rules():
    for p in (indexing.gather_p, indexing.scatter_p, indexing.scatter_add_p, indexing.scatter_mul_p,
              indexing.scatter_min_p, indexing.scatter_max_p, convolution.conv_general_dilated_p, sorting.top_k_p,
              sorting.sort_p, random_bits.rng_bit_generator_p):
        assert SHARDING_RULES.lookup(p) is not None, p  # imports the family's rule module


def _conv(lx, x, k, strides=(1, 1), dn=("NHWC", "HWIO", "NHWC")):
    return lx.conv_general_dilated(x, k, strides, "SAME", dimension_numbers=dn)


# Each case: fun(np_, lax_, put, P) run by toolkit (eagerly and under jit) and by JAX on the same mesh.
CASES = {
    # gather: x[idx], jnp.take, an embedding lookup; the operand's unsliced dimensions keep their spec
    "getitem_rows": lambda np_, lx, put, P: put(X, P(None, "y"))[np_.array(IDX)],
    "getitem_cols": lambda np_, lx, put, P: put(X, P("x"))[:, np_.array(IDX)],
    "getitem_typed_replicated_idx": lambda np_, lx, put, P: put(X, P(None, "y"))[put(IDX, P())],
    "take_axis0": lambda np_, lx, put, P: np_.take(put(X, P(None, "y")), np_.array(IDX), axis=0),
    "embedding": lambda np_, lx, put, P: np_.take(put(X, P(None, "y")), np_.array([[0, 7], [3, 3]]), axis=0),
    # scatter: window dimensions sharded alike in operand and updates, or only in the operand when the update
    # covers the whole window
    "at_add_rows": lambda np_, lx, put, P: put(X, P(None, "y")).at[np_.array([1, 2])].add(
        put(np.ones((2, 4), np.float32), P(None, "y"))),
    "at_max_cols": lambda np_, lx, put, P: put(X, P("x")).at[:, np_.array([1, 2])].max(
        put(np.full((8, 2), 9.0, np.float32), P("x"))),
    "at_mul_cols": lambda np_, lx, put, P: put(X, P("x")).at[:, np_.array([0, 3])].mul(
        put(np.full((8, 2), 2.0, np.float32), P("x"))),
    "at_min_cols": lambda np_, lx, put, P: put(X, P("x")).at[:, np_.array([0, 3])].min(
        put(np.full((8, 2), 5.0, np.float32), P("x"))),
    "at_set_cols": lambda np_, lx, put, P: put(X, P("x")).at[:, np_.array([0, 3])].set(
        put(np.zeros((8, 2), np.float32), P("x"))),
    # conv_general_dilated: the lhs's spec position by position (batch, spatial), rhs replicated
    "conv_nhwc_batch": lambda np_, lx, put, P: _conv(lx, put(IMG, P("x")), K),
    "conv_nchw_batch_xy": lambda np_, lx, put, P: _conv(lx, put(IMGN, P(("x", "y"))), KO, dn=("NCHW", "OIHW", "NCHW")),
    "conv_spatial": lambda np_, lx, put, P: _conv(lx, put(IMG, P(None, "y")), K),
    "conv_spatial_strided": lambda np_, lx, put, P: _conv(lx, put(IMG, P(None, "y")), K, strides=(2, 2)),
    "conv_nchw_to_nhwc": lambda np_, lx, put, P: _conv(lx, put(IMGN, P(None, None, "y")), KO,
                                                      dn=("NCHW", "OIHW", "NHWC")),
    # top_k and sort: unsharded along the axis they work on, the other dimensions keep their spec
    "top_k_values": lambda np_, lx, put, P: lx.top_k(put(X, P("x")), 2)[0],
    "top_k_indices": lambda np_, lx, put, P: lx.top_k(put(X, P("x")), 2)[1],
    "sort_two_operands": lambda np_, lx, put, P: lx.sort((put(X, P("x")), put(-X, P("x"))), dimension=1,
                                                       num_keys=1)[1],
    # rng_bit_generator: the key keeps its sharding, the bits are replicated
    "rng_key": lambda np_, lx, put, P: lx.rng_bit_generator(put(np.arange(4, dtype=np.uint32), P("y")), (8, 4))[0],
    "rng_bits": lambda np_, lx, put, P: lx.rng_bit_generator(put(np.arange(4, dtype=np.uint32), P("y")), (8, 4))[1],
    # scan: the stacked outputs (ys) are the body's per-iteration types with an unsharded leading dimension
    "scan_ys_from_carry": lambda np_, lx, put, P: lx.scan(lambda c, _: (c + 1, c * 2), put(X[0], P("y")), None,
                                                       length=3)[1],
    "scan_ys_2d_from_carry": lambda np_, lx, put, P: lx.scan(lambda c, _: (c * 2, c), put(X, P("x", "y")), None,
                                                          length=2)[1],
}

# Values JAX does not define bit for bit (rng_bit_generator's default algorithm is XLA's choice): types only.
TYPES_ONLY = {"rng_bits", "rng_key"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rules_match_jax(tmesh, jx, jmesh, name):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    fun = CASES[name]
    with toolkit.set_mesh(tmesh):
        t = fun(tnp, lax, toolkit.device_put, P)
        tj = toolkit.jit(lambda: fun(tnp, lax, toolkit.device_put, P))()
    with jx.set_mesh(jmesh):
        j = fun(jnp, jx.lax, jx.device_put, JP)
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    assert str(toolkit.typeof(tj)) == str(jx.typeof(j))
    assert tuple(tj.sharding.spec) == tuple(j.sharding.spec)
    if name not in TYPES_ONLY:
        np.testing.assert_allclose(np.asarray(t), np.asarray(j), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(np.asarray(tj), np.asarray(j), rtol=1e-5, atol=1e-5)


# Where the rules are JAX's but toolkit.numpy builds the operands differently (outside the rules' reach):
# JAX gives argsort's iota the operand's sharding; toolkit.numpy leaves it untyped. (`.at[]` updates and
# take_along_axis, once here, are checked by test_at_and_take_along_axis_match_jax below.)
def test_argsort_types_its_iota_like_the_operand(tmesh, jx, jmesh):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    with jx.set_mesh(jmesh):
        j = jnp.argsort(jx.device_put(X, JP("x")), axis=1)
    with toolkit.set_mesh(tmesh):
        t = tnp.argsort(toolkit.device_put(X, P("x")), axis=1)
        traced = toolkit.jit(lambda a: tnp.argsort(a, axis=1))(toolkit.device_put(X, P("x")))
    assert str(toolkit.typeof(t)) == str(toolkit.typeof(traced)) == str(jx.typeof(j))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


# -- errors where JAX raises ---------------------------------------------------------------------

ERRORS = {
    "gather_sliced_sharded_dim": lambda np_, lx, put, P: put(X, P("x"))[np_.array(IDX)],
    "gather_sharded_indices": lambda np_, lx, put, P: put(X, P(None, "y"))[put(np.arange(8, dtype=np.int32) % 3,
                                                                              P("x"))],
    "gather_both_dims_sharded": lambda np_, lx, put, P: np_.take(put(X, P("x", "y")), np_.array(IDX), axis=1),
    "scatter_sliced_sharded_dim": lambda np_, lx, put, P: put(X, P("x")).at[np_.array([1, 2])].add(1.0),
    # x.at[:, [1, 2]].add(u) with u's query dimension sharded (JAX's .at[] would reshard u first)
    "scatter_sharded_query_dim": lambda np_, lx, put, P: lx.scatter_add(
        put(X, P("x")), np_.array([[1], [2]], np_.int32), put(np.ones((8, 2), np.float32), P(None, "x")),
        lx.ScatterDimensionNumbers(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))),
    "conv_feature_sharded": lambda np_, lx, put, P: _conv(lx, put(IMG, P(None, None, None, "y")), K),
    "conv_rhs_sharded": lambda np_, lx, put, P: _conv(lx, put(IMG, P("x")), put(K, P(None, None, None, "y"))),
    "conv_only_rhs_sharded": lambda np_, lx, put, P: _conv(lx, IMG, put(K, P(None, None, None, "y"))),
    "conv_indivisible_out_dim": lambda np_, lx, put, P: _conv(lx, put(IMG, P(None, "y")), K, strides=(4, 4)),
    "top_k_sharded_axis": lambda np_, lx, put, P: lx.top_k(put(X, P(None, "y")), 2),
    "sort_sharded_axis": lambda np_, lx, put, P: np_.sort(put(X, P(None, "y")), axis=1),
    "sort_unequal_shardings": lambda np_, lx, put, P: lx.sort((put(X, P("x")), np_.ones((8, 4), np_.float32)),
                                                            dimension=1, num_keys=1),
}


def _normalized(message: str) -> str:
    # JAX's conv prints its output shape as numpy ints.
    message = re.sub(r"np\.int64\((\d+)\)", r"\1", message)
    return message


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(tmesh, jx, jmesh, name):
    import jax.numpy as jnp
    from jax._src.core import ShardingTypeError as JaxShardingTypeError
    from jax.sharding import PartitionSpec as JP
    fun = ERRORS[name]
    with toolkit.set_mesh(tmesh), pytest.raises(ShardingTypeError) as terr:
        fun(tnp, lax, toolkit.device_put, P)
    with jx.set_mesh(jmesh), pytest.raises(JaxShardingTypeError) as jerr:
        fun(jnp, jx.lax, jx.device_put, JP)
    assert _normalized(str(terr.value)) == _normalized(str(jerr.value))


def test_gather_with_batching_dims_matches_jax(tmesh, jx, jmesh):
    # lax.gather with operand_batching_dims: the batch dimension's sharding resolves from operand or indices.
    operand = np.arange(8 * 6 * 4, dtype=np.float32).reshape(8, 6, 4)
    idx = (np.arange(8 * 3, dtype=np.int32).reshape(8, 3, 1) * 5) % 6

    def fun(lx, put, P, dn_cls, ospec, ispec):
        dn = dn_cls(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
                    start_indices_batching_dims=(0,))
        return lx.gather(put(operand, ospec), put(idx, ispec), dn, (1, 1, 4), mode="clip")

    from jax.lax import GatherDimensionNumbers as JG
    from jax.sharding import PartitionSpec as JP
    for ospec, ispec in ((("x",), ()), ((), ("x",)), (("x", None, "y"), ("x",))):
        with toolkit.set_mesh(tmesh):
            t = fun(lax, toolkit.device_put, P, indexing.GatherDimensionNumbers, P(*ospec), P(*ispec))
        with jx.set_mesh(jmesh):
            j = fun(jx.lax, jx.device_put, JP, JG, JP(*ospec), JP(*ispec))
        assert str(toolkit.typeof(t)) == str(jx.typeof(j)), (ospec, ispec)
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))


def test_scatter_with_batching_dims_matches_jax(tmesh, jx, jmesh):
    operand = np.zeros((8, 6), np.float32)
    idx = (np.arange(8 * 2, dtype=np.int32).reshape(8, 2, 1) * 5) % 6
    upd = np.arange(16, dtype=np.float32).reshape(8, 2)

    def fun(lx, put, P, dn_cls, ospec, ispec, uspec):
        dn = dn_cls(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                    operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
        return lx.scatter_add(put(operand, ospec), put(idx, ispec), put(upd, uspec), dn)

    from jax.lax import ScatterDimensionNumbers as JS
    from jax.sharding import PartitionSpec as JP
    for specs in ((("x",), (), ()), ((), ("x",), ()), ((), (), ("x",)), (("x",), ("x",), ("x",))):
        with toolkit.set_mesh(tmesh):
            t = fun(lax, toolkit.device_put, P, indexing.ScatterDimensionNumbers, *(P(*s) for s in specs))
        with jx.set_mesh(jmesh):
            j = fun(jx.lax, jx.device_put, JP, JS, *(JP(*s) for s in specs))
        assert str(toolkit.typeof(t)) == str(jx.typeof(j)), specs
        np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    # batch dimension sharded differently in operand and updates: ambiguous, as in JAX
    from jax._src.core import ShardingTypeError as JaxShardingTypeError
    with toolkit.set_mesh(tmesh), pytest.raises(ShardingTypeError) as terr:
        fun(lax, toolkit.device_put, P, indexing.ScatterDimensionNumbers, P("x"), P(), P("y"))
    with jx.set_mesh(jmesh), pytest.raises(JaxShardingTypeError) as jerr:
        fun(jx.lax, jx.device_put, JP, JS, JP("x"), JP(), JP("y"))
    assert str(terr.value) == str(jerr.value)


def test_grad_through_gather_matches_jax(tmesh, jx, jmesh):
    # JAX's transpose of gather is a scatter_add into zeros of the operand's type
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP

    def loss(np_):
        return lambda w: (np_.take(w, np_.array([[0, 7], [3, 3]]), axis=0) ** 2).sum()

    with toolkit.set_mesh(tmesh):
        t = toolkit.grad(loss(tnp))(toolkit.device_put(X, P(None, "y")))
    with jx.set_mesh(jmesh):
        j = jx.grad(loss(jnp))(jx.device_put(X, JP(None, "y")))
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))
    np.testing.assert_allclose(np.asarray(t), np.asarray(j))


def test_scan_ys_from_xs_match_jax(tmesh, jx, jmesh):
    from jax.sharding import PartitionSpec as JP

    def fun(lx, put, P):
        return lx.scan(lambda c, a: (c + a, a * 2), put(np.zeros(4, np.float32), P("y")), put(X, P(None, "y")))[1]

    with toolkit.set_mesh(tmesh):
        t = fun(lax, toolkit.device_put, P)
    with jx.set_mesh(jmesh):
        j = fun(jx.lax, jx.device_put, JP)
    np.testing.assert_allclose(np.asarray(t), np.asarray(j))
    assert str(toolkit.typeof(t)) == str(jx.typeof(j))


def test_eager_ops_are_cached_per_out_sharding_override(tmesh):
    """An eager op's executable is not reused under an override that types its result otherwise."""
    from toolkit.core import sharding_types
    from toolkit.lax import structural

    with toolkit.set_mesh(tmesh):
        typed = toolkit.typeof(toolkit.device_put(X, P("x"))).sharding
        plain = structural.broadcast_in_dim(np.float32(0), (8, 4), ())  # compiled and cached untyped
        with sharding_types.out_sharding_override("broadcast_in_dim", typed):
            zeros = structural.broadcast_in_dim(np.float32(0), (8, 4), ())
    assert str(toolkit.typeof(plain)) == "float32[8,4]"
    assert str(toolkit.typeof(zeros)) == "float32[8@x,4]"


# -- x.at[] and take_along_axis as toolkit.numpy builds them, against JAX's jnp -----------------------
# `.at[idx].op(v)` broadcasts v to the slice's shape with the slice's sharding (the sliced dimensions keep
# the operand's spec, the advanced block the index arrays'), as JAX's indexer does; `out_sharding=` runs the
# indexing with the Explicit axes Auto and reshards. take_along_axis gathers with batching dimensions.

I82 = (np.arange(16, dtype=np.int32).reshape(8, 2) * 3) % 4 - 1  # negative entries wrap once
I34 = (np.arange(12, dtype=np.int32).reshape(3, 4) * 5) % 8

AT_CASES = {
    "at_add_scalar_to_cols": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].add(1.0),
    "at_set_typed_row": lambda np_, put, P: put(X, P(None, "y")).at[3].set(put(np.full(4, 9.0, np.float32), P("y"))),
    "at_set_typed_rows": lambda np_, put, P: put(X, P(None, "y")).at[np_.array([1, 5])].set(
        put(np.full(4, 9.0, np.float32), P("y"))),
    "at_max_scalar_cols": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].max(9.0),
    "at_min_row_to_cols": lambda np_, put, P: put(X, P("x")).at[:, np_.array([0, 3])].min(
        np.array([5.0, 6.0], np.float32)),
    "at_mul_numpy_cols": lambda np_, put, P: put(X, P("x")).at[:, np_.array([0, 3])].mul(
        np.full((8, 2), 2.0, np.float32)),
    "at_subtract_cols": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].subtract(1.0),
    "at_set_slice": lambda np_, put, P: put(X, P("x")).at[:, 1:3].set(7.0),
    "at_add_reversed_strided": lambda np_, put, P: put(X, P(None, "y")).at[::-3].add(1.0),
    "at_add_newaxis": lambda np_, put, P: put(X, P("x")).at[:, None, np_.array([2, 0])].add(np.ones((1, 2), np.float32)),
    "at_set_everything": lambda np_, put, P: put(X, P("x")).at[...].set(0.0),
    "at_get_out_sharding": lambda np_, put, P: put(X, P(None, "y")).at[np_.array([1, 2])].get(out_sharding=P("x")),
    "at_get_out_sharding_sliced_sharded": lambda np_, put, P: put(X, P("x")).at[np_.array([1, 6])].get(
        out_sharding=P(None, "y")),
    "at_add_out_sharding": lambda np_, put, P: put(X, P("x")).at[np_.array([1, 2])].add(1.0, out_sharding=P("x")),
    "at_subtract_out_sharding": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].subtract(
        1.0, out_sharding=P("x", "y")),
    "take_along_axis": lambda np_, put, P: np_.take_along_axis(put(X, P("x")), put(np.zeros((8, 2), np.int32),
                                                                                   P("x")), axis=1),
    "take_along_axis1_sharded_indices": lambda np_, put, P: np_.take_along_axis(put(X, P("x")), put(I82, P("x")), axis=1),
    "take_along_axis1_sharded_array": lambda np_, put, P: np_.take_along_axis(put(X, P("x")), I82, axis=1),
    "take_along_axis1_only_indices_sharded": lambda np_, put, P: np_.take_along_axis(X, put(I82, P("x")), axis=1),
    "take_along_axis0_sharded_y": lambda np_, put, P: np_.take_along_axis(put(X, P(None, "y")), put(I34, P(None, "y")),
                                                                        axis=0),
    "take_along_axis0_broadcast_indices": lambda np_, put, P: np_.take_along_axis(put(X, P(None, "y")), I34[:, :1],
                                                                                axis=0),
    "take_along_axis1_clip": lambda np_, put, P: np_.take_along_axis(put(X, P("x")), put(I82 + 3, P("x")), axis=1,
                                                                   mode="clip"),
}


@pytest.mark.parametrize("name", sorted(AT_CASES))
def test_at_and_take_along_axis_match_jax(tmesh, jx, jmesh, name):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    fun = AT_CASES[name]
    with toolkit.set_mesh(tmesh):
        t = fun(tnp, toolkit.device_put, P)
        tj = toolkit.jit(lambda: fun(tnp, toolkit.device_put, P))()
    with jx.set_mesh(jmesh):
        j = fun(jnp, jx.device_put, JP)
    assert str(toolkit.typeof(t)) == str(toolkit.typeof(tj)) == str(jx.typeof(j))
    assert tuple(t.sharding.spec) == tuple(tj.sharding.spec) == tuple(j.sharding.spec)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(j))
    np.testing.assert_array_equal(np.asarray(tj), np.asarray(j))


AT_ERRORS = {
    # the update sharded unlike the slice: JAX's broadcast to the slice's type refuses it
    "at_update_sharded_unlike_slice": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].add(
        put(np.ones((8, 2), np.float32), P(None, "x"))),
    "at_update_over_other_axis": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].add(
        put(np.ones((8, 2), np.float32), P("y"))),
    # the slice's sharded rows are partly updated: the scatter rule asks for out_sharding
    "at_partial_slice_of_sharded_dim": lambda np_, put, P: put(X, P("x", "y")).at[2:6].set(7.0),
    "at_int_index_on_sharded_dim": lambda np_, put, P: put(X, P("x")).at[3].set(7.0),
    "at_sharded_index_array": lambda np_, put, P: put(X, P(None, "y")).at[
        put(np.arange(8, dtype=np.int32) % 3, P("x"))].set(0.0),
    # out_sharding= checked as JAX checks it
    "at_out_sharding_unknown_axis": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].set(
        1.0, out_sharding=P("z")),
    "at_out_sharding_indivisible": lambda np_, put, P: put(X, P("x")).at[:, np_.array([1, 2])].max(
        1.0, out_sharding=P(None, ("x", "y"))),
    "at_get_out_sharding_unknown_axis": lambda np_, put, P: put(X, P("x")).at[np_.array([1, 2])].get(
        out_sharding=P("z")),
    # take_along_axis: the gathered axis sharded, or array and indices sharded over different axes
    "take_along_sharded_axis": lambda np_, put, P: np_.take_along_axis(put(X, P(None, "y")), put(I82, P("x")), axis=1),
    "take_along_axis_batch_mismatch": lambda np_, put, P: np_.take_along_axis(put(X, P("x")), put(I82, P("y")), axis=1),
}


@pytest.mark.parametrize("name", sorted(AT_ERRORS))
def test_at_and_take_along_axis_errors_match_jax(tmesh, jx, jmesh, name):
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as JP
    fun = AT_ERRORS[name]
    with toolkit.set_mesh(tmesh), pytest.raises((ShardingTypeError, ValueError)) as terr:
        fun(tnp, toolkit.device_put, P)
    with jx.set_mesh(jmesh), pytest.raises(Exception) as jerr:
        fun(jnp, jx.device_put, JP)
    assert isinstance(terr.value, ShardingTypeError) == (type(jerr.value).__name__ == "ShardingTypeError")
    assert _normalized(str(terr.value)) == _normalized(str(jerr.value))
