"""``platform_dependent``: a different function per execution platform, chosen when lowering (JAX's design).

``platform_index`` is a primitive with no operands whose lowering is the position of the lowering
platform's branch: a constant when lowering for one platform, a ``stablehlo.case`` on ``@main``'s
platform-index argument when lowering for several (``toolkit/lowering/lower.py``'s per-platform
dispatch, as JAX's ``mlir.lower_per_platform``). ``platform_dependent`` then ``switch``es on it, so
XLA keeps the branch of the platform it compiles for. Called eagerly, the index is concrete and only
the branch of the running platform is called, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.avals import ShapedArray
from toolkit.core.families import Family
from toolkit.core.tracing import Tracer
from toolkit.lax.control_flow import switch

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("platform_dispatch")

__all__ = ["platform_dependent", "platform_index_p", "branch_for_platform"]


def _platform_index_rule(*, platforms: tuple) -> ShapedArray:
    return ShapedArray((), dtypes.int32)


platform_index_p = family.primitive("platform_index", shape_rule=_platform_index_rule)


def branch_for_platform(platforms: tuple, platform: str) -> int:
    """The branch position for ``platform``: the one naming it, else the default (``None``) one.

    No such branch is a ``ValueError`` naming the platform and the branches' platforms.
    """
    default = None
    for i, names in enumerate(platforms):
        if names is None:
            default = i
        elif platform in names:
            return i
    if default is None:
        raise ValueError(f"Unsupported platform {platform!r} for lax.platform_dependent: its branches are for "
                         f"{sorted(p for names in platforms if names for p in names)} and there is no default")
    return default


@family.function(binds=(platform_index_p,))
def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform[execution_platform](*args)`` (``jax.lax.platform_dependent``), chosen at lowering.

    Keywords name platforms (``cpu``, ``cuda``, ``rocm``, ``tpu``); ``default`` serves the others.
    Every branch takes ``args`` and returns results of one type (as ``switch``). A non-callable
    branch is a ``TypeError``, the name ``gpu`` a ``ValueError`` (JAX's); lowering for a platform
    with no branch and no default is a ``ValueError``.
    """
    grouped: list[tuple[list[str], Callable[..., Any]]] = []
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for names, b in grouped:
            if b == branch:
                names.append(name)
                break
        else:
            grouped.append(([name], branch))
    branches = [b for _, b in grouped]
    platforms: tuple = tuple(tuple(names) for names, _ in grouped)
    if default is not None:
        if not callable(default):
            raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
        branches.append(default)
        platforms = platforms + (None,)
    if not branches:
        raise TypeError("lax.platform_dependent: give at least one platform's branch or a default")
    index = platform_index_p.bind(platforms=platforms)
    if not isinstance(index, Tracer):  # eager: run only the running platform's branch, as JAX does
        return branches[int(np.asarray(index))](*args)
    return switch(index, branches, *args)
