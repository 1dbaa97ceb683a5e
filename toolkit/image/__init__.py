"""``toolkit.image``: ``jax.image`` (JAX 0.10.2) — ``resize``, ``scale_and_translate``, ``ResizeMethod``.

The same values as ``jax.image`` bit for bit on CPU: the weights are computed
with the same arithmetic in the same order and dtypes, and applied as the
same sequence of contractions (see :mod:`toolkit.image.scale`).

Example::

    import numpy as np
    from toolkit import image

    img = np.random.rand(32, 32, 3).astype(np.float32)
    small = image.resize(img, (16, 16, 3), "linear")          # antialiased downsampling
    big = image.resize(img, (64, 48, 3), image.ResizeMethod.LANCZOS3)
"""

from toolkit.image.scale import ResizeMethod, resize, scale_and_translate  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
