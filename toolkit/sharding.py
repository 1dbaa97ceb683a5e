"""``toolkit.sharding``: JAX's ``jax.sharding`` names, the same objects as :mod:`toolkit.shard` and toolkit's
explicit-sharding functions.

``Mesh``, ``AbstractMesh``, ``AxisType``, ``PartitionSpec`` (``P``), ``NamedSharding``,
``SingleDeviceSharding``, the ``Sharding`` base, ``get_mesh`` / ``get_abstract_mesh`` / ``set_mesh`` and
``make_single_device_sharding`` come from :mod:`toolkit.shard`; ``AbstractDevice`` (the kind of device an
``AbstractMesh`` stands for), ``use_abstract_mesh`` (make an abstract mesh current for
``get_abstract_mesh``) and ``ManualAxisType`` (the varying/unreduced/reduced manual axes of a value) from
:mod:`toolkit.shard.mesh`; ``reshard``, ``auto_axes`` and ``explicit_axes`` from :mod:`toolkit.resharding`
(also at toolkit's top level, as in JAX).

Example::

    from toolkit.sharding import Mesh, NamedSharding, PartitionSpec as P
"""

from __future__ import annotations

from toolkit.resharding import auto_axes, explicit_axes, reshard
from toolkit.shard import (
    AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, PmapSharding, PositionalSharding, Sharding,
    SingleDeviceSharding, get_abstract_mesh, get_mesh, make_single_device_sharding, set_mesh,
)
from toolkit.shard.gspmd import GSPMDSharding
from toolkit.shard.mesh import AbstractDevice, ManualAxisType, use_abstract_mesh
from toolkit.shard.partition_spec import P

__all__ = [
    "AbstractDevice", "AbstractMesh", "AxisType", "GSPMDSharding", "ManualAxisType", "Mesh", "NamedSharding", "P",
    "PartitionSpec", "PmapSharding", "PositionalSharding", "Sharding", "SingleDeviceSharding", "auto_axes",
    "explicit_axes", "get_abstract_mesh", "get_mesh", "make_single_device_sharding", "reshard", "set_mesh",
    "use_abstract_mesh",
]
