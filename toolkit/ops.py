"""``toolkit.ops``: segment reductions (``jax.ops``): ``segment_sum``, ``segment_max``, ``segment_min``,
``segment_prod``.

``segment_sum(data, segment_ids, num_segments)[i]`` combines the rows ``data[j]`` with ``segment_ids[j] == i``.
As JAX's: ids outside ``[0, num_segments)`` (negative ones included) are dropped, an empty segment holds the
operation's identity (0, 1, the dtype's lowest or highest value), ``num_segments`` defaults to
``max(segment_ids) + 1`` (then the ids must be concrete), and ``bucket_size`` combines the data in buckets of
that many rows first, then the buckets (for the rounding of long sums).

Example::

    toolkit.ops.segment_sum(np.array([1., 2., 3.]), np.array([0, 0, 1]), num_segments=2)   # [3., 3.]
"""

from __future__ import annotations

from typing import Any

import numpy as np

import toolkit.numpy as tnp
from toolkit.core import dtypes
from toolkit.core.tracing import Tracer

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(op: str, dtype: np.dtype) -> Any:
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if dtypes.is_bool(dtype):
        return op == "min"
    if dtypes.is_integer(dtype):
        info = dtypes.iinfo(dtype)
        return info.min if op == "max" else info.max
    return -np.inf if op == "max" else np.inf


def _reduce(op: str, x: Any, axis: int) -> Any:
    return {"add": tnp.sum, "mul": tnp.prod, "max": tnp.max, "min": tnp.min}[op](x, axis=axis)


def _segment(name: str, op: str, data: Any, segment_ids: Any, num_segments: int | None, indices_are_sorted: bool,
             unique_indices: bool, bucket_size: int | None, mode: Any, out_sharding: Any) -> Any:
    if out_sharding is not None:
        raise NotImplementedError(f"{name}: out_sharding is not supported by toolkit yet; reshard the result")
    data = tnp.asarray(data)
    segment_ids = tnp.asarray(segment_ids)
    if not dtypes.is_integer(segment_ids.dtype):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}")
    if segment_ids.ndim != 1:
        raise ValueError(f"{name}: segment_ids must be one-dimensional, got shape {segment_ids.shape}")
    if data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{name}: data's leading dimension must match segment_ids ({segment_ids.shape[0]}), "
                         f"got data of shape {data.shape}")
    if num_segments is None:
        if isinstance(segment_ids, Tracer):
            raise ValueError(f"{name}: num_segments must be given when segment_ids are traced (the output's "
                             "size would depend on their values)")
        num_segments = int(np.max(np.asarray(segment_ids))) + 1 if segment_ids.shape[0] else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    # JAX does not normalize negative ids: they are out of range, dropped like ids >= num_segments.
    ids = tnp.where(segment_ids < 0, num_segments, segment_ids)
    mode = "drop" if mode is None else mode
    identity = _identity(op, data.dtype)
    if bucket_size is None:
        out = tnp.full((num_segments, *data.shape[1:]), identity, dtype=data.dtype)
        return getattr(out.at[ids], op)(data, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                                        mode=mode)
    if int(bucket_size) < 1:
        raise ValueError(f"{name}: bucket_size must be positive, got {bucket_size}")
    n = data.shape[0]
    buckets = -(-n // int(bucket_size))
    bucket_of = tnp.arange(n) // int(bucket_size)
    out = tnp.full((buckets, num_segments, *data.shape[1:]), identity, dtype=data.dtype)
    out = getattr(out.at[bucket_of, ids], op)(data, indices_are_sorted=indices_are_sorted,
                                              unique_indices=unique_indices, mode=mode)
    return _reduce(op, out, 0)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The sum of the rows of ``data`` in each segment (``jax.ops.segment_sum``); empty segments are 0."""
    return _segment("segment_sum", "add", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode, out_sharding)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                 unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                 out_sharding: Any = None) -> Any:
    """The product of the rows of ``data`` in each segment (``jax.ops.segment_prod``); empty segments are 1."""
    return _segment("segment_prod", "mul", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode, out_sharding)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The maximum of the rows of ``data`` in each segment (``jax.ops.segment_max``); empty segments hold the
    dtype's lowest value (-inf for floats)."""
    return _segment("segment_max", "max", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode, out_sharding)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode: Any = None,
                out_sharding: Any = None) -> Any:
    """The minimum of the rows of ``data`` in each segment (``jax.ops.segment_min``); empty segments hold the
    dtype's highest value (inf for floats)."""
    return _segment("segment_min", "min", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode, out_sharding)
