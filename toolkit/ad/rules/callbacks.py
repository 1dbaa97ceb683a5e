"""Differentiation rules for host callbacks (``toolkit/lax/callbacks.py``), JAX 0.10.2's.

A host function is opaque: ``pure_callback`` and ``io_callback`` have no JVP
(``ValueError`` with JAX's message; wrap the callback in ``custom_jvp`` or
``custom_vjp`` to differentiate through it). ``debug_callback`` has no
results, so it needs no tangents: differentiation calls it with the primal
values only (``debug.print`` under ``grad`` prints the forward values once).
"""

from __future__ import annotations

from toolkit.ad.registry import JVP_RULES
from toolkit.lax.callbacks import debug_callback_p, io_callback_p, pure_callback_p


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. "
                     "Please use `toolkit.custom_jvp` to use callbacks while taking gradients.")


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _debug_callback_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


JVP_RULES[pure_callback_p] = _pure_callback_jvp
JVP_RULES[io_callback_p] = _io_callback_jvp
JVP_RULES[debug_callback_p] = _debug_callback_jvp
