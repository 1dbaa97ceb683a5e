"""StableHLO -> XLA HLO text, for ``toolkit-opt --emit=hlo``."""

from __future__ import annotations

from jaxlib import _jax


def mlir_to_hlo_text(module_bytecode_or_text: bytes | str) -> str:
    """The HLO text XLA makes from a StableHLO module (bytecode or text).

    Raises ValueError when XLA cannot convert the module.

    Example::

        text = mlir_to_hlo_text(str(module))   # "HloModule ...\\n\\nENTRY main ..."
    """
    try:
        computation = _jax.mlir.mlir_module_to_xla_computation(
            module_bytecode_or_text, use_tuple_args=False, return_tuple=False)
    except Exception as error:  # jaxlib raises its own error types here
        raise ValueError(f"cannot convert the module to HLO: {error}") from None
    return computation.as_hlo_text()
