"""Pass-failure reproducers in MLIR's own format (``mlir-opt --run-reproducer`` reads them too).

A reproducer is a module followed by a file-metadata block naming the
pipeline to run on it::

    module {
      ...
    }

    {-#
      external_resources: {
        mlir_reproducer: {
          pipeline: "builtin.module(func.func(cse))",
          disable_threading: true,
          verify_each: true
        }
      }
    #-}

``toolkit-opt --mlir-pass-pipeline-crash-reproducer=FILE`` writes one when a
pass fails (the input and the whole pipeline; with
``--mlir-pass-pipeline-local-reproducer`` the module just before the failing
pass and that pass alone), ``jit`` writes one into ``TOOLKIT_REPRODUCER_DIR``
(default: the temporary folder), and ``toolkit-opt --run-reproducer FILE``
replays it.

* :func:`write_reproducer` / :func:`read_reproducer` — the format.
* :func:`write_failure_reproducer` — the reproducer of a failed pipeline run
  (a :class:`~toolkit.passes.PipelineError` carrying ``module_before``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from typing import Any

from toolkit.passes.pass_base import PipelineError

#: The environment variable naming the folder ``jit`` writes reproducers into.
REPRODUCER_DIR_ENV = "TOOLKIT_REPRODUCER_DIR"

_RESOURCE_KEY = "mlir_reproducer"


@dataclasses.dataclass(frozen=True)
class Reproducer:
    """A parsed reproducer: the module's text (metadata block removed) and how to run it."""

    module_text: str
    pipeline: str
    disable_threading: bool = False
    verify_each: bool = True


def _escape(text: str) -> str:
    """``text`` as an MLIR string literal body (llvm::printEscapedString's escapes)."""
    out = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char == '"':
            out.append('\\"')
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.extend(f"\\{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def _unescape(body: str) -> str:
    """The string an MLIR string literal body means (``\\"``, ``\\\\``, ``\\n``, ``\\t``, ``\\XX``)."""
    data = bytearray()
    i = 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            data += char.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in ('"', "\\"):
            data += nxt.encode()
            i += 2
        elif nxt == "n":
            data += b"\n"
            i += 2
        elif nxt == "t":
            data += b"\t"
            i += 2
        elif re.fullmatch(r"[0-9A-Fa-f]{2}", body[i + 1:i + 3]):
            data.append(int(body[i + 1:i + 3], 16))
            i += 3
        else:
            raise ValueError(f"bad escape '\\{nxt}' in a reproducer's pipeline string")
    return data.decode("utf-8")


def _resource_block(pipeline_text: str, disable_threading: bool, verify_each: bool) -> str:
    return ("  external_resources: {\n"
            f"    {_RESOURCE_KEY}: {{\n"
            f"      pipeline: \"{_escape(pipeline_text)}\",\n"
            f"      disable_threading: {'true' if disable_threading else 'false'},\n"
            f"      verify_each: {'true' if verify_each else 'false'}\n"
            "    }\n"
            "  }")


def reproducer_text(module: Any, pipeline_text: str, *, disable_threading: bool = False,
                    verify_each: bool = True) -> str:
    """The text :func:`write_reproducer` writes (``module``: an ``ir.Module``/``ir.Operation`` or MLIR text)."""
    if not isinstance(pipeline_text, str) or not pipeline_text.strip():
        raise ValueError("a reproducer needs a non-empty pipeline text, e.g. 'builtin.module(cse)'")
    pipeline_text = pipeline_text.strip()
    if not pipeline_text.startswith("builtin.module("):
        pipeline_text = f"builtin.module({pipeline_text})"
    if isinstance(module, str):
        text = module
    elif hasattr(module, "operation"):
        text = module.operation.get_asm(enable_debug_info=True)
    else:
        raise TypeError(f"write_reproducer needs an ir.Module, ir.Operation or MLIR text, got {type(module).__name__}")
    if _RESOURCE_KEY in _metadata_block(text)[1]:
        raise ValueError("the module already carries an mlir_reproducer resource (read it with read_reproducer)")
    block = _resource_block(pipeline_text, disable_threading, verify_each)
    body, metadata = _metadata_block(text)
    if metadata:
        # One metadata block per file: the module's own (dialect_resources, ...) gets the entry.
        inner = metadata[len("{-#"):-len("#-}")].rstrip().rstrip(",")
        return f"{body.rstrip()}\n\n{{-#{inner},\n{block}\n#-}}\n"
    return f"{text.rstrip()}\n\n{{-#\n{block}\n#-}}\n"


def write_reproducer(path: str | os.PathLike, module: Any, pipeline_text: str, *,
                     disable_threading: bool = False, verify_each: bool = True) -> None:
    """Write ``module`` with ``pipeline_text`` to ``path`` in MLIR's reproducer format.

    ``module``: an ``ir.Module`` / ``ir.Operation`` (printed with its
    locations, so a replayed failure points at the original file) or MLIR
    text. ``pipeline_text``: ``builtin.module(...)`` (added around it when
    missing). ``ValueError`` on an empty pipeline, ``TypeError`` on another
    kind of module, ``OSError`` when the file cannot be written.
    """
    text = reproducer_text(module, pipeline_text, disable_threading=disable_threading, verify_each=verify_each)
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(text)


_METADATA = re.compile(r"\{-#(?:.|\n)*?#-\}\s*\Z")


def _metadata_block(text: str) -> tuple[str, str]:
    """(text before the trailing ``{-# ... #-}`` block, the block) — the block empty when there is none."""
    match = _METADATA.search(text)
    if match is None:
        return text, ""
    return text[:match.start()], match.group().rstrip()


def _find_entry(block: str, key: str) -> tuple[int, int] | None:
    """(start, end) of ``key: { ... }`` in ``block`` (brace-matched, strings honoured), or None."""
    match = re.search(rf"\b{re.escape(key)}\s*:\s*\{{", block)
    if match is None:
        return None
    depth, i, quoted = 0, match.end() - 1, False
    while i < len(block):
        char = block[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return match.start(), i + 1
        i += 1
    return None


def _field(entry: str, name: str) -> str | None:
    match = re.search(rf"\b{name}\s*:\s*(\"(?:[^\"\\]|\\.)*\"|true|false)", entry)
    return match.group(1) if match else None


def read_reproducer(path_or_text: str | os.PathLike) -> Reproducer:
    """Parse a reproducer: a path, or the text itself (a string holding a newline or ``{-#``).

    Returns the module text with the ``mlir_reproducer`` entry removed (other
    metadata such as ``dialect_resources`` kept, line numbers unchanged) and
    its pipeline and flags. ``ValueError`` naming what is missing when the
    input has no ``mlir_reproducer`` resource or no pipeline in it;
    ``OSError`` when the path cannot be read.
    """
    if isinstance(path_or_text, str) and ("\n" in path_or_text or "{-#" in path_or_text):
        text, where = path_or_text, "the reproducer text"
    else:
        with open(path_or_text, encoding="utf-8") as stream:
            text = stream.read()
        where = os.fspath(path_or_text)
    body, block = _metadata_block(text)
    span = _find_entry(block, _RESOURCE_KEY) if block else None
    if span is None:
        raise ValueError(f"{where} is not a reproducer: no '{{-# external_resources: {{ mlir_reproducer: "
                         "{ pipeline: ... } } #-}' block at its end")
    entry = block[span[0]:span[1]]
    pipeline = _field(entry, "pipeline")
    if pipeline is None or not pipeline.startswith('"'):
        raise ValueError(f"{where}: the mlir_reproducer resource has no pipeline string")
    flags = {name: _field(entry, name) for name in ("disable_threading", "verify_each")}
    # Drop the external_resources entry that holds only our key; keep other metadata.
    outer = _find_entry(block, "external_resources")
    remaining = block
    if outer is not None:
        others = block[outer[0]:outer[1]]
        if re.fullmatch(r"external_resources\s*:\s*\{\s*" + re.escape(entry) + r"\s*,?\s*\}", others):
            remaining = block[:outer[0]] + block[outer[1]:]
        else:
            remaining = block[:span[0]] + block[span[1]:]
    inner = remaining[len("{-#"):-len("#-}")]
    inner = re.sub(r",\s*,", ",", inner).strip().strip(",").strip()
    # Keep line numbers: the removed block becomes blank lines.
    kept = f"{{-#\n  {inner}\n#-}}" if inner else ""
    padding = "\n" * max(0, block.count("\n") - kept.count("\n"))
    return Reproducer(module_text=body + kept + padding,
                      pipeline=_unescape(pipeline[1:-1]),
                      disable_threading=flags["disable_threading"] == "true",
                      verify_each=flags["verify_each"] != "false")


def write_failure_reproducer(path: str | os.PathLike, error: PipelineError, *, verify_each: bool = True) -> bool:
    """Write the reproducer of a failed run: ``error.module_before`` with ``error.pass_pipeline``.

    Returns False (writing nothing) when ``error`` carries no module (a parse
    error, or a failure outside any pass).
    """
    if error.module_before is None or error.pass_pipeline is None:
        return False
    write_reproducer(path, error.module_before, error.pass_pipeline, disable_threading=True, verify_each=verify_each)
    return True


def reproducer_dir() -> str:
    """Where ``jit`` writes reproducers: ``TOOLKIT_REPRODUCER_DIR``, else the temporary folder."""
    return os.environ.get(REPRODUCER_DIR_ENV) or tempfile.gettempdir()


def write_unique_failure_reproducer(error: PipelineError, stem: str, *, folder: str | None = None) -> str | None:
    """Write ``error``'s reproducer to a new file ``<folder>/<stem>-XXXX.mlir``; its path, or None.

    ``folder`` defaults to :func:`reproducer_dir`. Never raises: a reproducer
    that cannot be written is None (the caller's error stays the one to report).
    """
    if error.module_before is None or error.pass_pipeline is None:
        return None
    try:
        target = folder or reproducer_dir()
        os.makedirs(target, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.\-]+", "_", stem).strip("_.")[:80] or "pipeline"
        handle, path = tempfile.mkstemp(prefix=f"{safe}-", suffix=".reproducer.mlir", dir=target)
        os.close(handle)
        write_failure_reproducer(path, error)
        return path
    except (OSError, ValueError, TypeError):
        return None
