"""``toolkit.dlpack``: arrays from other libraries through DLPack (``jax.dlpack``).

:func:`from_dlpack` takes any object with ``__dlpack__`` and ``__dlpack_device__`` (numpy arrays, PyTorch
CPU tensors, toolkit and JAX arrays) and returns a toolkit ``Array``; toolkit Arrays give a capsule back
through ``Array.__dlpack__``. toolkit reads the tensor on the host (numpy's DLPack import) and copies it
into a device buffer: ``copy=False`` — which asks for no copy — is refused rather than silently copied.
Only CPU tensors can be read (toolkit runs on CPU).

Example::

    import numpy as np
    x = toolkit.dlpack.from_dlpack(np.arange(4.0, dtype=np.float32))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.array import Array, device_put
from toolkit.core import dtypes
from toolkit.shard.sharding import Sharding

__all__ = ["SUPPORTED_DTYPES", "from_dlpack", "is_supported_dtype"]

#: The dtypes a DLPack tensor may have (JAX's list).
SUPPORTED_DTYPES: frozenset[np.dtype] = frozenset(np.dtype(d) for d in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
    dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128, np.bool_))

_DL_CPU = 1


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` can go through DLPack; ``TypeError`` for ``None`` (as JAX's)."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """A toolkit ``Array`` with the value of the DLPack tensor ``external_array`` (``jax.dlpack.from_dlpack``).

    ``device`` (a device or a single-device sharding) places it; ``None`` keeps the default device.
    ``copy=False`` raises ``ValueError`` (toolkit always copies into its own buffer); a tensor on a device
    other than the CPU, or of a dtype DLPack does not carry, is a ``TypeError``.
    """
    if isinstance(device, Sharding):
        device_set = device.device_set
        if len(device_set) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, but a Sharding "
                             f"with {len(device_set)} devices was provided.")
    if not hasattr(external_array, "__dlpack__") or not hasattr(external_array, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    device_type, _ = external_array.__dlpack_device__()
    if int(device_type) != _DL_CPU:
        raise TypeError(f"Array passed to from_dlpack is on unsupported device type (DLDeviceType: {device_type}, "
                        f"array: {external_array}); toolkit reads CPU tensors only")
    if copy is False:
        raise ValueError("from_dlpack(copy=False): toolkit cannot wrap an external buffer without copying it "
                         "(it copies the tensor into its own device buffer); pass copy=None or copy=True")
    if isinstance(external_array, Array):
        host = np.asarray(external_array)
    else:
        host = np.from_dlpack(external_array)
    if host.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"from_dlpack: dtype {host.dtype} is not supported by DLPack in toolkit")
    return device_put(host, device)
