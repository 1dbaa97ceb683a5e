"""``reshape``/``ravel`` with ``order="F"`` (column-major), and the other orders' errors, against JAX 0.10.2."""

import numpy as np
import pytest

import toolkit
import toolkit.numpy as tnp

from _oracle import raises_like

A = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("shape", [(4, 6), (-1,), (2, 3, 4), (4, -1, 2), (24, 1)])
def test_fortran_order_reshape_is_jaxs(shape, jnp):
    want = np.asarray(jnp.reshape(jnp.asarray(A), shape, order="F"))
    np.testing.assert_array_equal(want, A.reshape(shape, order="F"))
    for got in (tnp.reshape(A, shape, order="F"), tnp.asarray(A).reshape(*shape, order="F"),
                toolkit.jit(lambda a: tnp.reshape(a, shape, order="F"))(A)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)


def test_fortran_order_ravel_and_other_orders(jnp):
    J, T = jnp.asarray(A), tnp.asarray(A)
    np.testing.assert_array_equal(np.asarray(tnp.ravel(T, order="F")), np.asarray(jnp.ravel(J, order="F")))
    np.testing.assert_array_equal(np.asarray(T.ravel(order="F")), A.ravel(order="F"))
    raises_like(lambda: tnp.reshape(T, (4, 6), order="A"), lambda: jnp.reshape(J, (4, 6), order="A"))
    raises_like(lambda: tnp.reshape(T, (4, 6), order="X"), lambda: jnp.reshape(J, (4, 6), order="X"))
    raises_like(lambda: tnp.ravel(T, order="K"), lambda: jnp.ravel(J, order="K"))
