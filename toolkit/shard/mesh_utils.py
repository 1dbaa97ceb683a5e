"""Helpers that build device arrays for meshes.

Example::

    >>> create_device_mesh((2, 4)).shape
    (2, 4)
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from toolkit.runtime.client import devices as all_devices


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """An ndarray of ``devices`` (default: all CPU devices) with shape ``mesh_shape``.

    On CPU there is no physical topology to respect, so devices are laid out
    in id order. Raises ``ValueError`` if the sizes do not match.
    """
    devices = list(all_devices() if devices is None else devices)
    size = math.prod(mesh_shape)
    if size != len(devices):
        raise ValueError(f"mesh shape {tuple(mesh_shape)} needs {size} devices but {len(devices)} were given")
    devices.sort(key=lambda d: d.id)
    return np.array(devices, dtype=object).reshape(tuple(mesh_shape))


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None) -> np.ndarray:
    """One-process stand-in: the product mesh ``mesh_shape * dcn_mesh_shape`` in id order."""
    shape = tuple(a * b for a, b in zip(mesh_shape, dcn_mesh_shape))
    return create_device_mesh(shape, devices)
