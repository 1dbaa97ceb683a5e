"""toolkit.numpy.tensor_contractions against ``jax.numpy`` 0.10.2: ``cross``, ``kron``, ``matvec``,
``vecmat``, ``vecdot`` (complex included)."""

import numpy as np

import toolkit.numpy as tnp

from _oracle import raises_like
from _vs_jax import F, RNG, XI, compare_with_jax


def test_products(jnp):
    a3 = RNG.standard_normal((4, 3)).astype(np.float32)
    b3 = RNG.standard_normal((4, 3)).astype(np.float32)
    compare_with_jax("cross", a3, b3, tol=1e-5)
    compare_with_jax("cross", a3[:, :2], b3, tol=1e-5)
    compare_with_jax("cross", a3[:, :2], b3[:, :2], tol=1e-5)
    compare_with_jax("cross", a3.T, b3.T, axis=0, tol=1e-5)
    compare_with_jax("cross", a3, b3.T, axisb=0, axisc=0, tol=1e-5)
    compare_with_jax("cross", XI[:, :3], XI[::-1, :3])
    raises_like(lambda: tnp.cross(F, F), lambda: jnp.cross(F, F))
    compare_with_jax("kron", XI[:2, :3], F[:3, :2], tol=1e-6)
    compare_with_jax("kron", np.arange(3, dtype=np.int32), XI[:2, :2])
    compare_with_jax("kron", np.float32(2), np.arange(3))
    m = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    v = RNG.standard_normal((4,)).astype(np.float32)
    compare_with_jax("matvec", m, v, tol=1e-5)
    compare_with_jax("vecmat", m[:, :, 0], m, tol=1e-5)
    compare_with_jax("vecdot", m, v, tol=1e-5)
    compare_with_jax("vecdot", m, m[0], axis=-1, tol=1e-5)
    c = (m + 1j * m[::-1]).astype(np.complex64)
    compare_with_jax("vecdot", c, c, tol=1e-5)
    compare_with_jax("vecmat", c[:, :, 0], c, tol=1e-5)
    compare_with_jax("vecdot", XI, XI)
