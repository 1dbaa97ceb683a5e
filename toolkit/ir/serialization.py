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
import re
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


_PRODUCER_VERSION = re.compile(rb"StableHLO_v(\d+)\.(\d+)\.(\d+)")


def portable_artifact_version(data: bytes) -> str | None:
    """The StableHLO version a portable artifact names in its producer string (``"1.15.0"``), or None."""
    match = _PRODUCER_VERSION.search(data[4:64]) if data.startswith(BYTECODE_MAGIC) else None
    return None if match is None else ".".join(part.decode() for part in match.groups())


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def deserialize_portable_artifact(data: bytes, context: ir.Context) -> ir.Module:
    """Read a StableHLO portable (VHLO) artifact into ``context``.

    Raises ``ValueError`` saying why it cannot be read: for an artifact
    written by a newer StableHLO than this jaxlib's, the artifact's version
    and the newest one this jaxlib reads, then the first thing it could not
    read (e.g. an op version it does not know). A newer artifact whose ops
    are all known reads normally: VHLO op versions keep their meaning.
    """
    from jaxlib.mlir.dialects import stablehlo

    errors: list[str] = []

    def collect(diagnostic: ir.Diagnostic) -> bool:
        # The bindings' exception says only "failed to deserialize module"; the diagnostics say what.
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(diagnostic.message)
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        return stablehlo.deserialize_portable_artifact(context, data)
    except Exception as error:  # the bindings raise ValueError / MLIRError / RuntimeError
        reasons = [e for e in errors if not e.startswith("failed to deserialize portable artifact")]
        reason = reasons[0] if reasons else (errors[0] if errors else str(error))
        version, newest = portable_artifact_version(data), stablehlo.get_current_version()
        if version is not None and _version_key(version) > _version_key(newest):
            import jaxlib.version

            raise ValueError(f"cannot read the StableHLO portable artifact: it was written by StableHLO {version}, "
                             f"newer than {newest}, the newest version this jaxlib ({jaxlib.version.__version__}) "
                             f"reads; first unreadable part: {reason}") from None
        written = f" (written by StableHLO {version})" if version is not None else ""
        raise ValueError(f"cannot read the StableHLO portable artifact{written}: {reason}") from None
    finally:
        handler.detach()


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
    the line) and ``ValueError`` for bad binary data (for portable artifacts,
    see :func:`deserialize_portable_artifact`).
    """
    if isinstance(data, str):
        if "!quant." in data:
            load_quant_dialect(context)
        with context:
            return ir.Module.parse(data)
    kind = detect_format(data)
    if kind == "vhlo":
        return deserialize_portable_artifact(data, context)
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
