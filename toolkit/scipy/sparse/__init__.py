"""``toolkit.scipy.sparse``: ``jax.scipy.sparse``, whose one public module is ``linalg`` (the Krylov solvers)."""

from __future__ import annotations

from toolkit.scipy.sparse import linalg

__all__ = ["linalg"]
