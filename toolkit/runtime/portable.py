"""Portable artifacts the way ``jax.export`` writes them: jaxlib's own serializer.

StableHLO's public ``serialize_portable_artifact`` converts the module to VHLO
as it is, so it fails on CHLO ops (``chlo.erf_inv``, ``chlo.top_k``, ...) and
on Shardy (``sdy``) ops and attributes. jaxlib's private entry point — what
``jax.export`` uses — first legalizes CHLO to StableHLO (and hoists
constants), and with ``keep_shardy`` serializes the Shardy parts as plain MLIR
bytecode next to the VHLO ("mixed serialization").
``stablehlo.deserialize_portable_artifact`` reads both kinds back.

Example::

    blob = serialize_portable(bytecode, "1.15.0")
"""

from __future__ import annotations

from jaxlib import _jax


def serialize_portable(module_bytecode: bytes, target_version: str, *, keep_shardy: bool = False) -> bytes:
    """A portable artifact of ``module_bytecode`` at StableHLO ``target_version``.

    Raises ``ValueError`` when jaxlib cannot serialize the module.
    """
    try:
        return _jax.mlir.serialize_portable_artifact(module_bytecode, target_version, keep_shardy)
    except Exception as exc:  # jaxlib raises its own error types
        raise ValueError(f"cannot serialize the module for StableHLO {target_version}: {exc}") from None
