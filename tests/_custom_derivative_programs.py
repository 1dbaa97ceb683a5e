"""Functions with custom derivatives, written once for toolkit and for JAX (``lib`` is either module).

Shared by tests/ad (custom_jvp / custom_vjp against JAX) and tests/batching
(vmap of them): a numerically stable log-sum-exp whose JVP rule differs from
the primal's derivative at large inputs, and a straight-through rounding
estimator whose VJP rule passes the cotangent through.
"""

import numpy as np

from toolkit import tree_util


def make_lse(lib):
    @lib.custom_jvp
    def lse(x):
        m = lib.numpy.max(x)
        return m + lib.numpy.log(lib.numpy.sum(lib.numpy.exp(x - m)))

    @lse.defjvp
    def lse_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = lse(x)
        return y, lib.numpy.sum(lib.numpy.exp(x - y) * t)
    return lse


def make_ste(lib):
    @lib.custom_vjp
    def round_ste(x):
        return lib.numpy.round(x)
    round_ste.defvjp(lambda x: (lib.numpy.round(x), None), lambda _, g: (g,))
    return round_ste


def close(a, b, tol=1e-5):
    """Every leaf of ``a`` close to the same leaf of ``b`` (toolkit or JAX arrays, numpy, scalars)."""
    for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)
