"""``toolkit.scipy.spatial``: ``jax.scipy.spatial``, whose one submodule is :mod:`toolkit.scipy.spatial.transform`
(``Rotation``, ``Slerp``); ``jax.scipy.spatial`` itself exports no names."""

from __future__ import annotations

from toolkit.scipy.spatial import transform  # noqa: F401

__all__: list[str] = []
