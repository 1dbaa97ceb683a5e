"""``toolkit.memory``: ``jax.memory``'s ``Space`` enum (where an array's buffer lives), and its memory kinds.

JAX 0.10.2 names memory spaces with ``Space.Device`` / ``Space.Host`` / ``Space.Any`` and maps them onto XLA's
memory kinds (``"device"``, ``"pinned_host"``) — the strings toolkit's shardings carry (``memory_kind``).
:func:`space_to_kind` and :func:`kind_to_space` are that mapping, as JAX's. toolkit's ``device_put`` does not
take a ``Space`` yet (give it a sharding with the memory kind instead; docs/differences-from-jax.md).
"""

from __future__ import annotations

import enum

__all__ = ["Space", "kind_to_space", "space_to_kind"]


class Space(enum.Enum):
    """A memory space: ``Device`` (the accelerator's memory), ``Host`` (pinned host memory), ``Any``."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"  # JAX's spelling (its class is core.MemorySpace)

    # Identity hash, as JAX's (Enum hashes the member's name, which would equal other enums' members).
    __hash__ = object.__hash__


def space_to_kind(space: Space) -> str:
    """The memory kind of ``space``: ``"device"`` or ``"pinned_host"``; ``Space.Any`` (no one kind) and
    anything that is not a ``Space`` raise ``ValueError`` / ``TypeError``."""
    if not isinstance(space, Space):
        raise TypeError(f"space_to_kind takes a toolkit.memory.Space, got {type(space).__name__}: {space!r}")
    if space is Space.Device:
        return "device"
    if space is Space.Host:
        return "pinned_host"
    raise ValueError("Space.Any has no memory kind (it stands for whichever space a value is in)")


def kind_to_space(kind: str | None) -> Space:
    """The space of a memory kind, as JAX maps it: ``"pinned_host"`` is ``Space.Host``, every other kind
    (``"device"``, ``"unpinned_host"``, ``None``) is ``Space.Device``; a non-string raises ``TypeError``."""
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"kind_to_space takes a memory kind string or None, got {type(kind).__name__}: {kind!r}")
    return Space.Host if kind == "pinned_host" else Space.Device
