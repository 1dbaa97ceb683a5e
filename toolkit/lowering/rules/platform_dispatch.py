"""StableHLO for ``platform_index``: one rule per known platform, so a multi-platform lowering dispatches.

Each rule is the constant branch position for its platform; ``toolkit/lowering/lower.py`` lowers
distinct per-platform rules under a ``stablehlo.case`` on the platform index (JAX's
``lower_per_platform``), and a single-platform lowering is just that platform's constant.
"""

from __future__ import annotations

import numpy as np

from toolkit.core.avals import ShapedArray
from toolkit.lax import platform_dispatch
from toolkit.lowering.registry import register_lowering

#: JAX's platform names (``gpu`` is not one: platform_dependent refuses it).
KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


def _constant_rule(platform: str | None):
    def rule(ctx, *, platforms):
        index = platform_dispatch.branch_for_platform(platforms, platform or ctx.platform)
        return ctx.constant(np.int32(index), ShapedArray((), np.dtype(np.int32)))
    rule.__name__ = f"_platform_index_{platform or 'other'}"
    return rule


for _platform in KNOWN_PLATFORMS:
    register_lowering(platform_dispatch.platform_index_p, platforms=[_platform])(_constant_rule(_platform))
register_lowering(platform_dispatch.platform_index_p)(_constant_rule(None))
