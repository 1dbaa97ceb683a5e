"""``batch_matmul`` (toolkit/lax/linalg.py, ``jax.lax``'s wrapper over ``dot_general``) checked against
``jax.lax`` 0.10.2."""

import numpy as np
import pytest
from _oracle import assert_same as _same
from _oracle import raises_like

import toolkit.lax as tl

jax = pytest.importorskip("jax")
jl = pytest.importorskip("jax.lax")

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("bad", [
    lambda m: m.batch_matmul(np.ones((2, 3)), np.ones((2, 3, 4))),
    lambda m: m.batch_matmul(np.ones(3), np.ones(3)),
])
def test_errors_match_jax(bad):
    raises_like(lambda: bad(tl), lambda: bad(jl))


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((2, 2, 3, 4), (2, 2, 4, 1))])
def test_batch_matmul(shapes):
    a = RNG.standard_normal(shapes[0]).astype(np.float32)
    b = RNG.standard_normal(shapes[1]).astype(np.float32)
    _same(tl.batch_matmul(a, b), jl.batch_matmul(a, b), rtol=1e-5, atol=1e-5)
    ai, bi = (a * 3).astype(np.int32), (b * 3).astype(np.int32)
    _same(tl.batch_matmul(ai, bi), jl.batch_matmul(ai, bi))


_DOT = (((1,), (0,)), ((), ()))
_DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, "bfloat16", np.complex64, np.bool_]


@pytest.mark.parametrize("preferred", [None, np.float32, np.int16, np.float64])
def test_dot_general_of_two_dtypes_is_jaxs(preferred):
    # JAX 0.10 takes operands of two dtypes (XLA's rule: the higher precision one wins, complex above real, then
    # exponent, mantissa, width, signedness) and refuses equal-ranked pairs and narrowed integer results.
    # (A complex product with a real preferred type converts complex to real, which XLA CPU at the suite's flags
    # cannot compile, for JAX as for toolkit.)
    types = [t for t in _DTYPES if preferred is None or t is not np.complex64]
    for lhs_type in types:
        for rhs_type in types:
            lhs, rhs = np.ones((2, 3), lhs_type), np.ones((3, 4), rhs_type)
            try:
                want = jl.dot_general(lhs, rhs, _DOT, preferred_element_type=preferred)
            except TypeError:
                raises_like(lambda: tl.dot_general(lhs, rhs, _DOT, preferred_element_type=preferred),
                            lambda: jl.dot_general(lhs, rhs, _DOT, preferred_element_type=preferred))
                continue
            _same(tl.dot_general(lhs, rhs, _DOT, preferred_element_type=preferred), want)


def test_dot_general_mixed_dtype_gradients_are_jaxs():
    lhs = RNG.standard_normal((2, 3)).astype(np.float32)
    rhs = RNG.standard_normal((3, 4)).astype(np.float16)

    def loss(library):
        return lambda x, y: library.lax.dot_general(x, y, _DOT).sum()
    import toolkit
    for got, want in zip(toolkit.grad(loss(toolkit), argnums=(0, 1))(lhs, rhs),
                         jax.grad(loss(jax), argnums=(0, 1))(lhs, rhs)):
        _same(got, want)


@pytest.mark.parametrize("dims", [
    (((3,), (0,)), ((), ())), (((1,), (1,)), ((0, 0), (0, 0))), (((1, 1), (1, 2)), ((), ())),
    (((1,), (1,)), ((1,), (0,))), (((1,), (2,)), ((), ())), (((1,), (1,)), ((0,), ())), (((1, 2), (1,)), ((), ())),
])
def test_dot_general_dimension_errors_are_jaxs(dims):
    operand = np.ones((2, 3, 4), np.float32)
    raises_like(lambda: tl.dot_general(operand, operand, dims), lambda: jl.dot_general(operand, operand, dims))
