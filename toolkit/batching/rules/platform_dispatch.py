"""Batching of ``platform_index``: it has no operands, so its result is never batched."""

from __future__ import annotations

from toolkit.batching.registry import register_batching
from toolkit.lax import platform_dispatch


def _platform_index(axis, args, dims, *, platforms):
    return platform_dispatch.platform_index_p.bind(platforms=platforms), None


register_batching(platform_dispatch.platform_index_p, _platform_index)
