"""``set_cache_dir`` and ``reset_cache`` under JAX's path (``jax.experimental.compilation_cache.compilation_cache``).

Both act on :mod:`toolkit.compilation_cache`, toolkit's persistent cache.
"""

from __future__ import annotations

import os

from toolkit import compilation_cache as _cache

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path: str | os.PathLike | None) -> None:
    """Keep compiled executables in the folder ``path`` (``None``: no persistent cache), as JAX's."""
    _cache.set_cache_dir(path)


def reset_cache() -> None:
    """Forget the cache's in-memory state so the next compilation reads the configuration afresh (JAX's).

    toolkit reads the cache folder from the configuration at every compilation and keeps no cache object, so
    there is nothing to drop; the files on disk stay (``toolkit.compilation_cache.clear()`` deletes them).
    """
