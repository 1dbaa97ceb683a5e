"""Reading and writing modules as MLIR text, MLIR bytecode or VHLO artifacts.

The reader auto-detects: bytes starting with ``ML\\xefR`` are bytecode, and
bytecode whose producer string starts with ``StableHLO_v`` is a portable
(VHLO) artifact; anything else is text.

Example::

    module = read_module(open("f.mlirbc", "rb").read(), context)
    data = write_module(module, "vhlo", target_version="1.15.0")
"""

from __future__ import annotations

import io
from typing import Literal

from jaxlib.mlir import ir

BYTECODE_MAGIC = b"ML\xefR"
PORTABLE_PRODUCER = b"StableHLO_v"

InputFormat = Literal["text", "bytecode", "vhlo"]


def detect_format(data: bytes) -> InputFormat:
    """``"vhlo"``, ``"bytecode"`` or ``"text"`` for the serialized module ``data``."""
    if data.startswith(BYTECODE_MAGIC):
        # The producer string follows the magic and the version varint.
        return "vhlo" if PORTABLE_PRODUCER in data[4:64] else "bytecode"
    return "text"


_empty_artifact: bytes | None = None


def load_quant_dialect(context: ir.Context) -> None:
    """Load the quant dialect into ``context`` so ``!quant.uniform`` types parse.

    jaxlib exposes no direct loader; reading any portable artifact loads it,
    so this reads a tiny one (made once per process).
    """
    global _empty_artifact
    from jaxlib.mlir.dialects import stablehlo

    if _empty_artifact is None:
        with context, ir.Location.unknown():
            empty = ir.Module.parse("module {}")
        _empty_artifact = stablehlo.serialize_portable_artifact(empty, stablehlo.get_current_version())
    stablehlo.deserialize_portable_artifact(context, _empty_artifact)


def read_module(data: bytes | str, context: ir.Context) -> ir.Module:
    """Parse ``data`` (any supported format) in ``context``.

    Raises ``ir.MLIRError`` for text the parser rejects (its diagnostics name
    the line) and ``ValueError`` for bad binary data.
    """
    if isinstance(data, str):
        if "!quant." in data:
            load_quant_dialect(context)
        with context:
            return ir.Module.parse(data)
    kind = detect_format(data)
    if kind == "vhlo":
        from jaxlib.mlir.dialects import stablehlo

        try:
            return stablehlo.deserialize_portable_artifact(context, data)
        except Exception as error:
            raise ValueError(f"cannot read the StableHLO portable artifact: {error}") from None
    if kind == "bytecode":
        load_quant_dialect(context)
        with context:
            try:
                return ir.Module.parse(data)
            except ir.MLIRError as error:
                raise ValueError(f"cannot read the MLIR bytecode: {error}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("input is neither MLIR text (UTF-8), MLIR bytecode nor a portable artifact") from None
    return read_module(text, context)


def write_module(module: ir.Module, kind: Literal["text", "bytecode", "vhlo"] = "text", *,
                 target_version: str | None = None, debug_info: bool = False) -> bytes:
    """Serialize ``module``. ``vhlo`` targets ``target_version`` (default: current).

    ``vhlo`` works on a copy: ``module`` itself stays StableHLO.
    """
    if kind == "text":
        return module.operation.get_asm(enable_debug_info=debug_info).encode()
    if kind == "bytecode":
        buffer = io.BytesIO()
        module.operation.write_bytecode(buffer)
        return buffer.getvalue()
    if kind == "vhlo":
        from jaxlib.mlir.dialects import stablehlo

        target = target_version or stablehlo.get_current_version()
        copy = ir.Module.parse(write_module(module, "bytecode"), module.context)
        try:
            return stablehlo.serialize_portable_artifact(copy, target)
        except Exception as error:
            raise ValueError(f"cannot serialize for StableHLO {target}: {error}") from None
    raise ValueError(f"unknown output format {kind!r} (text, bytecode, vhlo)")
