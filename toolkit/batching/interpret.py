"""The batching interpreter: evaluate a traced ``Program`` on values that carry a batch dimension.

``batch_program(program, args, dims, axis)`` walks the equations in order,
keeping for every variable a value and the position of its batch dimension
(``None``: not batched, the same for every batch element). An equation whose
inputs are all unbatched is bound again unchanged; otherwise its primitive's
rule from ``BATCHING_RULES`` binds the batched computation. Binding re-traces
when a trace is active (so ``vmap`` composes with ``jit`` and ``grad``) and
runs eagerly otherwise.

Helpers for writing rules live here too: ``moveaxis``, ``bdim_at_front``,
``broadcast_batched`` (give an unbatched value a batch dimension),
``batched_outputs`` (which outputs of a sub-program a batched input reaches),
``batch_subprogram`` (trace the batched version of a control-flow body) and
``loop_rule`` (the always-correct fallback: a ``scan`` over the batch that
applies the primitive once per element).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from toolkit.batching.registry import batching_rule
from toolkit.core import tracing
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.primitive import Primitive
from toolkit.core.program import Equation, Literal, Program, Var, subprograms
from toolkit.lax.parallel import vmapped_axes
from toolkit.lax import body_traces, structural
from toolkit.lax.control_flow import scan_p

__all__ = [
    "AxisData",
    "batch_equation",
    "batch_program",
    "batch_subprogram",
    "batched_aval",
    "batched_outputs",
    "bdim_at_front",
    "broadcast_batched",
    "loop_rule",
    "moveaxis",
    "staged",
    "unbatched_aval",
    "uses_vmapped_axis",
]


class AxisData(NamedTuple):
    """The axis a ``vmap`` adds: its size, the mesh axis (or axes) it is sharded over, if any, and its name
    (``axis_name``: collectives over it act across the batch), if any."""

    size: Any
    spmd_axis_name: Any = None
    name: Any = None


def uses_vmapped_axis(eqn: Equation, name: Any = None) -> bool:
    """Whether ``eqn`` (or a program in its parameters) has a collective over the vmapped axis ``name``
    (any vmapped axis when None). Such an equation is batched even with no batched operand: over a
    vmapped axis ``axis_index`` differs per batch element, ``psum`` of a constant multiplies it."""
    named = _eqn_vmapped_axes(eqn)
    return bool(named) if name is None else name in named


#: program -> the vmapped axes its collectives name (its sub-programs' too): programs do not change once
#: traced, and batching asks again for every equation of every (loop) body it batches.
_PROGRAM_VMAPPED_AXES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _eqn_vmapped_axes(eqn: Equation) -> frozenset:
    named = frozenset(vmapped_axes(eqn.params))
    for sub in subprograms(eqn):
        axes = _PROGRAM_VMAPPED_AXES.get(sub)
        if axes is None:
            axes = _PROGRAM_VMAPPED_AXES[sub] = frozenset().union(*(_eqn_vmapped_axes(e) for e in sub.eqns))
        named |= axes
    return named


# --- small array helpers ---------------------------------------------------------------


def ndim_of(x: Any) -> int:
    return len(aval_of(x).shape)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with dimension ``src`` moved to position ``dst`` (a ``transpose``, or ``x`` itself)."""
    n = ndim_of(x)
    src, dst = src % n, dst % n
    if src == dst:
        return x
    perm = [i for i in range(n) if i != src]
    perm.insert(dst, src)
    return structural.transpose(x, perm)


def broadcast_batched(x: Any, size: Any, dim: int) -> Any:
    """An unbatched ``x`` given a batch dimension of ``size`` at position ``dim`` (every element equal)."""
    aval = aval_of(x)
    shape = list(aval.shape)
    shape.insert(dim, size)
    kept = [i for i in range(len(shape)) if i != dim]
    return structural.broadcast_in_dim(x, tuple(shape), tuple(kept))


def bdim_at_front(x: Any, dim: int | None, size: Any) -> Any:
    """``x`` with its batch dimension first (broadcast when it has none)."""
    if dim is None:
        return broadcast_batched(x, size, 0)
    return moveaxis(x, dim, 0)


def unbatched_aval(aval: ShapedArray, dim: int | None) -> ShapedArray:
    if dim is None:
        return aval
    return aval.update(shape=tuple(s for i, s in enumerate(aval.shape) if i != dim))


def batched_aval(aval: ShapedArray, size: Any, batched: bool) -> ShapedArray:
    """``aval`` with a leading batch dimension when ``batched``."""
    return aval.update(shape=(size,) + tuple(aval.shape)) if batched else aval


def staged(fun: Callable[..., Any], *args: Any) -> Any:
    """``fun(*args)`` inside the current trace, or compiled as one ``jit`` outside any trace.

    Rules that build sub-programs (control flow, loops) use it: a body traced
    outside any trace would hold its constants itself, which sub-programs may not.
    """
    if tracing.is_tracing():
        return fun(*args)
    return tracing.eager_call(fun, *args)


# --- the interpreter -----------------------------------------------------------------------


def batch_equation(eqn: Equation, args: Sequence[Any], dims: Sequence[int | None],
                   axis: AxisData) -> tuple[list[Any], list[int | None]]:
    """Outputs and their batch dimensions for one equation."""
    prim = eqn.primitive
    if all(d is None for d in dims) and (axis.name is None or not uses_vmapped_axis(eqn, axis.name)):
        out = prim.bind(*args, **eqn.params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [None] * len(outs)
    rule = batching_rule(prim)
    outs, out_dims = rule(axis, list(args), list(dims), **eqn.params)
    if not prim.multiple_results:
        return [outs], [out_dims]
    return list(outs), list(out_dims)


def batch_program(program: Program, args: Sequence[Any], dims: Sequence[int | None],
                  axis: AxisData) -> tuple[list[Any], list[int | None]]:
    """Evaluate ``program`` on ``args`` batched along ``dims``; returns the outputs and their batch dimensions."""
    if len(args) != len(program.invars) or len(dims) != len(program.invars):
        raise TypeError(f"batch_program: the program takes {len(program.invars)} inputs, got {len(args)} values "
                        f"and {len(dims)} batch dimensions")
    values: dict[Var, Any] = {}
    bdims: dict[Var, int | None] = {}
    for v, c in zip(program.constvars, program.consts):
        values[v], bdims[v] = c, None
    for v, x, d in zip(program.invars, args, dims):
        values[v], bdims[v] = x, d

    def read(atom: Any) -> tuple[Any, int | None]:
        if isinstance(atom, Literal):
            return atom.value, None
        return values[atom], bdims[atom]

    for eqn in program.eqns:
        ins = [read(a) for a in eqn.inputs]
        with tracing.equation_context(eqn.source_info):  # what it makes points at the original's line
            outs, out_dims = batch_equation(eqn, [x for x, _ in ins], [d for _, d in ins], axis)
        for v, x, d in zip(eqn.outputs, outs, out_dims, strict=True):
            values[v], bdims[v] = x, d
    result = [read(v) for v in program.outvars]
    return [x for x, _ in result], [d for _, d in result]


# --- sub-programs ------------------------------------------------------------------------


def batched_outputs(program: Program, in_batched: Sequence[bool]) -> list[bool]:
    """Which outputs of ``program`` may depend on a batched input (equation by equation, conservatively)."""
    batched: set[Var] = {v for v, b in zip(program.invars, in_batched) if b}
    for eqn in program.eqns:
        if any(isinstance(a, Var) and a in batched for a in eqn.inputs) or uses_vmapped_axis(eqn):
            batched.update(eqn.outputs)
    return [isinstance(v, Var) and v in batched for v in program.outvars]


def batch_subprogram(program: Program, in_batched: Sequence[bool], axis: AxisData,
                     out_batched: Sequence[bool]) -> tuple[Program, list[Any]]:
    """Trace the batched version of ``program``: batched inputs and outputs carry the batch dimension first.

    Outputs marked in ``out_batched`` are batched (broadcast when the body left
    them unbatched); the others must come out unbatched. Returns the program
    and the outer values it captured (its trailing inputs), as ``trace_flat``.
    """
    in_batched, out_batched = tuple(in_batched), tuple(out_batched)
    try:
        hash(axis)
    except TypeError:  # an axis that cannot be a key (an unhashable size or name): traced each time
        return _trace_batched(program, in_batched, axis, out_batched)
    # Kept with the program (toolkit.lax.body_traces): an eager vmap of the same function batches it once.
    return body_traces.derived([program], ("batched", in_batched, axis, out_batched),
                               lambda: _trace_batched(program, in_batched, axis, out_batched))


def _trace_batched(program: Program, in_batched: Sequence[bool], axis: AxisData,
                   out_batched: Sequence[bool]) -> tuple[Program, list[Any]]:
    avals = [batched_aval(a, axis.size, b) for a, b in zip(program.in_avals, in_batched)]

    def body(*xs: Any) -> list[Any]:
        outs, dims = batch_program(program, xs, [0 if b else None for b in in_batched], axis)
        result = []
        for i, (x, d, want) in enumerate(zip(outs, dims, out_batched)):
            if want:
                result.append(bdim_at_front(x, d, axis.size))
            elif d is not None:
                raise AssertionError(f"batch_subprogram: output {i} came out batched but was expected unbatched")
            else:
                result.append(x)
        return result

    program, captured = tracing.trace_flat(body, avals)
    return program, list(captured)


def move_captured(program: Program, num_leading: int, num_captured: int) -> Program:
    """``program`` whose trailing ``num_captured`` inputs are moved to follow its first ``num_leading`` ones."""
    if not num_captured:
        return program
    invars = list(program.invars)
    explicit, captured = invars[:len(invars) - num_captured], invars[len(invars) - num_captured:]
    invars = explicit[:num_leading] + captured + explicit[num_leading:]
    return Program(program.constvars, program.consts, invars, program.outvars, program.eqns)


# --- the fallback: one application per batch element --------------------------------------


def loop_apply(prim: Primitive, axis: AxisData, args: Sequence[Any], dims: Sequence[int | None],
               params: dict[str, Any]) -> tuple[list[Any], list[int]]:
    """Apply ``prim`` once per batch element inside a ``scan`` over the batch; outputs batched first."""

    batched = [d is not None for d in dims]

    def run(*xs: Any) -> list[Any]:
        mapped = [moveaxis(x, d, 0) for x, d in zip(xs, dims) if d is not None]
        consts = [x for x, d in zip(xs, dims) if d is None]
        slice_avals = [unbatched_aval(aval_of(x), 0) for x in mapped]
        const_avals = [aval_of(x) for x in consts]

        def body(*inputs: Any) -> list[Any]:
            it_x, it_c = iter(inputs[:len(mapped)]), iter(inputs[len(mapped):])
            full = [next(it_x) if b else next(it_c) for b in batched]
            out = prim.bind(*full, **params)
            return list(out) if prim.multiple_results else [out]

        program, captured = tracing.trace_flat(body, slice_avals + const_avals)
        return list(scan_p.bind(*mapped, *consts, *captured, body=program, num_carry=0,
                                num_consts=len(consts) + len(captured), length=axis.size, reverse=False, unroll=1))

    outs = staged(run, *args)
    return outs, [0] * len(outs)


def loop_rule(prim: Primitive) -> Callable[..., Any]:
    """A batching rule for ``prim`` that loops over the batch (always correct for a pure primitive)."""
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        outs, out_dims = loop_apply(prim, axis, args, dims, params)
        return (outs, out_dims) if prim.multiple_results else (outs[0], out_dims[0])
    rule.__name__ = f"{prim.name}_loop_batch"
    return rule
