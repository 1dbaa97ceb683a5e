"""The pass pipeline ``jit`` runs on every lowered module, user-extendable.

``JIT_PIPELINE`` is pipeline text (MLIR syntax; empty means no passes). The
jit implementation calls :func:`jit_pipeline` to get the parsed pipeline, so a
pass registered with ``@register_pass`` and appended here runs inside every
later ``jit`` compilation without touching toolkit's code.

Example::

    import toolkit.passes as tp
    tp.extend_jit_pipeline("my-pass")          # JIT_PIPELINE += ", my-pass"
    tp.set_jit_pipeline("toolkit-simplify, cse")
"""

from __future__ import annotations

from toolkit.passes.pipeline import Pipeline, parse_pipeline

#: Pipeline text jit runs after lowering. Change it with the functions below.
JIT_PIPELINE: str = ""


def set_jit_pipeline(text: str) -> None:
    """Replace the jit pipeline; the text is parsed now so errors show early."""
    global JIT_PIPELINE
    parse_pipeline(text) if text.strip() else None
    JIT_PIPELINE = text


def extend_jit_pipeline(text: str) -> None:
    """Append passes (pipeline text) to the jit pipeline."""
    current = str(jit_pipeline())[len("builtin.module("):-1]
    set_jit_pipeline(", ".join(p for p in (current, text) if p.strip()))


def jit_pipeline() -> Pipeline:
    """The current jit pipeline, parsed (empty :class:`Pipeline` if none)."""
    return parse_pipeline(JIT_PIPELINE) if JIT_PIPELINE.strip() else Pipeline()
