"""Rules for ``toolkit/lax/windowed.py``: ``reduce_window`` with a sum, max or min computation
(``cumsum``/``cummax``/``cummin`` and pooling are such windows).

* sum is linear: its transpose pads the cotangent (interior padding undoes
  the strides) and sums it over the same window with stride 1;
* max/min: the tangent is that of the chosen element (ties averaged), found
  by cutting the padded operand into one strided slice per window offset
  (``prod(window)`` slices), so the rule is made of slices, pads and sums that
  transpose themselves: no select-and-scatter primitive is needed.

* a cumulative window of any other computation (``cumprod``, ``cumlogsumexp``:
  one axis, a window as long as it, padded to end or start at each element,
  unit strides) has JAX's derivative of its cumulative primitives: the tangent
  is the associative scan of (value, tangent) pairs combined by the
  computation's JVP, made of primitives that transpose themselves.

Both need ``base_dilation == 1``; other computations (pooling windows of
products, variadic windows, generic ``reduce``) raise ``DifferentiationError``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from toolkit.ad.jvp import DifferentiationError, jvp_program
from toolkit.ad.registry import JVP_RULES, NO_JVP, TRANSPOSE_RULES
from toolkit.ad.values import Zero, tangent_aval, value_aval
from toolkit.batching import vmap
from toolkit.lax import elementwise
from toolkit.lax import reductions
from toolkit.lax import structural
from toolkit.lax.control_flow import associative_scan
from toolkit.lax.windowed import reduce_p, reduce_window_p

_KINDS = {elementwise.add_p: "sum", elementwise.max_p: "max", elementwise.min_p: "min", elementwise.mul_p: "prod"}


def _window_kind(computation) -> str | None:
    if len(computation.eqns) != 1 or len(computation.invars) != 2:
        return None
    eqn = computation.eqns[0]
    # The operands may come in either order: all four monoids are commutative.
    if set(eqn.inputs) != set(computation.invars) or list(computation.outvars) != list(eqn.outputs):
        return None
    return _KINDS.get(eqn.primitive)


def _unsupported(why: str) -> DifferentiationError:
    return DifferentiationError(f"toolkit.ad: cannot differentiate this reduce_window: {why}")


def _dilated(size, dilation):
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _reduce_window_jvp(primals, tangents, *, computation, window_dimensions, window_strides, padding, base_dilation,
                       window_dilation):
    params = dict(computation=computation, window_dimensions=window_dimensions, window_strides=window_strides,
                  padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
    outs = reduce_window_p.bind(*primals, **params)
    if len(primals) != 2:
        raise _unsupported("variadic windows (several operands) have no differentiation rule")
    kind = _window_kind(computation)
    (x, init), (t, t_init) = primals, tangents
    cumulative_axis = _cumulative_axis(value_aval(x).shape, params)
    elementwise_window = _is_elementwise_window(params)
    if kind not in ("sum", "max", "min") and cumulative_axis is None and not elementwise_window:
        raise _unsupported(f"only sum, max and min windows, and cumulative windows, are differentiable (got "
                           f"{kind or 'a custom computation'})")
    if any(d != 1 for d in base_dilation):
        raise _unsupported("base_dilation other than 1 is not supported")
    if not isinstance(t_init, Zero):
        raise _unsupported("the init value must not depend on the differentiated inputs")
    if isinstance(t, Zero):
        return outs, [Zero(tangent_aval(value_aval(outs[0])))]
    if kind == "sum":
        return outs, reduce_window_p.bind(t, np.zeros((), value_aval(t).dtype), **params)
    if kind in ("max", "min"):
        return outs, [_chooser_tangent(x, init, t, outs[0], params)]
    combine = _combine_with_jvp(computation, kind)
    if cumulative_axis is None:  # windows of one element (a cumulative reduction along an axis of size 1)
        aval = value_aval(x)
        start = structural.broadcast_in_dim(init, aval.shape, ())
        return outs, [combine((start, structural.full(aval.shape, 0, value_aval(t).dtype)), (x, t))[1]]
    axis, reverse = cumulative_axis
    return outs, [associative_scan(combine, (x, t), reverse=reverse, axis=axis)[1]]


def _combine_with_jvp(computation, kind):
    """The associative scan's combination of (value, tangent) pairs: the window's computation and its JVP.

    The computation was traced on scalars; a product applies to whole slices as it is, any other (JAX's
    ``logaddexp`` for ``cumlogsumexp``, whose rule holds scalar constants) is mapped over their elements."""
    def pair(a, b, ta, tb):
        (value,), (tangent,) = jvp_program(computation, [a, b], [ta, tb])
        return value, tangent

    def combine_slices(earlier, later):
        (a, ta), (b, tb) = earlier, later
        return pair(a, b, ta, tb)

    if kind == "prod":
        return combine_slices
    elementwise_pair = vmap(pair)

    def combine_elements(earlier, later):
        (a, ta), (b, tb) = earlier, later
        shape = value_aval(a).shape
        flat = [structural.reshape(v, (math.prod(shape),)) for v in (a, b, ta, tb)]
        return tuple(structural.reshape(v, shape) for v in elementwise_pair(*flat))
    return combine_elements


def _is_elementwise_window(params) -> bool:
    """Every window one element (each output is ``computation(init, x)``), as a cumulative reduction along an
    axis of size 1 makes it."""
    return all(w == 1 for w in params["window_dimensions"]) and all(s == 1 for s in params["window_strides"]) and \
        all(tuple(p) == (0, 0) for p in params["padding"]) and all(d == 1 for d in params["base_dilation"])


def _cumulative_axis(shape, params) -> tuple[int, bool] | None:
    """``(axis, reverse)`` when the window is a cumulative reduction's (as ``toolkit.lax.cumprod`` makes it):
    along one axis, as long as it and padded so the window ends (reversed: starts) at each element; else None."""
    axes = [d for d, w in enumerate(params["window_dimensions"]) if w != 1]
    if len(axes) != 1 or any(s != 1 for s in params["window_strides"]) or \
            any(d != 1 for d in params["window_dilation"]) or any(d != 1 for d in params["base_dilation"]):
        return None
    axis, = axes
    size = shape[axis]
    padding = params["padding"]
    if params["window_dimensions"][axis] != size or any(p != (0, 0) for d, p in enumerate(padding) if d != axis):
        return None
    if tuple(padding[axis]) == (size - 1, 0):
        return axis, False
    if tuple(padding[axis]) == (0, size - 1):
        return axis, True
    return None


def _chooser_tangent(x, init, t, answer, params):
    aval = value_aval(x)
    ndim = len(aval.shape)
    out_shape = value_aval(answer).shape
    config = [(lo, hi, 0) for lo, hi in params["padding"]]
    padded_x = structural.pad(x, init, config)
    padded_t = structural.pad(t, np.zeros((), aval.dtype), config)
    window, strides, dilation = params["window_dimensions"], params["window_strides"], params["window_dilation"]
    x_slices, t_slices = [], []
    for offset in itertools.product(*(range(w) for w in window)):
        start = tuple(o * d for o, d in zip(offset, dilation))
        limit = tuple(s + (n - 1) * k + 1 for s, n, k in zip(start, out_shape, strides))
        x_slices.append(structural.reshape(structural.slice(padded_x, start, limit, strides), (1,) + tuple(out_shape)))
        t_slices.append(structural.reshape(structural.slice(padded_t, start, limit, strides), (1,) + tuple(out_shape)))
    stacked_x = structural.concatenate(x_slices, 0)
    stacked_t = structural.concatenate(t_slices, 0)
    full = (len(x_slices),) + tuple(out_shape)
    chosen = elementwise.eq(stacked_x, structural.broadcast_in_dim(answer, full, tuple(range(1, ndim + 1))))
    mask = elementwise.convert_element_type(chosen, aval.dtype)
    return elementwise.div(reductions.reduce_sum(elementwise.mul(stacked_t, mask), (0,)), reductions.reduce_sum(mask, (0,)))


def _reduce_window_transpose(cts, x, init, *, computation, window_dimensions, window_strides, padding,
                             base_dilation, window_dilation):
    ct = cts[0]
    if isinstance(ct, Zero):
        return [None, None]
    if _window_kind(computation) != "sum" or any(d != 1 for d in base_dilation):
        raise _unsupported("only sum windows without base dilation are linear")
    in_shape = x.aval.shape
    out_shape = value_aval(ct).shape
    config = []
    for size, w, wd, stride, out, (lo, _) in zip(in_shape, window_dimensions, window_dilation, window_strides,
                                                 out_shape, padding):
        window = _dilated(w, wd)
        before = window - lo - 1
        after = size + window - 1 - _dilated(out, stride) - before
        config.append((before, after, stride - 1))
    padded = structural.pad(ct, np.zeros((), value_aval(ct).dtype), config)
    ones = (1,) * len(in_shape)
    out = reduce_window_p.bind(padded, np.zeros((), value_aval(ct).dtype), computation=computation,
                               window_dimensions=window_dimensions, window_strides=ones,
                               padding=((0, 0),) * len(in_shape), base_dilation=ones,
                               window_dilation=window_dilation)
    return [out[0], None]


JVP_RULES[reduce_window_p] = _reduce_window_jvp
TRANSPOSE_RULES[reduce_window_p] = _reduce_window_transpose

NO_JVP[reduce_p] = ("not yet: JAX differentiates a general reduce by vmapping its body over a tree reduction; "
                    "the named reductions (reduce_sum, reduce_max, ...) and reduce_window have rules")
