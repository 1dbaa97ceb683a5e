"""Rules for ``toolkit/lax/sharding.py``: a sharding constraint is the identity on values."""

from __future__ import annotations

from toolkit.ad.jvp import deflinear
from toolkit.ad.values import Zero
from toolkit.lax import sharding as sharding_family
from toolkit.memory import Space
from toolkit.shard.sharding import Sharding


def _constraint_transpose(ct, x, *, sharding):
    return [None if isinstance(ct, Zero) else sharding_family.sharding_constraint_p.bind(ct, sharding=sharding)]


deflinear(sharding_family.sharding_constraint_p, _constraint_transpose)


def _device_put_transpose(ct, x, *, device):
    if isinstance(ct, Zero):
        return [None]
    if _in_host_memory(device):
        # JAX 0.10.2 types the cotangent of a value put in pinned host memory as in host memory and puts it back
        # where nothing says (src None): it stays in host memory, against the device-memory operand, a ValueError.
        aval = x.aval
        shape = ",".join(str(d) for d in aval.shape)
        raise ValueError(f"device_put to host memory ({device!r}) cannot be transposed, as in JAX: the cotangent "
                         f"would be {aval.dtype.name}<host>[{shape}] but the value put is {aval.dtype.name}[{shape}] "
                         "(in device memory). Differentiate before putting the value in host memory, or put it in "
                         "'unpinned_host' memory (the device's memory space)")
    return [ct]  # JAX's puts the cotangent back where x was: nothing in a program


def _in_host_memory(device) -> bool:
    """Whether a device_put's target is JAX's host memory space: a sharding in ``pinned_host``, or ``Space.Host``."""
    if isinstance(device, Space):
        return device is Space.Host
    return isinstance(device, Sharding) and device.memory_kind == "pinned_host"


deflinear(sharding_family.device_put_p, _device_put_transpose)
