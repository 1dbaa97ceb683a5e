"""toolkit.numpy.setops: ``isin`` against ``jax.numpy`` 0.10.2."""

import numpy as np

from _vs_jax import F, XI, compare_with_jax


def test_isin(jnp):
    compare_with_jax("isin", XI, np.array([0, 3, -2, 5]))
    compare_with_jax("isin", F, F[1], invert=True)
    compare_with_jax("isin", 3, XI)
