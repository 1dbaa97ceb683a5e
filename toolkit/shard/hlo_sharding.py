"""Conversions between toolkit shardings and XLA / Shardy forms.

* to XLA: ``sharding._to_xla_hlo_sharding(ndim)`` (an ``HloSharding``),
  :func:`to_op_sharding` (the ``OpSharding`` proto), :func:`mhlo_sharding_text`
  (the ``mhlo.sharding`` attribute string);
* from XLA: :func:`sharding_from_hlo` (``GSPMDSharding``, or ``NamedSharding``
  given a mesh, or ``PositionalSharding``), accepting ``HloSharding``,
  ``OpSharding`` or attribute text;
* to Shardy: see :mod:`toolkit.shard.shardy`.

Example::

    >>> mhlo_sharding_text(NamedSharding(mesh, P("x")), 2)
    '{devices=[2,1,4]<=[8] last_tile_dim_replicate}'
    >>> sharding_from_hlo("{devices=[2,4]<=[8]}", mesh.devices.flat, mesh=mesh, ndim=2).spec
    PartitionSpec('x', 'y')
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard import hlo as hlo_util
from toolkit.shard.gspmd import GSPMDSharding
from toolkit.shard.mesh import AbstractMesh, Mesh
from toolkit.shard.named_sharding import NamedSharding, named_sharding_from_hlo
from toolkit.shard.partition_spec import PartitionSpec
from toolkit.shard.positional import positional_sharding_from_hlo
from toolkit.shard.sharding import Sharding
from toolkit.shard.single_device import SingleDeviceSharding


def _as_hlo(value: HloSharding | OpSharding | str) -> HloSharding:
    if isinstance(value, str):
        return hlo_util.hlo_sharding_from_text(value)
    return hlo_util.to_hlo_sharding(value)


def to_op_sharding(sharding: Sharding, ndim: int) -> OpSharding:
    """The ``OpSharding`` proto of ``sharding`` for a rank-``ndim`` array."""
    return sharding._to_xla_hlo_sharding(ndim).to_proto()


def mhlo_sharding_text(sharding: Sharding, ndim: int) -> str:
    """The ``mhlo.sharding`` attribute string, e.g. ``{devices=[2,1]<=[2]}``."""
    return str(sharding._to_xla_hlo_sharding(ndim))


def sharding_from_hlo(hlo: HloSharding | OpSharding | str, devices: Sequence[Any] | None = None, *,
                      mesh: Mesh | AbstractMesh | None = None, ndim: int | None = None,
                      kind: Literal["gspmd", "named", "positional", "single"] | None = None,
                      memory_kind: str | None = None) -> Sharding:
    """A toolkit sharding whose HLO form is ``hlo``.

    ``devices`` gives the device at each HLO device position (defaults to the
    mesh's devices). The kind defaults to ``named`` when ``mesh`` is given and
    ``gspmd`` otherwise; ``named`` and ``positional`` need ``ndim``. Raises
    ``ValueError`` when ``hlo`` cannot be expressed in the requested kind.
    """
    hlo = _as_hlo(hlo)
    if kind is None:
        kind = "named" if mesh is not None else "gspmd"
    if devices is None:
        if not isinstance(mesh, Mesh):
            raise ValueError("sharding_from_hlo needs devices (or a Mesh with devices)")
        devices = mesh._flat_devices_tuple
    devices = tuple(devices)
    if kind == "gspmd":
        return GSPMDSharding(devices, hlo, memory_kind=memory_kind)
    if kind == "single":
        if len(devices) != 1 or not hlo_util.is_replicated(hlo):
            raise ValueError(f"HLO sharding {hlo} over {len(devices)} devices is not a single-device sharding")
        return SingleDeviceSharding(devices[0], memory_kind=memory_kind)
    if ndim is None:
        raise ValueError(f"converting an HLO sharding to a {kind} sharding needs the array rank (ndim=...)")
    if kind == "positional":
        return positional_sharding_from_hlo(hlo, devices, ndim, memory_kind=memory_kind)
    if kind == "named":
        if mesh is None:
            raise ValueError("converting an HLO sharding to a NamedSharding needs a mesh")
        if isinstance(mesh, Mesh) and tuple(d.id for d in mesh._flat_devices_tuple) != tuple(d.id for d in devices):
            raise ValueError("the devices given do not match the mesh's devices in order")
        return named_sharding_from_hlo(hlo, mesh, ndim, memory_kind=memory_kind)
    raise ValueError(f"unknown sharding kind {kind!r}; expected gspmd, named, positional or single")


def as_named_sharding(sharding: Sharding, ndim: int) -> NamedSharding:
    """Any sharding as an equivalent ``NamedSharding``.

    Non-named shardings get a mesh whose axes ``_axis_0, _axis_1, ...`` are
    the factors of their HLO tile assignment (what Shardy needs).
    Raises ``ValueError`` when the tile assignment is not a transposed iota.
    """
    if isinstance(sharding, NamedSharding):
        return sharding
    devices = sharding._device_assignment
    hlo = sharding._to_xla_hlo_sharding(ndim)
    if hlo_util.is_replicated(hlo):
        mesh = Mesh(np.array(devices, dtype=object), ("_axis_0",))
        return NamedSharding(mesh, PartitionSpec(), memory_kind=sharding.memory_kind)
    if not hlo.is_tile_assignment_iota():
        hlo = HloSharding.from_string(str(hlo))  # XLA canonicalizes to iota form when it can
    if not hlo.is_tile_assignment_iota():
        raise ValueError(f"HLO sharding {hlo} has no mesh form (its device order is not a transposed iota)")
    sizes = tuple(hlo.get_axis_sizes())
    names = tuple(f"_axis_{i}" for i in range(len(sizes)))
    mesh = Mesh(np.array(devices, dtype=object).reshape(sizes), names)
    return named_sharding_from_hlo(hlo, mesh, ndim, memory_kind=sharding.memory_kind)
