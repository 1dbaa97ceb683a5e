"""Batching rule for ``call_exported`` (``vmap`` of ``Exported.call``; JAX has none).

The exported module is opaque StableHLO, so the rule calls it once per
batch element inside a ``scan`` over the batch: each call sees exactly the
shapes a Python loop over the batch would pass, and a shape-polymorphic
export binds its dimension variables to the element's shapes there (``b``
of an ``f32[b, 3]`` parameter becomes the element's leading size) and is
refined to static shapes inside the loop body. So ``vmap(exp.call)(xs)``
equals ``stack([exp.call(x) for x in xs])`` for exports written by toolkit
or by JAX, polymorphic or not.

``toolkit/export/call.py`` registers it (``toolkit.batching`` does not import
``toolkit.export``).
"""

from __future__ import annotations

from typing import Any

from toolkit.batching.interpret import loop_apply
from toolkit.batching.registry import register_batching


def register(call_exported_p: Any) -> None:
    def rule(axis, args, dims, *, exported):
        return loop_apply(call_exported_p, axis, args, dims, {"exported": exported})
    rule.__name__ = "call_exported_batch"
    register_batching(call_exported_p, rule)
