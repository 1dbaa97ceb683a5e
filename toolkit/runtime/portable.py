"""Portable artifacts that keep Shardy (``sdy``) ops and attributes: jaxlib's mixed serialization.

StableHLO's public ``serialize_portable_artifact`` converts everything to
VHLO and fails on ``sdy`` dialect ops/attributes. jaxlib's private entry
point (what ``jax.export`` uses) serializes StableHLO as VHLO and leaves the
Shardy parts as plain MLIR bytecode ("mixed serialization");
``stablehlo.deserialize_portable_artifact`` reads both kinds back.

Example::

    blob = serialize_mixed(bytecode, "1.15.0")
"""

from __future__ import annotations

from jaxlib import _jax


def serialize_mixed(module_bytecode: bytes, target_version: str) -> bytes:
    """A portable artifact of ``module_bytecode`` at ``target_version``, Shardy parts kept as MLIR.

    Raises ``ValueError`` when jaxlib cannot serialize the module.
    """
    try:
        return _jax.mlir.serialize_portable_artifact(module_bytecode, target_version, True)
    except Exception as exc:  # jaxlib raises its own error types
        raise ValueError(f"cannot serialize the module for StableHLO {target_version}: {exc}") from None
