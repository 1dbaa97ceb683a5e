"""Export: functions lowered to StableHLO, saved as bytes, loaded and called later (``jax.export``).

This package holds the ``Exported`` record and its JAX-compatible wire format;
``export()`` and ``Exported.call`` build on it.

Example::

    from toolkit import export
    exp = export.deserialize(blob)      # bytes from jax.export or toolkit
    print(exp.in_avals, exp.platforms)
    blob2 = exp.serialize()
"""

from toolkit.export.exported import (
    DisabledSafetyCheck,
    Effect,
    Exported,
    default_export_platform,
    known_effect_type_names,
    maximum_supported_calling_convention_version,
    maximum_supported_serialization_version,
    minimum_supported_calling_convention_version,
    minimum_supported_serialization_version,
    register_effect_type_name,
    serialization_version,
    serialization_version_stored,
)
from toolkit.export.serialization import (
    deserialize,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from toolkit.export.shardings import ExportedAbstractDevice, ExportedAbstractMesh, ExportedNamedSharding

__all__ = [
    "DisabledSafetyCheck",
    "Effect",
    "Exported",
    "ExportedAbstractDevice",
    "ExportedAbstractMesh",
    "ExportedNamedSharding",
    "default_export_platform",
    "deserialize",
    "known_effect_type_names",
    "maximum_supported_calling_convention_version",
    "maximum_supported_serialization_version",
    "minimum_supported_calling_convention_version",
    "minimum_supported_serialization_version",
    "register_effect_type_name",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "serialization_version",
    "serialization_version_stored",
]

# export() and the calling convention (appended by the export-function work).
from toolkit.export import calling_convention  # noqa: E402
from toolkit.export.call import call_exported_p  # noqa: E402
from toolkit.export.exporting import STABLE_CUSTOM_CALL_TARGETS, export, portable_artifact_target  # noqa: E402

__all__ += ["STABLE_CUSTOM_CALL_TARGETS", "calling_convention", "call_exported_p", "export",
            "portable_artifact_target"]

# Symbolic shapes, as jax.export offers them.
from toolkit.core.shape_poly import (  # noqa: E402
    InconclusiveDimensionOperation, SymbolicScope, is_symbolic_dim, symbolic_args_specs, symbolic_shape,
)

__all__ += ["InconclusiveDimensionOperation", "SymbolicScope", "is_symbolic_dim", "symbolic_args_specs",
            "symbolic_shape"]
