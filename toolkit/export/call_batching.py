"""Batching rule for ``call_exported`` (``vmap`` of ``Exported.call``; JAX has none).

**The general rule is a loop.** The exported module is opaque StableHLO, so
the rule calls it once per batch element inside a ``scan`` over the batch:
each call sees exactly the shapes a Python loop over the batch would pass,
and a shape-polymorphic export binds its dimension variables to the
element's shapes there (``b`` of an ``f32[b, 3]`` parameter becomes the
element's leading size) and is refined to static shapes inside the loop
body. So ``vmap(exp.call)(xs)`` equals ``stack([exp.call(x) for x in xs])``
for exports written by toolkit or by JAX, polymorphic or not.

**Binding the batch into the dimension variable, where provably equal.**
When the export is polymorphic in the leading dimension ``b`` of its
batched arguments, one call on the batch folded into that dimension
(``b = B * n`` rows, reshaped back afterwards) computes the same as the loop
*if* row ``i`` of every output depends only on row ``i`` of the inputs and
nothing reads ``b`` as a value. toolkit proves this on the export's traced
``Program`` (kept by exports made in this process: ``Exported._get_vjp``
holds it) with ``rows_independent`` below — a dataflow analysis that tracks
the row dimension through elementwise ops, broadcasts, transposes, trailing
reshapes, reductions/sorts/windows that do not touch it and contractions
that keep it free or batched, and refuses everything else (iota or
``dimension_size`` over ``b``, gathers, control flow over rows, a reduction
over the rows, constraints on ``b``, ...). Deserialized exports (toolkit's or
JAX's) carry no program, so they take the loop.

``call_exported`` is a family defined above ``toolkit.batching``, so its rules are registered beside it:
``toolkit/export/call.py`` calls :func:`attach` (as ``differentiation.attach`` for its derivative).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from toolkit.batching.interpret import loop_apply, moveaxis
from toolkit.batching.registry import register_batching
from toolkit.core.avals import aval_of
from toolkit.core.program import Literal, Program, Var, subprograms
from toolkit.lax import structural
from toolkit.core.shape_poly import definitely_equal, is_symbolic_dim

__all__ = ["attach", "fold_variable", "rows_independent"]


# --- the analysis -------------------------------------------------------------------------


def _mentions(value: Any, var: str) -> bool:
    """Whether a parameter value (dims, tuples, named tuples) mentions the dimension variable ``var``."""
    if is_symbolic_dim(value):
        return var in value.get_vars()
    if isinstance(value, (tuple, list)):
        return any(_mentions(v, var) for v in value)
    return False


def _positions(shape: Sequence[Any], var: str) -> list[int]:
    return [i for i, d in enumerate(shape) if _mentions(d, var)]


def _is_var(d: Any, var: str) -> bool:
    return is_symbolic_dim(d) and d.get_vars() == {var} and str(d) == var


_ELEMENTWISE_NAMES = (
    "neg sign floor ceil exp exp2 log log1p expm1 tanh logistic sin cos tan asin acos atan sinh cosh asinh acosh "
    "atanh sqrt rsqrt cbrt not population_count clz erf erfc erf_inv lgamma digamma conj is_finite round abs real "
    "imag integer_pow convert_element_type add sub mul div rem pow max min and or xor atan2 nextafter shift_left "
    "shift_right_arithmetic shift_right_logical complex eq ne lt le gt ge select_n clamp sharding_constraint name")
_ELEMENTWISE = frozenset(_ELEMENTWISE_NAMES.split())
_REDUCTIONS = {"reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor"}

_NO = object()  # the analysis failed


def _row_of_equation(eqn: Any, rows: Sequence[Any], var: str) -> list[Any]:
    """Output row positions (``None``: no row dimension and row-free) or ``_NO``."""
    name, params = eqn.primitive.name, eqn.params
    out_shapes = [tuple(v.aval.shape) for v in eqn.outputs]
    any_row = any(r is not None for r in rows)
    if not any_row:
        # Nothing row-dependent flows in: fine unless the equation itself reads ``var``.
        if any(_mentions(v, var) for v in params.values()) or any(_positions(s, var) for s in out_shapes):
            if name == "broadcast_in_dim":  # a row-free value repeated along the rows
                pos = _positions(params["shape"], var)
                if len(pos) == 1 and _is_var(params["shape"][pos[0]], var) and pos[0] not in \
                        params["broadcast_dimensions"]:
                    return [pos[0]]
            return [_NO] * len(eqn.outputs)
        for sub in subprograms(eqn):
            for inner in sub.walk():
                if any(_mentions(v, var) for v in inner.params.values()) or any(
                        _positions(tuple(o.aval.shape), var) for o in inner.outputs):
                    return [_NO] * len(eqn.outputs)
        return [None] * len(eqn.outputs)

    def single(p: int) -> list[Any]:
        shape = out_shapes[0]
        ok = len(out_shapes) == 1 and _positions(shape, var) == [p] and _is_var(shape[p], var)
        return [p] if ok else [_NO]

    in_avals = [a.aval for a in eqn.inputs]
    row_inputs = {r for r in rows if r is not None}
    if name in _ELEMENTWISE:
        if len(row_inputs) != 1:
            return [_NO]
        p = row_inputs.pop()
        for a, r in zip(in_avals, rows):
            if r is None and _positions(a.shape, var):
                return [_NO]  # a row-free operand cannot have a row dimension
        if any(_mentions(v, var) for v in params.values() if not hasattr(v, "spec")):
            return [_NO]
        return single(p)
    if name in ("concatenate", "sort"):
        if len(row_inputs) != 1 or any(r is None for r in rows):
            return [_NO] * len(eqn.outputs)
        p = row_inputs.pop()
        if params["dimension"] == p:
            return [_NO] * len(eqn.outputs)
        return [p if _positions(s, var) == [p] else _NO for s in out_shapes]
    if len(eqn.inputs) == 1 or name in ("pad", "reduce_window", "argmax", "argmin"):
        (p,) = [r for r in rows if r is not None] if len(row_inputs) == 1 else [None]
        if p is None or any(r is not None for r in rows[1:]):
            return [_NO] * len(eqn.outputs)
        if name == "broadcast_in_dim":
            return single(params["broadcast_dimensions"][p])
        if name == "transpose":
            return single(list(params["permutation"]).index(p))
        if name == "reshape":
            old, new = tuple(in_avals[0].shape), tuple(params["new_sizes"])
            if len(new) > p and all(definitely_equal(a, b) for a, b in zip(old[:p + 1], new[:p + 1])):
                return single(p)
            return [_NO]
        if name in _REDUCTIONS:
            axes = params["axes"]
            return [_NO] if p in axes else single(p - sum(a < p for a in axes))
        if name in ("argmax", "argmin"):
            a = params["axis"]
            return [_NO] if a == p else single(p - (a < p))
        if name == "rev":
            return [_NO] if p in params["dimensions"] else single(p)
        if name == "slice":
            start, limit = params["start_indices"][p], params["limit_indices"][p]
            stride = 1 if params["strides"] is None else params["strides"][p]
            full = start == 0 and stride == 1 and definitely_equal(limit, in_avals[0].shape[p])
            return single(p) if full else [_NO]
        if name == "pad":
            return single(p) if tuple(params["padding_config"][p]) == (0, 0, 0) else [_NO]
        if name == "top_k":
            return [p, p] if p != in_avals[0].ndim - 1 and all(_positions(s, var) == [p] for s in out_shapes) \
                else [_NO, _NO]
        if name == "reduce_window" and len(eqn.inputs) == 2:
            one = (params["window_dimensions"][p], params["window_strides"][p], params["base_dilation"][p],
                   params["window_dilation"][p]) == (1, 1, 1, 1) and tuple(params["padding"][p]) == (0, 0)
            return single(p) if one else [_NO]
        return [_NO] * len(eqn.outputs)
    if name == "dot_general":
        (lc, rc), (lb, rb) = params["dimension_numbers"]
        rl, rr = rows
        lhs_free = [d for d in range(in_avals[0].ndim) if d not in lc and d not in lb]
        rhs_free = [d for d in range(in_avals[1].ndim) if d not in rc and d not in rb]
        if rl is not None and rr is not None:
            pairs = [k for k, (a, b) in enumerate(zip(lb, rb)) if a == rl and b == rr]
            return single(pairs[0]) if pairs else [_NO]
        if rl is not None:
            return single(len(lb) + lhs_free.index(rl)) if rl in lhs_free else [_NO]
        return single(len(lb) + len(lhs_free) + rhs_free.index(rr)) if rr in rhs_free else [_NO]
    return [_NO] * len(eqn.outputs)


def rows_independent(program: Program, in_rows: Sequence[int | None], var: str) -> list[Any] | None:
    """The row position of every output of ``program`` when row ``i`` of each output depends only on row
    ``i`` of the inputs (``in_rows[k]``: where input ``k``'s rows are, ``None``: it has none); else ``None``.

    Rows are the dimension of size ``var`` (a dimension variable); the analysis also fails when anything
    reads ``var`` as a value or mixes rows.
    """
    rows: dict[Var, Any] = {v: None for v in program.constvars}
    for v, r in zip(program.invars, in_rows):
        rows[v] = r

    def row(atom: Any) -> Any:
        return None if isinstance(atom, Literal) else rows[atom]

    for eqn in program.eqns:
        ins = [row(a) for a in eqn.inputs]
        if any(r is _NO for r in ins):
            return None
        outs = _row_of_equation(eqn, ins, var)
        if any(r is _NO for r in outs):
            return None
        for v, r in zip(eqn.outputs, outs):
            rows[v] = r
    result = [row(v) for v in program.outvars]
    return None if any(r is _NO for r in result) else result


def _retained_program(exported: Any) -> Program | None:
    get_vjp = getattr(exported, "_get_vjp", None)
    if isinstance(get_vjp, functools.partial) and get_vjp.args and isinstance(get_vjp.args[0], Program):
        return get_vjp.args[0]
    return None


def fold_variable(exported: Any, batched: Sequence[bool]) -> str | None:
    """The dimension variable a batch can be folded into (see the module docstring), or ``None``."""
    program = _retained_program(exported)
    in_avals, out_avals = list(exported.in_avals), list(exported.out_avals)
    if program is None or len(program.invars) != len(in_avals) or not any(batched) or not out_avals:
        return None
    for v, a in zip(program.invars, in_avals):
        if tuple(v.aval.shape) != tuple(a.shape) or v.aval.dtype != a.dtype:
            return None
    leading: list[Any] = [a.shape[0] if a.shape else None for a, b in zip(in_avals, batched) if b]  # None: a scalar
    if not all(is_symbolic_dim(d) for d in leading) or len({str(d) for d in leading}) != 1:
        return None
    var = str(leading[0])
    if not _is_var(leading[0], var) or leading[0].scope.constraints:
        return None
    for a, b in zip(in_avals, batched):
        if _positions(a.shape, var) != ([0] if b else []):
            return None
    for a in out_avals:
        if _positions(a.shape, var) != [0] or not _is_var(a.shape[0], var):
            return None
    rows = rows_independent(program, [0 if b else None for b in batched], var)
    if rows is None or any(r != 0 for r in rows):
        return None
    return var


# --- the rule -------------------------------------------------------------------------------


def attach(call_exported_p: Any) -> None:
    """Give ``call_exported_p`` its batching rule (called by ``toolkit/export/call.py`` beside its JVP)."""
    def call_exported_batch(axis, args, dims, *, exported):
        batched = [d is not None for d in dims]
        size = axis.size
        if isinstance(size, int) and size > 0 and fold_variable(exported.exported, batched) is not None:
            folded = []
            for x, d in zip(args, dims):
                if d is None:
                    folded.append(x)
                    continue
                x = moveaxis(x, d, 0)
                shape = tuple(aval_of(x).shape)
                folded.append(structural.reshape(x, (shape[0] * shape[1],) + shape[2:]))
            outs = call_exported_p.bind(*folded, exported=exported)
            result = []
            for y in outs:
                shape = tuple(aval_of(y).shape)
                result.append(structural.reshape(y, (size, shape[0] // size) + shape[1:]))
            return result, [0] * len(result)
        return loop_apply(call_exported_p, axis, args, dims, {"exported": exported})

    register_batching(call_exported_p, call_exported_batch)
