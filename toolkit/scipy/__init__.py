"""``toolkit.scipy``: ``jax.scipy`` over ``toolkit.numpy`` and ``toolkit.lax`` — linear algebra (``linalg``), special
functions (``special``), distributions and statistics (``stats``), discrete cosine transforms (``fft``), ``signal``,
``integrate``, ``optimize`` (``minimize``), Krylov solvers (``sparse.linalg``), ``ndimage``, ``interpolate``,
``spatial.transform`` (rotations) and ``cluster.vq``."""

from toolkit.scipy import (  # noqa: F401
    cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse, spatial, special, stats,
)
