"""Bits packed into bytes and back, as ``jax.numpy`` has them: ``packbits`` (each 8 truth values along an
axis become one ``uint8``) and ``unpackbits`` (each ``uint8`` becomes 8 bits), in ``"big"`` (most
significant bit first) or ``"little"`` bit order.

Example::

    tnp.packbits(tnp.asarray([1, 0, 1]))          # [160] (0b10100000)
    tnp.unpackbits(tnp.asarray([5], tnp.uint8))   # [0, 0, 0, 0, 0, 1, 0, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.numpy import padding, reductions, shapes, ufuncs
from toolkit.numpy._core import asarray, check_arraylike, convert, is_array


def _operand(name: str, a: Any, bitorder: str) -> Any:
    check_arraylike(name, a)
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    return a if is_array(a) else asarray(a)


def _bits(bitorder: str) -> np.ndarray:
    bits = np.arange(8, dtype=np.uint8)
    return bits[::-1].copy() if bitorder == "big" else bits


@compiled_whole(static_argnames=("axis", "bitorder"))
def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """The nonzero-ness of ``a``'s elements packed 8 to a ``uint8`` along ``axis`` (``None``: flattened;
    a last partial byte is padded with zeros), as ``jnp.packbits``; ``a`` must be integer or bool."""
    arr = _operand("packbits", a, bitorder)
    if not (dtypes.is_integer(arr.dtype) or dtypes.is_bool(arr.dtype)):
        raise TypeError("Expected an input array of integer or boolean data type")
    arr = convert(ufuncs.not_equal(arr, 0), np.uint8)
    if axis is None:
        arr, axis = shapes.ravel(arr), 0
    arr = shapes.swapaxes(arr, axis, -1)
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = padding.pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder)])
    arr = shapes.reshape(arr, tuple(arr.shape[:-1]) + (arr.shape[-1] // 8, 8))
    packed = convert(reductions.sum(ufuncs.left_shift(arr, _bits(bitorder)), -1), np.uint8)
    return shapes.swapaxes(packed, axis, -1)


@compiled_whole(static_argnames=("axis", "count", "bitorder"))
def unpackbits(a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Any:
    """Each ``uint8`` of ``a`` as 8 bits (``uint8`` 0/1) along ``axis`` (``None``: flattened), as
    ``jnp.unpackbits``; ``count`` keeps that many bits (more pads with zeros). Other dtypes are a
    ``TypeError``."""
    arr = _operand("unpackbits", a, bitorder)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    weights = np.left_shift(np.uint8(1), _bits(bitorder))
    if axis is None:
        arr, axis = shapes.ravel(arr), 0
    arr = shapes.swapaxes(arr, axis, -1)
    bits = convert(ufuncs.greater(ufuncs.bitwise_and(shapes.expand_dims(arr, -1), weights), 0), np.uint8)
    bits = shapes.reshape(bits, tuple(bits.shape[:-2]) + (bits.shape[-2] * 8,))
    if count is not None:
        if count > bits.shape[-1]:
            bits = padding.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - bits.shape[-1])])
        else:
            bits = bits[..., :count]
    return shapes.swapaxes(bits, axis, -1)
