"""``toolkit.dlpack``: arrays from other libraries through DLPack (``jax.dlpack``).

:func:`from_dlpack` takes any object with ``__dlpack__`` and ``__dlpack_device__`` (numpy arrays, PyTorch
CPU tensors, toolkit and JAX arrays) and returns a toolkit ``Array``; toolkit Arrays give a capsule back
through ``Array.__dlpack__``. toolkit reads the tensor on the host (numpy's DLPack import) and copies it
into a device buffer, committed to the tensor's device or to ``device=``: ``copy=False`` — which asks for
no copy — is refused rather than silently copied. Only CPU tensors can be read (toolkit runs on CPU).

Example::

    import numpy as np
    x = toolkit.dlpack.from_dlpack(np.arange(4.0, dtype=np.float32))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.array import Array
from toolkit.numpy import creation

__all__ = ["SUPPORTED_DTYPES", "from_dlpack", "is_supported_dtype"]

#: The dtypes a DLPack tensor may have (JAX's list).
SUPPORTED_DTYPES: frozenset[np.dtype] = creation.DLPACK_DTYPES


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of ``dtype`` can go through DLPack; ``TypeError`` for ``None`` (as JAX's)."""
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Array:
    """A toolkit ``Array`` with the value of the DLPack tensor ``external_array`` (``jax.dlpack.from_dlpack``).

    ``device`` (a device or a single-device sharding) places it and commits it there; ``None`` commits it to
    the tensor's own device. ``copy=False`` raises ``ValueError`` (toolkit always copies into its own buffer);
    a tensor on a device other than the CPU, or of a dtype DLPack does not carry, is a ``TypeError``.
    (``toolkit.numpy.from_dlpack`` is the implementation.)
    """
    return creation.from_dlpack(external_array, device=device, copy=copy)
