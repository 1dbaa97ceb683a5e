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
from jaxlib.mlir import ir  # noqa: F401 - named in annotations


def serialize_portable(module_bytecode: "bytes | ir.Module", target_version: str, *,
                       keep_shardy: bool = False) -> bytes:
    """A portable artifact of ``module_bytecode`` (bytecode, or the module itself) at StableHLO ``target_version``.

    Given the module, jaxlib serializes it in place of parsing bytecode again in a
    new context (the module is left unchanged). ``keep_shardy`` asks for mixed
    serialization (Shardy ops kept as plain MLIR beside the VHLO, what JAX 0.10 asks
    for on CPU); without Shardy ops the bytes are the same either way.

    Raises ``ValueError`` when jaxlib cannot serialize the module.
    """
    try:
        return _jax.mlir.serialize_portable_artifact(module_bytecode, target_version, keep_shardy)
    except Exception as exc:  # jaxlib raises its own error types
        raise ValueError(f"cannot serialize the module for StableHLO {target_version}: {exc}") from None
