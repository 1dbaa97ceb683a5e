"""Signal helpers of ``jax.numpy``: ``diff`` (n-th differences along an axis) and the
1-D ``convolve``/``correlate`` (modes full, same, valid; one ``conv_general_dilated``),
``interp`` (piecewise-linear, with ``left``/``right``/``period``), ``ediff1d``,
``trapezoid``, ``unwrap`` and ``gradient`` (central differences). Example::

    tnp.convolve(x, tnp.ones(3) / 3, mode="same")
    tnp.interp(t, xp, fp)
"""

from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

from toolkit.core import dtypes
from toolkit.core.compiled_whole import compiled_whole
from toolkit.lax import convolution as lax_convolution
from toolkit.numpy._core import asarray, canonical_axis, check_arraylike, convert, promote_inexact, result_dtype
from toolkit.numpy import reductions, shapes, sorting, ufuncs
from toolkit.numpy.indexing import getitem


@compiled_whole(static_argnames=("n", "axis"))
def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """``n``-th discrete difference along ``axis``: ``a[1:] - a[:-1]`` repeated ``n`` times (for booleans
    ``a[1:] != a[:-1]``, as numpy's and JAX's). ``prepend``/``append`` are joined to ``a`` along ``axis`` first
    (a scalar as one slice)."""
    check_arraylike("diff", a)
    a = asarray(a)
    if n == 0:
        return a
    axis = canonical_axis(axis, a.ndim)
    if n < 0:
        raise ValueError(f"diff: order n={n} must be non-negative")
    if prepend is not None or append is not None:
        slice_shape = tuple(1 if d == axis else size for d, size in enumerate(a.shape))

        def as_slices(end: Any) -> Any:  # a scalar end is one slice along axis
            check_arraylike("diff", end)
            end = asarray(end)
            return shapes.broadcast_to(end, slice_shape) if end.ndim == 0 else end
        parts = ([as_slices(prepend)] if prepend is not None else []) + [a] + \
            ([as_slices(append)] if append is not None else [])
        a = shapes.concatenate(parts, axis)
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[axis], lo[axis] = slice(1, None), slice(None, -1)
        op = ufuncs.not_equal if dtypes.is_bool(a.dtype) else ufuncs.subtract
        a = op(getitem(a, tuple(hi)), getitem(a, tuple(lo)))
    return a


def _conv(x: Any, y: Any, mode: str, op: str, precision: Any, preferred_element_type: Any) -> Any:
    x, y = asarray(x), asarray(y)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        x, y = promote_inexact(x, y)
    else:
        x, y = [convert(a, result_dtype(x, y)[0]) for a in (x, y)]
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if op == "correlate":
        y = ufuncs.conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = shapes.flip(y)
    n = y.shape[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(n // 2, n - n // 2 - 1)]
    elif mode == "full":
        padding = [(n - 1, n - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax_convolution.conv_general_dilated(
        shapes.reshape(x, (1, 1, x.shape[0])), shapes.reshape(y, (1, 1, n)), (1,), padding, precision=precision,
        preferred_element_type=preferred_element_type)
    out = shapes.reshape(out, (out.shape[2],))
    return shapes.flip(out) if reverse else out


@compiled_whole(static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Discrete linear convolution of two 1-D arrays."""
    check_arraylike("convolve", a, v)
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


@compiled_whole(static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Cross-correlation of two 1-D arrays (``v`` conjugated)."""
    check_arraylike("correlate", a, v)
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """Piecewise-linear interpolation of ``(xp, fp)`` (``xp`` increasing) at ``x``; outside, ``left``/``right``
    (default: the end values, ``'extrapolate'`` continues the end segments)."""
    # As JAX's: a jit of the helper whose static arguments are the ends given as None or a string and a
    # period of None (numbers and arrays there are traced), so an eager call is one compiled program.
    static = tuple(name for name, value in (("left", left), ("right", right)) if value is None or isinstance(value, str))
    return _INTERP[static + (("period",) if period is None else ())](x, xp, fp, left, right, period)


def _interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    check_arraylike("interp", x, xp, fp)
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if xp.shape != fp.shape or xp.ndim != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_inexact(x, xp)
    fp, = promote_inexact(fp)
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but got: {side!r}")
    if dtypes.is_complex(x.dtype):
        raise ValueError("toolkit.numpy.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = ufuncs.abs(period)
        x, xp = ufuncs.remainder(x, period), ufuncs.remainder(xp, period)
        order = sorting.argsort(xp)
        xp, fp = xp[order], fp[order]
        xp = shapes.concatenate([ufuncs.subtract(xp[-1:], period), xp, ufuncs.add(xp[:1], period)])
        fp = shapes.concatenate([fp[-1:], fp, fp[:1]])
    i = ufuncs.clip(sorting.searchsorted(xp, x, side="right"), 1, xp.shape[0] - 1)
    df = ufuncs.subtract(fp[i], fp[i - 1])
    dx = ufuncs.subtract(xp[i], xp[i - 1])
    delta = ufuncs.subtract(x, xp[i - 1])
    eps = np.spacing(np.finfo(np.dtype(xp.dtype)).eps)
    dx0 = ufuncs.less_equal(ufuncs.abs(dx), eps)
    f = ufuncs.where(dx0, fp[i - 1], ufuncs.add(fp[i - 1], ufuncs.multiply(
        ufuncs.true_divide(delta, ufuncs.where(dx0, 1, dx)), df)))
    if period is None:
        if not isinstance(left, str):
            f = ufuncs.where(ufuncs.less(x, xp[0]), fp[0] if left is None else left, f)
        if not isinstance(right, str):
            f = ufuncs.where(ufuncs.greater(x, xp[-1]), fp[-1] if right is None else right, f)
    return f


#: ``_interp`` compiled whole for each set of static arguments ``interp`` may choose.
_INTERP = {tuple(name for name, on in zip(("left", "right", "period"), flags) if on):
           compiled_whole(static_argnames=[name for name, on in zip(("left", "right", "period"), flags) if on])(
               _interp) for flags in itertools.product((False, True), repeat=3)}


@compiled_whole()
def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array, with optional prefix/suffix values (booleans
    are a ``TypeError``, as in JAX)."""
    check_arraylike("ediff1d", ary)
    for extra in (to_begin, to_end):
        if extra is not None:
            check_arraylike("ediff1d", extra)  # each at position 0, as JAX's
    flat = shapes.ravel(asarray(ary))
    if dtypes.is_bool(flat.dtype):  # JAX subtracts with lax.sub, which refuses booleans (diff compares them)
        raise TypeError("sub does not accept dtype bool at position 0. Accepted dtypes at position 0 are subtypes "
                        "of integer, floating, complexfloating.")
    out = diff(flat)
    parts = []
    if to_begin is not None:
        parts.append(shapes.ravel(convert(asarray(to_begin), out.dtype)))
    parts.append(out)
    if to_end is not None:
        parts.append(shapes.ravel(convert(asarray(to_end), out.dtype)))
    return shapes.concatenate(parts) if len(parts) > 1 else out


@compiled_whole(static_argnames=("axis",))
def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (sample points ``x`` or spacing ``dx``), in
    ``jnp.trapezoid``'s order of operations (a constant spacing: ``dx * (sum(y) - (y[0] + y[-1]) / 2)``), so
    the rounding is JAX's."""
    check_arraylike("trapezoid", y, *(() if x is None else (x,)))
    y = asarray(y)
    # ``axis`` as given for the sample points, whose rank may differ from y's (as JAX's).
    if x is None:
        y, = promote_inexact(y)
        spacing = asarray(dx)
        if spacing.ndim > 0:
            spacing = shapes.reshape(spacing, (1,) * (y.ndim - spacing.ndim) + tuple(spacing.shape))
            spacing = shapes.moveaxis(spacing, axis, -1)
    else:
        x = asarray(x)
        y, x = promote_inexact(y, x)
        spacing = diff(x) if x.ndim == 1 else shapes.moveaxis(diff(x, axis=axis), axis, -1)
    y = shapes.moveaxis(y, axis, -1)
    if spacing.ndim == 0 or spacing.shape[-1] == 1:  # constant along the axis
        step = spacing if spacing.ndim == 0 else spacing[..., 0]
        ends = ufuncs.multiply(0.5, ufuncs.add(y[..., 0], y[..., -1]))
        return ufuncs.multiply(step, ufuncs.subtract(reductions.sum(y, -1), ends))
    return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(spacing, ufuncs.add(y[..., 1:], y[..., :-1])), -1))


@compiled_whole(static_argnames=("axis",))
def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """Phases ``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis`` removed."""
    check_arraylike("unwrap", p)
    p = asarray(p)
    if not dtypes.is_inexact(p.dtype):  # the default float, x64's float64 too (JAX's unwrap: not to_inexact_dtype)
        p = convert(p, dtypes.default_float_dtype(), p.weak_type)
    if dtypes.is_complex(p.dtype):
        raise ValueError("toolkit.numpy.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    axis = canonical_axis(axis, p.ndim)
    discont = period / 2 if discont is None else discont
    interval = period / 2
    dd = diff(p, axis=axis)
    ddmod = ufuncs.subtract(ufuncs.remainder(ufuncs.add(dd, interval), period), interval)
    ddmod = ufuncs.where(ufuncs.logical_and(ufuncs.equal(ddmod, -interval), ufuncs.greater(dd, 0)), interval, ddmod)
    ph_correct = ufuncs.where(ufuncs.less(ufuncs.abs(dd), discont), 0, ufuncs.subtract(ddmod, dd))
    first = shapes.moveaxis(p, axis, 0)[:1]
    up = shapes.concatenate([first, shapes.moveaxis(ufuncs.add(shapes.moveaxis(p, axis, 0)[1:],
                                                               reductions.cumsum(shapes.moveaxis(ph_correct, axis, 0),
                                                                             axis=0)), 0, 0)], 0)
    return shapes.moveaxis(up, 0, axis)


def _gradient_along_axis(a: Any, h: Any, axis: int) -> Any:
    def sliced(x: Any, lo: int | None, hi: int | None) -> Any:
        return shapes._axis_slice(x, axis, lo, hi)
    upper = ufuncs.subtract(sliced(a, 1, 2), sliced(a, 0, 1))
    lower = ufuncs.subtract(sliced(a, -1, None), sliced(a, -2, -1))
    if np.ndim(h) == 0:
        inner = ufuncs.divide(ufuncs.multiply(ufuncs.subtract(sliced(a, 2, None), sliced(a, None, -2)), 0.5), h)
        return shapes.concatenate([ufuncs.divide(upper, h), inner, ufuncs.divide(lower, h)], axis=axis)
    if np.ndim(h) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if h.shape[0] != a.shape[axis]:
        raise ValueError("Spacing arrays must have the same length as the dimension along which the gradient is "
                         "calculated.")
    h = shapes.reshape(h, tuple(h.shape[0] if i == axis else 1 for i in range(a.ndim)))
    upper = ufuncs.divide(upper, ufuncs.subtract(sliced(h, 1, 2), sliced(h, 0, 1)))
    lower = ufuncs.divide(lower, ufuncs.subtract(sliced(h, -1, None), sliced(h, -2, -1)))
    dx1 = ufuncs.subtract(sliced(h, 1, -1), sliced(h, 0, -2))
    dx2 = ufuncs.subtract(sliced(h, 2, None), sliced(h, 1, -1))
    wa = ufuncs.divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, ufuncs.add(dx1, dx2)))
    wb = ufuncs.divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2))
    wc = ufuncs.divide(dx1, ufuncs.multiply(dx2, ufuncs.add(dx1, dx2)))
    inner = ufuncs.add(ufuncs.add(ufuncs.multiply(wa, sliced(a, 0, -2)), ufuncs.multiply(wb, sliced(a, 1, -1))),
                       ufuncs.multiply(wc, sliced(a, 2, None)))
    return shapes.concatenate([upper, inner, lower], axis=axis)


@compiled_whole(static_argnames=("axis", "edge_order"))
def gradient(f: Any, *varargs: Any, axis: int | Sequence[int] | None = None, edge_order: int | None = None) -> Any:
    """The gradient of the sampled ``f`` (central differences inside, one-sided at the edges) along each of
    ``axis`` (all by default), with unit, scalar or per-sample spacings ``varargs``, as ``jnp.gradient``: one
    array for one axis, else a list. ``edge_order`` is not supported (``NotImplementedError``)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    check_arraylike("gradient", f, *varargs)  # JAX fails on a list too (a TypeError from its dtype lookup)
    a, *spacing = [asarray(x) for x in promote_inexact(f, *varargs)]
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(canonical_axis(i, a.ndim) for i in ((axis,) if isinstance(axis, int) else axis))
    if not axes:
        return []
    if min(s for i, s in enumerate(a.shape) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are "
                         "required.")
    if not spacing:
        dx: list[Any] = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = spacing * len(axes)
    elif len(spacing) == len(axes):
        dx = spacing
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [_gradient_along_axis(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads
