"""``toolkit.experimental.compilation_cache``: JAX's path to the persistent compilation cache.

toolkit's cache is :mod:`toolkit.compilation_cache`; this package gives it JAX's import path
(``from jax.experimental.compilation_cache import compilation_cache as cc; cc.set_cache_dir(...)``).
"""

from toolkit.experimental.compilation_cache import compilation_cache

__all__ = ["compilation_cache"]
