"""``Slice`` and ``ds``: a slice with a possibly traced start and a static size (JAX's ``jax.ds`` / ``dslice``).

``x[ds(i, 4)]`` reads ``x[i:i + 4]`` for a traced ``i`` as a ``dynamic_slice`` (the start is clamped so the
window fits, as ``dynamic_slice`` clamps); ``x.at[ds(i, 4)].set(v)`` writes through ``dynamic_update_slice``.
Only the numpy indexing (toolkit/numpy/indexing.py) interprets it; this module only holds the value.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Slice:
    """``size`` elements starting at ``start`` (an int or a traced integer scalar), ``stride`` apart.

    ``size`` and ``stride`` are static Python ints (they fix the result's shape), as in JAX's ``Slice``.
    """

    __slots__ = ("start", "size", "stride")

    def __init__(self, start: Any, size: int, stride: int = 1):
        for what, v in (("size", size), ("stride", stride)):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"Slice {what} must be a static Python int, got {type(v).__name__} {v!r}")
        if int(size) < 0:
            raise ValueError(f"Slice size must be >= 0, got {size}")
        if int(stride) < 1:
            raise ValueError(f"Slice stride must be >= 1, got {stride}")
        if isinstance(start, (bool, np.bool_, float, complex, str)):
            raise TypeError(f"Slice start must be an integer (or traced integer scalar), got {start!r}")
        self.start = int(start) if isinstance(start, (int, np.integer)) else start
        self.size = int(size)
        self.stride = int(stride)

    @property
    def extent(self) -> int:
        """How many elements of the dimension the slice spans (first to last selected, inclusive)."""
        return 0 if self.size == 0 else (self.size - 1) * self.stride + 1

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Slice) and isinstance(self.start, int) and isinstance(other.start, int)
                and (self.start, self.size, self.stride) == (other.start, other.size, other.stride))

    def __hash__(self) -> int:
        return hash((Slice, self.start if isinstance(self.start, int) else id(self.start), self.size, self.stride))

    def __repr__(self) -> str:
        return f"Slice(start={self.start!r}, size={self.size}, stride={self.stride})"


def ds(start: Any, size: int | None = None, stride: int | None = None) -> "slice | Slice":
    """JAX's ``dslice``: ``ds(None)`` is ``:``, ``ds(j)`` is ``:j``, ``ds(i, j)`` is ``i:i+j``,
    ``ds(i, j, s)`` is ``j`` elements from ``i``, ``s`` apart. ``start`` may be traced; ``size``/``stride``
    must be static ints (``ValueError`` for a non-static stride, as JAX's)."""
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, stride)  # type: ignore[arg-type]


dslice = ds
