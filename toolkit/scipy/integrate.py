"""``toolkit.scipy.integrate``: SciPy's ``trapezoid`` (``jax.scipy.integrate``), the compiled
``toolkit.numpy.trapezoid``."""

from __future__ import annotations

from typing import Any

from toolkit import numpy as tnp
from toolkit.core.compiled_whole import compiled_whole

__all__ = ["trapezoid"]


@compiled_whole(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the composite trapezoidal rule, at sample points ``x`` or with the
    constant spacing ``dx`` (``scipy.integrate.trapezoid``)."""
    return tnp.trapezoid(y, x, dx, axis)
