"""Rules for ``toolkit/lax/sharding.py``: a sharding constraint is the identity on values."""

from __future__ import annotations

from toolkit.ad.jvp import deflinear
from toolkit.ad.values import Zero
from toolkit.lax import sharding as sharding_family


def _constraint_transpose(ct, x, *, sharding):
    return [None if isinstance(ct, Zero) else sharding_family.sharding_constraint_p.bind(ct, sharding=sharding)]


deflinear(sharding_family.sharding_constraint_p, _constraint_transpose)


def _device_put_transpose(ct, x, *, device):
    return [None if isinstance(ct, Zero) else ct]  # JAX's puts the cotangent back where x was: nothing in a program


deflinear(sharding_family.device_put_p, _device_put_transpose)
