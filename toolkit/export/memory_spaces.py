"""Memory spaces of exported values: JAX 0.10.2's ``core.MemorySpace`` on ``Exported`` avals.

An ``Exported``'s avals say which memory each argument and result lives in:
``Device`` (the default), ``Host`` (memory kind ``pinned_host``) or ``Any``.
The wire format stores it per aval (serialization version 5 on); a named
sharding's memory kind decides it when there is one (JAX's
``update_aval_with_sharding``: ``pinned_host`` is ``Host``, anything else
``Device``).

toolkit's ``ShapedArray`` has no memory space (every traced value is in
device memory), so an exported aval outside device memory is a
:class:`ShapedArrayInMemory`; :func:`memory_space_of` reads the space of any
aval. Example::

    >>> a = with_memory_space(ShapedArray((2, 3), "float32"), MemorySpace.Host)
    >>> a, a.memory_space
    (ShapedArray(float32<host>[2,3]), MemorySpace.Host)
    >>> memory_space_of(ShapedArray((2,), "float32"))
    MemorySpace.Device
"""

from __future__ import annotations

import enum
from typing import Any

from toolkit.core.avals import ShapedArray


class MemorySpace(enum.Enum):
    """Where an exported value lives (the names and order of JAX's ``jax._src.core.MemorySpace``)."""

    Device = 1
    Host = 2
    Any = 3

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"


def memory_space_of(aval: Any) -> MemorySpace:
    """The memory space of ``aval``: its ``memory_space`` if it has one (JAX's avals and
    :class:`ShapedArrayInMemory` do), else ``MemorySpace.Device``. A JAX ``MemorySpace`` is
    translated by name."""
    space = getattr(aval, "memory_space", None)
    if space is None:
        return MemorySpace.Device
    if isinstance(space, MemorySpace):
        return space
    name = getattr(space, "name", None)
    if not isinstance(name, str) or name not in MemorySpace.__members__:
        raise ValueError(f"unknown memory space {space!r} (expected one of {list(MemorySpace.__members__)})")
    return MemorySpace[name]


def memory_kind_to_space(kind: str | None) -> MemorySpace:
    """JAX's ``mem_kind_to_space``: ``"pinned_host"`` is ``Host``, every other kind (and None) ``Device``."""
    return MemorySpace.Host if kind == "pinned_host" else MemorySpace.Device


def memory_space_to_kind(space: MemorySpace) -> str:
    """JAX's ``mem_space_to_kind``: ``Device`` → ``"device"``, ``Host`` → ``"pinned_host"``;
    ``ValueError`` for ``Any``, which names no memory kind."""
    if space is MemorySpace.Device:
        return "device"
    if space is MemorySpace.Host:
        return "pinned_host"
    raise ValueError(f"memory space {space!r} has no memory kind")


class ShapedArrayInMemory(ShapedArray):
    """A ``ShapedArray`` in a memory space other than device memory (an exported aval).

    Equal to another only with the same memory space too (never to a plain
    ``ShapedArray``); prints as JAX does, ``ShapedArray(float32<host>[2,3])``.
    """

    __slots__ = ("memory_space",)

    def __init__(self, shape: Any, dtype: Any, weak_type: bool = False, sharding: Any = None, *,
                 memory_space: MemorySpace):
        super().__init__(shape, dtype, weak_type, sharding)
        if not isinstance(memory_space, MemorySpace) or memory_space is MemorySpace.Device:
            raise ValueError(f"ShapedArrayInMemory needs a non-device MemorySpace, got {memory_space!r}")
        self.memory_space = memory_space

    def update(self, shape: Any = None, dtype: Any = None, weak_type: bool | None = None,
               sharding: Any = ShapedArray._NO_SHARDING) -> ShapedArray:
        """A copy with the given fields replaced, in the same memory space."""
        plain = ShapedArray.update(self, shape, dtype, weak_type, sharding)
        return with_memory_space(plain, self.memory_space)

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False)

    def __eq__(self, other: object) -> bool:
        return (type(other) is ShapedArrayInMemory and other.memory_space is self.memory_space
                and self.shape == other.shape and self.dtype == other.dtype
                and self.weak_type == other.weak_type and self.sharding == other.sharding)

    def __hash__(self) -> int:
        return hash((ShapedArray.__hash__(self), self.memory_space))

    def __str__(self) -> str:
        text = ShapedArray.__str__(self)
        bracket = text.index("[")
        return f"{text[:bracket]}<{self.memory_space.name.lower()}>{text[bracket:]}"

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({str(self).lstrip('~')}{weak})"


def with_memory_space(aval: ShapedArray, space: MemorySpace) -> ShapedArray:
    """``aval`` in memory ``space``: a plain ``ShapedArray`` for ``Device``, else a :class:`ShapedArrayInMemory`."""
    if not isinstance(space, MemorySpace):
        raise TypeError(f"memory space must be a MemorySpace, got {space!r}")
    if memory_space_of(aval) is space:
        return aval
    if space is MemorySpace.Device:
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.sharding)
    return ShapedArrayInMemory(aval.shape, aval.dtype, aval.weak_type, aval.sharding, memory_space=space)
