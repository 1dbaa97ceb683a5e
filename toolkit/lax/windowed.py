"""Reductions with a user computation: ``reduce`` (over axes), ``reduce_window`` (over sliding

windows), the ``reduce_window_sum/max/min`` helpers and cumulative ``cumsum/cumprod/cummax/cummin``
and ``cumlogsumexp``.

The computation is a Python function on scalars, traced once into a
sub-program that becomes the body region of ``stablehlo.reduce`` /
``stablehlo.reduce_window``. It is variadic: with ``n`` operands it takes two
pytrees of ``n`` scalars (accumulator, element) and returns one.

Example::

    total = toolkit.lax.reduce(x, 0.0, toolkit.lax.add, (0,))        # becomes reduce_sum
    pooled = toolkit.lax.reduce_window(x, -jnp.inf, toolkit.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    running = toolkit.lax.cumsum(x, axis=1)
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from toolkit.core import dtypes, tracing, pytrees
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.program import Program
from toolkit.core.shape_poly import definitely_equal, is_symbolic_dim
from toolkit.lax import elementwise
from toolkit.lax import log_add_exp
from toolkit.lax import reductions
from toolkit.lax.convolution import padtype_to_pads
from toolkit.lax.shape_rules import check_axes, dim_param, window_count
from toolkit.lax.structural import canonicalize_axis
from toolkit.lax import control_flow
from toolkit.lax import structural

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("windowed")

__all__ = ["reduce", "reduce_window", "reduce_window_sum", "reduce_window_max", "reduce_window_min", "cumsum",
           "cumprod", "cummax", "cummin", "cumlogsumexp", "reduce_p", "reduce_window_p"]



def identity_value(kind: str, dtype: np.dtype) -> np.ndarray:
    """The neutral element of ``kind`` (sum, prod, max, min) as a 0-d array of ``dtype``."""
    if kind == "sum":
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind in ("max", "min"):
        low = kind == "max"
        if dtype == dtypes.bool_:
            return np.asarray(not low, dtype)
        if dtypes.is_inexact(dtype):
            return np.asarray(-np.inf if low else np.inf, dtype)
        info = np.iinfo(dtype)
        return np.asarray(info.min if low else info.max, dtype)
    raise ValueError(f"no identity for {kind!r}")


def _operand_avals(flat: Sequence[Any], what: str) -> list[ShapedArray]:
    avals = []
    for x in flat:
        try:
            avals.append(aval_of(x))
        except TypeError:
            raise TypeError(f"{what} must be arrays or scalars, got a value of type {type(x).__name__}") from None
    return avals


def _trace_computation(name: str, computation: Callable[..., Any], init_tree: pytrees.PyTreeDef,
                       scalar_avals: Sequence[ShapedArray]) -> Program:
    """Trace ``computation(acc_tree, x_tree) -> tree`` on scalars; it must be closed (no traced captures)."""
    if not callable(computation):
        raise TypeError(f"{name}: computation must be callable, got {type(computation).__name__}")
    out_tree_box: list[Any] = []

    def flat_fun(*scalars: Any) -> list[Any]:
        n = len(scalar_avals)
        a = pytrees.tree_unflatten(init_tree, list(scalars[:n]))
        b = pytrees.tree_unflatten(init_tree, list(scalars[n:]))
        leaves, tree = pytrees.tree_flatten(computation(a, b))
        out_tree_box.append(tree)
        return leaves

    avals = list(scalar_avals) * 2
    program, captured = tracing.trace_flat(flat_fun, avals, [f"an argument of {name}'s computation"] * len(avals))
    if captured:
        raise TypeError(f"{name}: the computation must not close over traced values or array constants "
                        f"(it captured {', '.join(t.aval.str_short() for t in captured)}); pass them as operands")
    if out_tree_box[0] != init_tree:
        raise TypeError(f"{name}: the computation must return the structure of the init values {init_tree}, "
                        f"got {out_tree_box[0]}")
    for i, (want, got) in enumerate(zip(scalar_avals, program.out_avals)):
        if got.shape != () or got.dtype != want.dtype:
            raise TypeError(f"{name}: the computation's output {i} is {got.str_short()}, expected a scalar "
                            f"{want.str_short()} like the init value")
    return program


def _check_operands_inits(name: str, operands: Sequence[ShapedArray], inits: Sequence[ShapedArray]) -> None:
    if len(operands) != len(inits) or not operands:
        raise TypeError(f"{name}: needs as many init values as operands (at least one), got {len(operands)} "
                        f"operands and {len(inits)} init values")
    for i, (x, init) in enumerate(zip(operands, inits)):
        if x.shape != operands[0].shape:
            raise TypeError(f"{name}: operands must have equal shapes, got {operands[0].shape} and {x.shape} "
                            f"(operand {i})")
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"{name}: init value {i} must be a scalar of the operand's dtype {x.dtype.name}, got "
                            f"{init.str_short()}")


# --- reduce ----------------------------------------------------------------------


def _reduce_rule(*args: ShapedArray, computation: Program, dimensions: tuple) -> list[ShapedArray]:
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    _check_operands_inits("reduce", operands, inits)
    check_axes("reduce", dimensions, operands[0].ndim, "dimension")
    if len(computation.invars) != 2 * n or len(computation.outvars) != n:
        raise TypeError(f"reduce: the computation must take {2 * n} scalars and return {n}")
    shape = tuple(d for i, d in enumerate(operands[0].shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype) for x in operands]


reduce_p = family.primitive("reduce", shape_rule=_reduce_rule, multiple_results=True)

_MONOIDS = {elementwise.add: ("sum", reductions.reduce_sum), elementwise.mul: ("prod", reductions.reduce_prod), elementwise.max: ("max", reductions.reduce_max),
            elementwise.min: ("min", reductions.reduce_min)}


def _monoid_reducer(computation: Any, init: Any, aval: ShapedArray) -> Callable[..., Any] | None:
    """The fixed reduction primitive when ``computation`` is add/mul/max/min and ``init`` its known identity."""
    entry = _MONOIDS.get(computation)
    if entry is None or isinstance(init, tracing.Tracer) or aval.shape != ():
        return None
    kind, reducer = entry
    if kind == "prod" and aval.dtype == dtypes.bool_ or kind == "sum" and aval.dtype == dtypes.bool_:
        return None
    try:
        value = np.asarray(init, aval.dtype)
    except (TypeError, ValueError):
        return None
    same = bool(np.array_equal(value, identity_value(kind, aval.dtype)))
    return reducer if same else None


def _is_bitwise_monoid(computation: Any, init: Any) -> bool:
    """Whether JAX's ``reduce`` sees a bitwise or/and/xor of integers or bools from its identity (a monoid it
    reduces with ``reduce_or``/``reduce_and``/``reduce_xor``; toolkit runs it as a general ``reduce``)."""
    if computation not in (elementwise.bitwise_or, elementwise.bitwise_and, elementwise.bitwise_xor):
        return False
    if isinstance(init, tracing.Tracer) or np.shape(init) != ():
        return False
    dtype = aval_of(init).dtype
    if not (dtypes.is_integer(dtype) or dtypes.is_bool(dtype)):
        return False
    identity = np.array(-1).astype(dtype) if computation is elementwise.bitwise_and else np.zeros((), dtype)
    return bool(np.equal(np.asarray(init), identity))


@family.function(binds=(reduce_p,))
def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],
           dimensions: Sequence[int], out_sharding: Any = None) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation(accumulator, element)``.

    ``operands`` and ``init_values`` are matching pytrees (one scalar init per
    operand). A monoid (``lax.add``/``mul``/``max``/``min`` with its identity
    as init) becomes the corresponding ``reduce_*`` primitive.

    ``out_sharding``, as JAX 0.10.2's: a sum (``lax.add`` from 0) passes it to ``reduce_sum`` (the result's
    type on Explicit mesh axes); another monoid JAX recognizes (product, max, min, and the bitwise ones on
    integers) raises ``NotImplementedError``; any other reduction ignores it.

    Example::

        # argmax by hand: a variadic reduce over (value, index)
        def pick(a, b):
            take_a = a[0] >= b[0]
            return lax.select(take_a, a[0], b[0]), lax.select(take_a, a[1], b[1])
        vals, idx = lax.reduce((x, lax.iota(np.int32, 5)), (-np.inf, 0), pick, (0,))
    """
    flat_ops, tree = pytrees.tree_flatten(operands)
    flat_inits, init_tree = pytrees.tree_flatten(init_values)
    if tree != init_tree:
        raise TypeError(f"reduce: operands {tree} and init_values {init_tree} must have the same structure")
    dims = tuple(sorted(int(d) for d in dimensions))
    op_avals = _operand_avals(flat_ops, "reduce operands")
    init_avals = _operand_avals(flat_inits, "reduce init values")
    if len(flat_ops) == 1:
        reducer = _monoid_reducer(computation, flat_inits[0], init_avals[0].update(dtype=op_avals[0].dtype))
        sums = reducer is reductions.reduce_sum
        if out_sharding is not None and sums:
            return pytrees.tree_unflatten(tree, [reductions.reduce_sum(flat_ops[0], dims, out_sharding=out_sharding)])
        if out_sharding is not None and (reducer is not None or _is_bitwise_monoid(computation, flat_inits[0])):
            raise NotImplementedError  # JAX's, bare: out_sharding of a monoid reduction other than a sum
        if reducer is not None:
            return pytrees.tree_unflatten(tree, [reducer(flat_ops[0], dims)])
    if not tracing.is_tracing():
        return tracing.eager_call(lambda ops, inits: reduce(ops, inits, computation, dims), operands, init_values)
    inits = [_init_as(init, aval, op) for init, aval, op in zip(flat_inits, init_avals, op_avals)]
    _check_operands_inits("reduce", op_avals, [aval_of(i) if not isinstance(i, tracing.Tracer) else i.aval
                                               for i in inits])
    program = _trace_computation("reduce", computation, tree, [ShapedArray((), a.dtype) for a in op_avals])
    outs = reduce_p.bind(*flat_ops, *inits, computation=program, dimensions=dims)
    return pytrees.tree_unflatten(tree, outs)


def _init_as(init: Any, init_aval: ShapedArray, operand: ShapedArray) -> Any:
    """A Python-scalar init takes the operand's dtype (as a weakly typed value would)."""
    if init_aval.weak_type and init_aval.shape == () and init_aval.dtype != operand.dtype:
        if isinstance(init, tracing.Tracer):
            return elementwise.convert_element_type(init, operand.dtype)
        return np.asarray(init, operand.dtype)
    return init


# --- reduce_window ---------------------------------------------------------------


def _dilate(size: Any, dilation: int) -> Any:
    return 0 if size == 0 else 1 + dilation * (size - 1)


def _reduce_window_rule(*args: ShapedArray, computation: Program, window_dimensions: tuple, window_strides: tuple,
                        padding: tuple, base_dilation: tuple, window_dilation: tuple) -> list[ShapedArray]:
    name = "reduce_window"
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    _check_operands_inits(name, operands, inits)
    ndim = operands[0].ndim
    for what, values in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                         ("padding", padding), ("base_dilation", base_dilation),
                         ("window_dilation", window_dilation)):
        if len(values) != ndim:
            raise TypeError(f"{name}: {what} needs one entry per operand dimension ({ndim}), got {values}")
    for what, values in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                         ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if any(v < 1 for v in values):
            raise ValueError(f"{name}: {what} must be positive, got {values}")
    shape = []
    for k, size in enumerate(operands[0].shape):
        padded = _dilate(size, base_dilation[k]) + padding[k][0] + padding[k][1]
        window = _dilate(window_dimensions[k], window_dilation[k])
        shape.append(window_count(padded, window, window_strides[k]))
    return [ShapedArray(tuple(shape), x.dtype) for x in operands]


reduce_window_p = family.primitive("reduce_window", shape_rule=_reduce_window_rule, multiple_results=True)


@family.function(binds=(reduce_window_p,))
def reduce_window(operand: Any, init_value: Any, computation: Callable[[Any, Any], Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """Reduce every window of ``operand`` with ``computation`` (``stablehlo.reduce_window``).

    ``operand``/``init_value`` may be matching pytrees (variadic). ``padding``
    is ``'SAME'``, ``'VALID'`` or ``(low, high)`` pairs per dimension.

    Example::

        # 2x2 max-pooling of an NHWC batch
        y = reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    """
    flat_ops, tree = pytrees.tree_flatten(operand)
    flat_inits, init_tree = pytrees.tree_flatten(init_value)
    if tree != init_tree:
        raise TypeError(f"reduce_window: operands {tree} and init values {init_tree} must have the same structure")
    op_avals = _operand_avals(flat_ops, "reduce_window operands")
    init_avals = _operand_avals(flat_inits, "reduce_window init values")
    if not op_avals:
        raise TypeError("reduce_window: needs at least one operand")
    ndim = op_avals[0].ndim
    window_dimensions = tuple(int(w) for w in window_dimensions)
    window_strides = (1,) * ndim if window_strides is None else tuple(int(s) for s in window_strides)
    base_dilation = (1,) * ndim if base_dilation is None else tuple(int(d) for d in base_dilation)
    window_dilation = (1,) * ndim if window_dilation is None else tuple(int(d) for d in window_dilation)
    if isinstance(padding, str):
        if len(window_dimensions) != ndim or len(window_strides) != ndim:
            raise TypeError(f"reduce_window: window_dimensions {window_dimensions} and window_strides "
                            f"{window_strides} need one entry per operand dimension ({ndim})")
        dilated = [_dilate(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads(op_avals[0].shape, dilated, window_strides, padding)
    try:
        padding = tuple((dim_param(lo), dim_param(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(f"reduce_window: padding must be a string or (low, high) pairs, got {padding!r}") from None
    params = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                  base_dilation=base_dilation, window_dilation=window_dilation)
    if not tracing.is_tracing():
        items = tuple(params.items())  # a closure of hashable values: the same window compiles once
        return tracing.eager_call(lambda ops, inits: reduce_window(ops, inits, computation, **dict(items)), operand,
                                  init_value)
    inits = [_init_as(init, aval, op) for init, aval, op in zip(flat_inits, init_avals, op_avals)]
    _check_operands_inits("reduce_window", op_avals, _operand_avals(inits, "reduce_window init values"))
    program = _trace_computation("reduce_window", computation, tree, [ShapedArray((), a.dtype) for a in op_avals])
    outs = reduce_window_p.bind(*flat_ops, *inits, computation=program, **params)
    return pytrees.tree_unflatten(tree, outs)


def _window_helper(kind: str, computation: Callable[[Any, Any], Any]):
    def helper(operand: Any, window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
               padding: Any = "VALID", base_dilation: Sequence[int] | None = None,
               window_dilation: Sequence[int] | None = None) -> Any:
        dtype = aval_of(operand).dtype
        return reduce_window(operand, identity_value(kind, dtype), computation, window_dimensions, window_strides,
                             padding, base_dilation, window_dilation)
    helper.__name__ = f"reduce_window_{kind}"
    helper.__doc__ = (f"``reduce_window`` with ``{kind}`` and its identity as init (padding contributes the "
                      f"identity).\n\nExample::\n\n    y = reduce_window_{kind}(x, (2, 2), (2, 2))\n")
    return helper


reduce_window_sum = _window_helper("sum", elementwise.add)
reduce_window_max = _window_helper("max", elementwise.max)
reduce_window_min = _window_helper("min", elementwise.min)


# --- cumulative reductions -------------------------------------------------------


def _cumulative(kind: str, computation: Callable[[Any, Any], Any], name: str):
    def cumulative(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        aval = aval_of(operand)
        if aval.dtype == dtypes.bool_:
            raise TypeError(f"{name} does not accept dtype bool; accepted dtypes are numbers")
        ndim = aval.ndim
        if ndim == 0:
            raise ValueError(f"{name} needs an operand of rank at least 1, got {aval.str_short()}")
        if not -ndim <= int(axis) < ndim:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}")
        axis = int(axis) % ndim
        size = aval.shape[axis]
        if definitely_equal(size, 0):
            return operand
        if is_symbolic_dim(size):
            return _cumulative_symbolic(kind, computation, operand, axis, reverse)
        # A window covering the whole axis, padded so window k ends (or, reversed, starts) at element k:
        # O(n^2) work but one fused XLA op, which is what JAX emits on CPU too.
        window = [1] * ndim
        window[axis] = size
        padding = [(0, 0)] * ndim
        padding[axis] = (0, size - 1) if reverse else (size - 1, 0)
        return reduce_window(operand, identity_value(kind, aval.dtype), computation, window, (1,) * ndim,
                             padding)
    cumulative.__name__ = name
    cumulative.__doc__ = (f"Cumulative {kind} of ``operand`` along ``axis`` (from the end when ``reverse``); "
                          f"same shape and dtype.\n\nExample::\n\n    {name}(np.array([1, 2, 3]))  # -> "
                          f"{ {'sum': '[1, 3, 6]', 'prod': '[1, 2, 6]', 'max': '[1, 2, 3]', 'min': '[1, 1, 1]'}[kind] }\n")
    return cumulative


def _cumulative_symbolic(kind: str, computation: Callable[[Any, Any], Any], operand: Any, axis: int,
                         reverse: bool) -> Any:
    """A cumulative reduction along an axis of symbolic size ``n``.

    The whole-axis window of the static path needs a static window size, so
    this is a parallel prefix scan (Hillis-Steele) instead: ``ceil(log2 n)``
    steps of a counted loop (``fori_loop``, one ``stablehlo.while``), step
    ``s`` combining every element with the one ``2**s`` places before it. The shift reads a ``dynamic_slice`` of the operand
    preceded by ``n`` identity elements, so the first ``k`` elements combine
    with the identity and need no mask. Every shape stays ``n`` (or ``2n``)
    along the axis, so the module refines to static shapes for any ``n``.
    Sums may round differently from the static path (tree order).
    """

    x = structural.rev(operand, (axis,)) if reverse else operand
    aval = aval_of(x)
    shape, ndim = tuple(aval.shape), aval.ndim
    identity = structural.broadcast_in_dim(identity_value(kind, aval.dtype), shape, ())
    size = structural.dimension_as_value(shape[axis], np.int32)
    zero = np.zeros((), np.int32)

    def body(step: Any, y: Any) -> Any:
        k = elementwise.shift_left(np.ones((), np.int32), step)
        padded = structural.concatenate([identity, y], axis)
        starts = [elementwise.sub(size, k) if d == axis else zero for d in range(ndim)]
        shifted = structural.clamped_dynamic_slice(padded, starts, shape)
        return computation(shifted, y)

    # ceil(log2 n) steps, as a counted loop: XLA's trip-count analysis crashes on a doubling induction variable.
    steps = elementwise.sub(np.asarray(32, np.int32), elementwise.clz(elementwise.sub(size, np.ones((), np.int32))))
    y = control_flow.fori_loop(np.zeros((), np.int32), steps, body, x)
    return structural.rev(y, (axis,)) if reverse else y


cumsum = _cumulative("sum", elementwise.add, "cumsum")
cumprod = _cumulative("prod", elementwise.mul, "cumprod")
cummax = _cumulative("max", elementwise.max, "cummax")
cummin = _cumulative("min", elementwise.min, "cummin")


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """Cumulative ``log(sum(exp(operand)))`` along ``axis``, computed stably (floating or complex operands).

    A whole-axis ``reduce_window`` of JAX's ``logaddexp`` (``toolkit.lax.log_add_exp``), as the static path of
    the other cumulative reductions.
    """
    aval = aval_of(operand)
    if not dtypes.is_inexact(aval.dtype):
        raise TypeError(f"cumlogsumexp does not accept dtype {aval.dtype.name}. Accepted dtypes are subtypes of "
                        "floating, complexfloating.")
    ndim = aval.ndim
    if ndim == 0:
        raise ValueError(f"cumlogsumexp needs an operand of rank at least 1, got {aval.str_short()}")
    axis = canonicalize_axis(axis, ndim)
    size = aval.shape[axis]
    if is_symbolic_dim(size):
        raise NotImplementedError("cumlogsumexp along an axis of symbolic size")
    if size == 0:
        return operand
    window, padding = [1] * ndim, [(0, 0)] * ndim
    window[axis] = size
    padding[axis] = (0, size - 1) if reverse else (size - 1, 0)
    return reduce_window(operand, np.asarray(-np.inf, aval.dtype), log_add_exp.logaddexp, window, (1,) * ndim, padding)
