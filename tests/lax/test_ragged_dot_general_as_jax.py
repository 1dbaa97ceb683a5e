"""lax.ragged_dot_general (toolkit/lax/ragged_dot.py) against JAX in the same run: the three modes (ragged
non-contracting, contracting and batch dimension), eagerly and under jit, vmap, dtypes, gradients and JAX's
errors; ragged_dot as its special case."""

import numpy as np
import pytest
from ml_dtypes import bfloat16

import toolkit
from toolkit.lax.dot_algorithms import RaggedDotDimensionNumbers
from toolkit.lax.ragged_dot import ragged_dot, ragged_dot_general

from _oracle import assert_same_typed, raises_like

jax = pytest.importorskip("jax")
jlax = jax.lax

RNG = np.random.default_rng(7)
F = np.float32


def normal(*shape):
    return RNG.standard_normal(shape).astype(F)


def sizes(*shape, high=3):
    return RNG.integers(0, high, shape).astype(np.int32)


# (name, lhs, rhs, group_sizes, (dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions))
CASES = [
    # mode 1: [b, m, k] x [g, b, k, n], per-batch group sizes [b, g] (the last batch's groups stop short of m)
    ("noncontracting", normal(2, 6, 3), normal(3, 2, 3, 4), np.array([[1, 2, 3], [0, 4, 1]], np.int32),
     ((([2], [2]), ([0], [1])), [1], [0])),
    # mode 1: group sizes [g] broadcast over the batch; group dimension in the middle of rhs
    ("noncontracting_broadcast", normal(2, 6, 3), normal(2, 3, 3, 4), np.array([1, 2, 2], np.int32),
     ((([2], [1]), ([0], [0])), [1], [2])),
    # mode 1: lhs [m1, b, m2, k], ragged m2: group sizes [b, m1, g] in an order broadcast_in_dim must sort
    ("noncontracting_prefix", normal(3, 2, 5, 4), normal(2, 4, 3, 6), sizes(2, 3, 3),
     ((([3], [1]), ([1], [0])), [2], [2])),
    # mode 2: [b, m, k] x [b, k, n] -> [g, b, m, n]
    ("contracting", normal(2, 6, 3), normal(2, 3, 4), np.array([[1, 1], [2, 0]], np.int32),
     ((([2], [1]), ([0], [0])), [2], [])),
    # mode 2: two contracting dimensions, the second one ragged, group sizes [k1, g]
    ("contracting_two", normal(4, 2, 6), normal(6, 4, 3), sizes(4, 3),
     ((([0, 2], [1, 0]), ([], [])), [2], [])),
    # mode 3: a ragged batch dimension: the plain dot_general on CPU
    ("batch", normal(2, 6, 3), normal(2, 3, 4), np.array([1, 1], np.int32),
     ((([2], [1]), ([0], [0])), [0], [])),
]
IDS = [c[0] for c in CASES]


def general(numbers, of_jax=False):
    """``(lhs, rhs, group_sizes) -> ragged_dot_general(...)`` with fixed dimension numbers, toolkit's or JAX's."""
    if of_jax:
        return lambda lhs, rhs, gs: jlax.ragged_dot_general(lhs, rhs, gs, jlax.RaggedDotDimensionNumbers(*numbers))
    return lambda lhs, rhs, gs: ragged_dot_general(lhs, rhs, gs, RaggedDotDimensionNumbers(*numbers))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_modes_like_jax(case):
    _, lhs, rhs, gs, numbers = case
    want = general(numbers, of_jax=True)(lhs, rhs, gs)
    f = general(numbers)
    assert_same_typed(f(lhs, rhs, gs), want, rtol=1e-6, atol=1e-6, what="eager")
    assert_same_typed(toolkit.jit(f)(lhs, rhs, gs), want, rtol=1e-6, atol=1e-6, what="jit")


def test_ragged_dot_is_the_basic_case():
    lhs, rhs, gs = normal(7, 4), normal(3, 4, 5), np.array([2, 0, 3], np.int32)
    basic = ((([1], [1]), ([], [])), [0], [0])
    ours = toolkit.jit(lambda *a: (ragged_dot(*a), general(basic)(*a)))(lhs, rhs, gs)
    np.testing.assert_array_equal(np.asarray(ours[0]), np.asarray(ours[1]))
    assert_same_typed(ours[0], jax.jit(jlax.ragged_dot)(lhs, rhs, gs), rtol=1e-6, atol=1e-6)


def test_vmap():
    # JAX's batching rule covers ragged_dot with all three operands mapped over axis 0; for the general modes
    # its CPU expansion fails under vmap (np.int64 in_axes), so those compare with JAX example by example.
    lhs, rhs, gs = normal(3, 7, 4), normal(3, 2, 4, 5), np.array([[3, 4], [0, 2], [7, 0]], np.int32)
    assert_same_typed(toolkit.vmap(ragged_dot)(lhs, rhs, gs), jax.vmap(jlax.ragged_dot)(lhs, rhs, gs),
                      rtol=1e-6, atol=1e-6, what="ragged_dot")
    per_example = np.stack([jlax.ragged_dot(lhs[i], rhs[0], gs[0]) for i in range(3)])
    assert_same_typed(toolkit.vmap(ragged_dot, in_axes=(0, None, None))(lhs, rhs[0], gs[0]),
                      jax.numpy.asarray(per_example), rtol=1e-6, atol=1e-6, what="unmapped rhs")
    for name, lhs, rhs, gs, numbers in (CASES[0], CASES[3]):
        batched = [np.stack([x, x[::-1]]) for x in (lhs, rhs, gs)]
        per_example = np.stack([general(numbers, of_jax=True)(*(x[i] for x in batched)) for i in range(2)])
        assert_same_typed(toolkit.jit(toolkit.vmap(general(numbers)))(*batched), jax.numpy.asarray(per_example),
                          rtol=1e-6, atol=1e-6, what=name)


def test_dtypes():
    lhs, rhs, gs = normal(7, 4), normal(3, 4, 5), np.array([2, 1, 3], np.int32)
    ints = (RNG.integers(-100, 100, (7, 4)).astype(np.int8), RNG.integers(-100, 100, (3, 4, 5)).astype(np.int8))
    calls = {
        "bf16->f32": (lambda R: R.ragged_dot(lhs.astype(bfloat16), rhs.astype(bfloat16), gs,
                                             preferred_element_type=np.float32)),
        "bf16": (lambda R: R.ragged_dot(lhs.astype(bfloat16), rhs.astype(bfloat16), gs)),
        "int8->int32": (lambda R: R.ragged_dot(*ints, gs, preferred_element_type=np.int32)),
        "int8": (lambda R: R.ragged_dot(*ints, gs)),  # wraps around, as XLA's int8 dot
        "f32 x bf16": (lambda R: R.ragged_dot(lhs, rhs.astype(bfloat16), gs)),  # both converted to float32
        "uint8 group sizes": (lambda R: R.ragged_dot(lhs, rhs, gs.astype(np.uint8))),
        "precision": (lambda R: R.ragged_dot(lhs, rhs, gs, precision=R.Precision.HIGHEST)),
    }
    tk = toolkit.jit(lambda: {k: f(toolkit.lax) for k, f in calls.items()})()
    for name, f in calls.items():
        want = f(jlax)
        tol = 1e-2 if want.dtype == bfloat16 else 1e-5
        assert_same_typed(tk[name], want, rtol=tol, atol=tol, what=name)


@pytest.mark.x64
def test_float64():
    _, lhs, rhs, gs, numbers = CASES[0]
    lhs, rhs = lhs.astype(np.float64), rhs.astype(np.float64)
    assert_same_typed(toolkit.jit(general(numbers))(lhs, rhs, gs), general(numbers, of_jax=True)(lhs, rhs, gs),
                      rtol=1e-12, atol=1e-12)


def gradient_by_jvp(loss, lhs, rhs):
    """JAX's gradient of ``loss(lhs, rhs)`` from its forward mode, one basis direction per input entry (a
    ``lax.map``, as JAX cannot ``vmap`` a ragged_dot_general with unmapped group sizes)."""
    def directional(unit):
        tangents = unit[:lhs.size].reshape(lhs.shape), unit[lhs.size:].reshape(rhs.shape)
        return jax.jvp(loss, (lhs, rhs), tangents)[1]

    slopes = jlax.map(directional, np.eye(lhs.size + rhs.size, dtype=F))
    return slopes[:lhs.size].reshape(lhs.shape), slopes[lhs.size:].reshape(rhs.shape)


@pytest.mark.parametrize("case", [CASES[0], CASES[3], CASES[5]], ids=["noncontracting", "contracting", "batch"])
def test_grads(case):
    _, lhs, rhs, gs, numbers = case
    weights = RNG.standard_normal(general(numbers, of_jax=True)(lhs, rhs, gs).shape).astype(F)

    def loss(of_jax):
        return lambda lhs, rhs: (general(numbers, of_jax)(lhs, rhs, gs) * weights).sum()

    ours = toolkit.jit(toolkit.grad(loss(False), (0, 1)))(lhs, rhs)
    if case is CASES[0]:
        want = jax.grad(loss(True), (0, 1))(lhs, rhs)
    else:
        # JAX's transpose rule implements only the non-contracting mode; its JVP covers all three.
        with pytest.raises(NotImplementedError, match="Unimplemented grad_._dims for ragged dot general"):
            jax.grad(loss(True), (0, 1))(lhs, rhs)
        want = gradient_by_jvp(loss(True), lhs, rhs)
    for o, t, what in zip(ours, want, ("d lhs", "d rhs")):
        assert_same_typed(o, t, rtol=1e-5, atol=1e-5, what=what)


def test_errors_like_jax():
    lhs, rhs3, rhs4, gs = normal(2, 6, 3), normal(2, 3, 4), normal(3, 2, 3, 4), np.array([1, 2, 3], np.int32)
    cases = [
        (lhs, rhs4, gs, ((([2], [2]), ([0], [1])), [1, 2], [0])),  # two ragged dimensions
        (lhs, rhs4, gs, ((([2], [2]), ([0], [1])), [3], [0])),  # ragged dimension out of range
        (lhs, rhs4, np.int32(3), ((([2], [2]), ([0], [1])), [1], [0])),  # scalar group sizes
        (lhs, rhs4, np.ones((3, 3), np.int32), ((([2], [2]), ([0], [1])), [1], [0])),  # wrong prefix shape
        (lhs, rhs4, gs, ((([2], [2]), ([0], [1])), [1], [])),  # mode 1 without a group dimension
        (lhs, rhs4, gs, ((([2], [2]), ([0], [1])), [1], [4])),  # group dimension out of range
        (lhs, rhs4, gs, ((([2], [2]), ([0], [1])), [1], [2])),  # group dimension is contracting
        (lhs, rhs4, gs[:2], ((([2], [2]), ([0], [1])), [1], [0])),  # 2 groups for rhs's 3
        (lhs, rhs3, gs, ((([2], [1]), ([0], [0])), [2], [0])),  # mode 2 with a group dimension
        (lhs, rhs4, gs, ((([2], [1]), ([0], [1])), [1], [0])),  # contracting sizes differ
        (lhs, rhs4, gs, ((([2], [2]), ([0], [])), [1], [0])),  # unpaired batch dimensions
        (lhs, rhs4, gs, ((([2], [2]), ([0, 0], [1, 1])), [1], [0])),  # repeated batch dimension
        (lhs, rhs4, gs, ((([2], [5]), ([0], [1])), [1], [0])),  # rhs contracting out of range
        (lhs, rhs4, gs.astype(F), ((([2], [2]), ([0], [1])), [1], [0])),  # float group sizes
    ]
    for lhs_, rhs_, gs_, numbers in cases:
        raises_like(lambda: general(numbers)(lhs_, rhs_, gs_), lambda: general(numbers, of_jax=True)(lhs_, rhs_, gs_))
    ints = np.ones((6, 3), np.int32), np.ones((3, 3, 4), np.int32)
    with pytest.raises(TypeError):  # JAX's message names the class `numpy.int8`; toolkit's the dtype
        jlax.ragged_dot(*ints, gs, preferred_element_type=np.int8)
    with pytest.raises(TypeError, match="preferred_element_type` must not be narrower than the original type, got "
                                        "preferred_element_type of int8 for result type of int32"):
        ragged_dot(*ints, gs, preferred_element_type=np.int8)


def test_refusals():
    lhs, rhs, gs = normal(6, 3), normal(3, 3, 4), np.array([1, 2, 3], np.int32)
    basic = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    with pytest.raises(NotImplementedError, match="Unimplemented group_offset support"):
        ragged_dot_general(lhs, rhs, gs, basic, group_offset=np.zeros((1,), np.int32))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        ragged_dot_general(lhs, rhs, gs, basic, out_sharding=toolkit.sharding.PartitionSpec())
