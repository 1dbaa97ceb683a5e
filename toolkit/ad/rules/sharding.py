"""Rules for ``toolkit/lax/sharding.py``: a sharding constraint is the identity on values."""

from __future__ import annotations

from toolkit.ad.jvp import deflinear
from toolkit.ad.values import Zero
from toolkit.lax import sharding as sharding_family


def _constraint_transpose(ct, x, *, sharding):
    return [None if isinstance(ct, Zero) else sharding_family.sharding_constraint_p.bind(ct, sharding=sharding)]


deflinear(sharding_family.sharding_constraint_p, _constraint_transpose)
