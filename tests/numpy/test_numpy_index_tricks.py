"""toolkit.numpy.index_tricks: ``meshgrid``, ``ix_``, ``unravel_index``/``ravel_multi_index`` against numpy,
the index builders against ``jax.numpy`` 0.10.2."""

import numpy as np
import pytest

import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import compare_with_jax
from _vs_numpy import check


def test_index_builders(jnp):
    compare_with_jax("indices", (2, 3))
    compare_with_jax("indices", (2, 3, 1), dtype=np.int8)
    compare_with_jax("indices", (3, 2), sparse=True)
    for n, k, m in ((4, 0, None), (4, 1, None), (3, -1, 5), (5, 2, 2)):
        compare_with_jax("tril_indices", n, k, m)
        compare_with_jax("triu_indices", n, k, m)
    compare_with_jax("tril_indices_from", np.ones((3, 4)), 1)
    compare_with_jax("triu_indices_from", np.ones((4, 3)), -1)
    compare_with_jax("diag_indices", 3)
    compare_with_jax("diag_indices", 4, 3)
    compare_with_jax("diag_indices_from", np.ones((3, 3, 3)))
    raises_like(lambda: tnp.diag_indices_from(np.ones((3, 4))), lambda: jnp.diag_indices_from(np.ones((3, 4))))
    raises_like(lambda: tnp.tril_indices_from(np.ones(3)), lambda: jnp.tril_indices_from(np.ones(3)))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid(indexing, sparse):
    xs = (np.arange(3), np.arange(4.0), np.arange(2))
    for got, want in zip(tnp.meshgrid(*xs, indexing=indexing, sparse=sparse),
                         np.meshgrid(*xs, indexing=indexing, sparse=sparse)):
        check(got, want.astype(np.asarray(got).dtype))


def test_meshgrid_bad_indexing():
    with pytest.raises(ValueError, match="indexing must be"):
        tnp.meshgrid(np.arange(2), indexing="yx")


def test_ix_unravel_ravel():
    x = np.arange(20).reshape(4, 5)
    check(tnp.asarray(x)[tnp.ix_(np.array([0, 2]), np.array([1, 3, 4]))], x[np.ix_([0, 2], [1, 3, 4])])
    check(tnp.asarray(x)[tnp.ix_(np.array([True, False, True, False]), np.array([4]))],
          x[np.ix_(np.array([True, False, True, False]), [4])])
    for got, want in zip(tnp.unravel_index(np.array([0, 7, 19, -1]), (4, 5)), np.unravel_index([0, 7, 19, 19], (4, 5))):
        check(got, want.astype(np.asarray(got).dtype))
    check(tnp.ravel_multi_index((np.array([0, 1, 3]), np.array([4, 2, 0])), (4, 5)),
          np.ravel_multi_index(([0, 1, 3], [4, 2, 0]), (4, 5)))
    check(tnp.ravel_multi_index((np.array([5]), np.array([-1])), (4, 5), mode="wrap"),
          np.ravel_multi_index(([5], [-1]), (4, 5), mode="wrap"))
