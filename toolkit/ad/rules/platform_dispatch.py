"""Differentiation of ``platform_index``: no operands and an integer result, so a zero tangent."""

from __future__ import annotations

from toolkit.ad.jvp import zero_tangent_jvp
from toolkit.lax import platform_dispatch

zero_tangent_jvp(platform_dispatch.platform_index_p)
