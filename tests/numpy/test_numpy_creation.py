"""toolkit.numpy.creation's matrix builders: ``tril``/``triu`` against numpy, ``vander`` against ``jax.numpy``."""

import numpy as np
import pytest

import toolkit.numpy as tnp

from _vs_jax import F, compare_with_jax
from _vs_numpy import C, X, check


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_triu_tril(k):
    check(tnp.triu(X, k), np.triu(X, k))
    check(tnp.tril(C, k), np.tril(C, k))


def test_vander(jnp):
    for x in (np.arange(1, 5, dtype=np.int32), F[0]):
        compare_with_jax("vander", x, tol=1e-4)
        compare_with_jax("vander", x, 3, increasing=True, tol=1e-4)
