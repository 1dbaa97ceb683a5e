"""The pass pipeline ``jit`` runs on every lowered module, user-extendable.

``JIT_PIPELINE`` is pipeline text (MLIR syntax; empty means no passes). The
jit implementation calls :func:`jit_pipeline` to get the parsed pipeline, so a
pass registered with ``@register_pass`` and appended here runs inside every
later ``jit`` compilation without touching toolkit's code.

Changing it changes what ``jit`` compiles, so ``jit``'s caches key on
:func:`jit_pipeline_generation` (a number, cheap on the call fast path) and
:func:`jit_pipeline_text`: a function called before the change is compiled
again on its next call, as ``f.trace(x).lower().compile()`` would.

Example::

    import toolkit.passes as tp
    tp.extend_jit_pipeline("my-pass")          # JIT_PIPELINE += ", my-pass"
    tp.set_jit_pipeline("toolkit-simplify, cse")
"""

from __future__ import annotations

import threading

from toolkit.passes import registry
from toolkit.passes.pipeline import Pipeline, parse_pipeline

#: Pipeline text jit runs after lowering. Change it with the functions below
#: (assigning it directly bypasses jit's cache keys).
JIT_PIPELINE: str = ""

_EMPTY_TEXT = str(Pipeline())
_printed = _EMPTY_TEXT  # str(jit_pipeline()), kept so cache keys need not parse
_generation = 0  # bumped by every set_jit_pipeline
_lock = threading.Lock()


def set_jit_pipeline(text: str) -> None:
    """Replace the jit pipeline; the text is parsed now so errors show early.

    Functions already compiled by ``jit`` compile again on their next call.
    """
    global JIT_PIPELINE, _printed, _generation
    printed = str(parse_pipeline(text)) if text.strip() else _EMPTY_TEXT
    with _lock:
        JIT_PIPELINE = text
        _printed = printed
        _generation += 1


def extend_jit_pipeline(text: str) -> None:
    """Append passes (pipeline text) to the jit pipeline."""
    current = str(jit_pipeline())[len("builtin.module("):-1]
    set_jit_pipeline(", ".join(p for p in (current, text) if p.strip()))


def jit_pipeline() -> Pipeline:
    """The current jit pipeline, parsed (empty :class:`Pipeline` if none)."""
    return parse_pipeline(JIT_PIPELINE) if JIT_PIPELINE.strip() else Pipeline()


def jit_pipeline_text() -> str:
    """The current jit pipeline as printed (``builtin.module(...)``), without parsing it again."""
    return _printed


def jit_pipeline_generation() -> int:
    """A number that changes whenever what the jit pipeline means may have changed.

    It moves on every :func:`set_jit_pipeline` / :func:`extend_jit_pipeline`
    and whenever a registered pass name starts meaning another class
    (``register_pass(override=True)``, a re-run definition). Both counters
    only grow, so their sum never returns to an earlier value.
    """
    return _generation + registry._generation
