"""``toolkit.scipy.cluster``: SciPy's clustering (``jax.scipy.cluster``): the vector quantization module
``toolkit.scipy.cluster.vq``."""

from toolkit.scipy.cluster import vq  # noqa: F401

__all__ = ["vq"]
