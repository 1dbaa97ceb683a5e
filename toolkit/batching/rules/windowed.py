"""Batching rules for ``reduce`` and ``reduce_window`` (user computations on scalars).

Batched operands share one batch dimension (unbatched operands are
broadcast); ``reduce`` skips it, ``reduce_window`` gives it a window of 1.
Batched *initial values* (one init per batch element) fall back to a loop
over the batch, as no single XLA reduction takes per-element inits.
"""

from __future__ import annotations

from toolkit.batching.interpret import loop_rule
from toolkit.batching.registry import register_batching
from toolkit.batching.rules.elementwise import align
from toolkit.lax import windowed


def _reduce(axis, args, dims, *, computation, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        return loop_rule(windowed.reduce_p)(axis, args, dims, computation=computation, dimensions=dimensions)
    operands, d = align(axis, args[:n], dims[:n])
    new_dims = tuple(a + (a >= d) for a in dimensions)
    outs = windowed.reduce_p.bind(*operands, *args[n:], computation=computation, dimensions=new_dims)
    out_d = d - sum(a < d for a in new_dims)
    return list(outs), [out_d] * len(outs)


def _insert(values, d, value):
    out = list(values)
    out.insert(d, value)
    return tuple(out)


def _reduce_window(axis, args, dims, *, computation, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(args) // 2
    params = {"computation": computation, "window_dimensions": window_dimensions, "window_strides": window_strides,
                  "padding": padding, "base_dilation": base_dilation, "window_dilation": window_dilation}
    if any(d is not None for d in dims[n:]):
        return loop_rule(windowed.reduce_window_p)(axis, args, dims, **params)
    operands, d = align(axis, args[:n], dims[:n])
    outs = windowed.reduce_window_p.bind(
        *operands, *args[n:], computation=computation, window_dimensions=_insert(window_dimensions, d, 1),
        window_strides=_insert(window_strides, d, 1), padding=_insert(padding, d, (0, 0)),
        base_dilation=_insert(base_dilation, d, 1), window_dilation=_insert(window_dilation, d, 1))
    return list(outs), [d] * len(outs)


register_batching(windowed.reduce_p, _reduce)
register_batching(windowed.reduce_window_p, _reduce_window)
