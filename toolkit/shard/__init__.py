"""Sharding: lay arrays out over meshes of devices (``jax.sharding`` semantics).

Main names: :class:`Mesh`, :class:`AbstractMesh`, :class:`PartitionSpec`
(alias ``P``), :class:`NamedSharding`, :class:`SingleDeviceSharding`,
:class:`PositionalSharding`, :class:`PmapSharding`, :class:`GSPMDSharding`,
the :class:`Sharding` base, conversions to and from XLA ``HloSharding`` and
Shardy text, and :func:`device_put_sharded`. See ``docs/sharding.md``.

Example::

    import numpy as np
    from toolkit.runtime.client import devices
    from toolkit.shard import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(devices()).reshape(2, 4), ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    s.shard_shape((8, 8))            # (4, 2)
    s._to_xla_hlo_sharding(2)        # {devices=[2,4]<=[8]}
"""

from toolkit.runtime.shardings import HloSharding, OpSharding
from toolkit.shard.hlo_sharding import as_named_sharding, mhlo_sharding_text, sharding_from_hlo, to_op_sharding
from toolkit.shard.gspmd import GSPMDSharding
from toolkit.shard.hlo import hlo_sharding_from_text
from toolkit.shard.mesh import (
    AbstractDevice, AbstractMesh, AxisType, ManualAxisType, Mesh, get_abstract_mesh, get_mesh, make_mesh, set_mesh,
    use_abstract_mesh,
)
from toolkit.shard.named_sharding import DuplicateSpecError, NamedSharding, named_sharding_from_hlo
from toolkit.shard.partition_spec import UNCONSTRAINED, P, PartitionSpec
from toolkit.shard.placement import device_put_sharded, host_array
from toolkit.shard.pmap import (NoSharding, PmapSharding, Replicated, ShardedAxis, ShardingSpec,
                                Unstacked)
from toolkit.shard.positional import PositionalSharding, positional_sharding_from_hlo
from toolkit.shard.sharding import Sharding
from toolkit.shard.shardy import (ShardyMeshSymbols, parse_shardy_mesh, parse_shardy_sharding, shardy_mesh_attr_text,
                                  shardy_mesh_for, shardy_mesh_text, shardy_sharding_text)
from toolkit.shard.single_device import SingleDeviceSharding, make_single_device_sharding
from toolkit.shard.resolve import resolve_sharding
from toolkit.shard.explicit import typeof

__all__ = [
    "AbstractDevice", "AbstractMesh", "AxisType", "DuplicateSpecError", "ManualAxisType", "GSPMDSharding", "HloSharding", "Mesh", "NamedSharding", "NoSharding",
    "OpSharding", "P", "PartitionSpec", "PmapSharding", "PositionalSharding", "Replicated",
    "ShardedAxis", "Sharding", "ShardingSpec", "ShardyMeshSymbols", "SingleDeviceSharding", "UNCONSTRAINED", "Unstacked",
    "as_named_sharding", "device_put_sharded", "host_array", "get_abstract_mesh", "get_mesh", "use_abstract_mesh",
    "hlo_sharding_from_text", "make_mesh", "resolve_sharding", "typeof", "make_single_device_sharding", "mhlo_sharding_text",
    "named_sharding_from_hlo", "parse_shardy_mesh", "parse_shardy_sharding",
    "positional_sharding_from_hlo", "set_mesh", "sharding_from_hlo", "shardy_mesh_attr_text",
    "shardy_mesh_for", "shardy_mesh_text", "shardy_sharding_text", "to_op_sharding",
]
