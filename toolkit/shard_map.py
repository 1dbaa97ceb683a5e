"""``shard_map``: write the per-device program yourself, with explicit collectives.

``shard_map(f, mesh=, in_specs=, out_specs=, axis_names=frozenset(), check_vma=True)``
has ``jax.shard_map``'s meaning: each argument is split into blocks by its
``PartitionSpec`` over the mesh, ``f`` runs once per device on its block
(seeing block shapes) and may communicate with the collectives of
``toolkit.lax.parallel`` over the *manual* axes (``axis_names``, default all
of the mesh's), and the per-device results are put together again by
``out_specs``. ``mesh`` may be omitted under ``with mesh:`` / ``set_mesh``.

The whole body is one equation, ``shard_map``, whose parameters hold the
body ``Program``; it lowers to Shardy's ``sdy.manual_computation`` (or, with
``TOOLKIT_PARTITIONER=gspmd``, to JAX's pre-Shardy ``@Sharding`` +
``@SPMDFullToShardShape`` / ``@SPMDShardToFullShape`` custom calls).

Varying manual axes (``check_vma=True``, JAX's default): after tracing, the
body is analysed for the manual axes each value varies over (inputs: the
axes their spec mentions; ``psum`` and ``all_gather(to="invarying")`` remove
their axes, ``axis_index`` adds them, everything else takes the union of its
operands, loops to a fixed point). An output whose ``out_specs`` leaves out an axis it varies over is
refused, as JAX does; explicit ``pvary`` equations are inserted where an
invariant value meets a varying one, so reverse mode sums the cotangents of
replicated values exactly where JAX does (``pvary`` transposes to ``psum``,
``psum`` to ``pvary``). A ``grad`` taken *inside* the body is differentiated
before the body is analysed, so the same analysis first rewrites the program
it differentiates (:func:`_vma_before_differentiation`), its inputs' axes read
off the body traced so far.

Example::

    @functools.partial(toolkit.shard_map, mesh=mesh, in_specs=(P("x", None), P()), out_specs=P())
    def loss(x_block, w):
        return toolkit.lax.pmean(jnp.mean((x_block @ w) ** 2), "x")
"""

from __future__ import annotations

import functools
import math
from typing import AbstractSet, Any, Callable, Sequence


from toolkit.core import tracing, pytrees
from toolkit.core.avals import ShapedArray, leaf_avals
from toolkit.core.families import Family
from toolkit.core.sharding_types import NO_SHARDING_RULE
from toolkit.core.program import Equation, Literal, Program, Var
from toolkit.lax import control_flow
from toolkit.lax import parallel
from toolkit.shard import Mesh, PartitionSpec, get_mesh
from toolkit.shard.partition_spec import UNCONSTRAINED

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("shard_map")

__all__ = ["shard_map", "shard_map_p"]


# --- specs ----------------------------------------------------------------------------


def _spec_dims(spec: PartitionSpec, ndim: int) -> list[tuple]:
    """Per dimension, the tuple of mesh axes it is split over."""
    dims = []
    for entry in tuple(spec) + (None,) * (ndim - len(spec)):
        if entry is None:
            dims.append(())
        else:
            dims.append(tuple(entry) if isinstance(entry, tuple) else (entry,))
    return dims


def _spec_axes(spec: PartitionSpec) -> set:
    return {a for entry in spec if entry is not None and entry is not UNCONSTRAINED
            for a in (entry if isinstance(entry, tuple) else (entry,))}


def _local_shape(shape: Sequence[int], spec: PartitionSpec, mesh: Mesh) -> tuple:
    return tuple(d // math.prod(mesh.shape[a] for a in axes) for d, axes in zip(shape, _spec_dims(spec, len(shape))))


def _global_shape(shape: Sequence[int], spec: PartitionSpec, mesh: Mesh) -> tuple:
    return tuple(d * math.prod(mesh.shape[a] for a in axes) for d, axes in zip(shape, _spec_dims(spec, len(shape))))


# --- the primitive -----------------------------------------------------------------------


def _shard_map_rule(*avals: ShapedArray, body: Program, mesh: Mesh, in_specs: tuple, out_specs: tuple,
                    manual_axes: tuple, check_vma: bool) -> list[ShapedArray]:
    if len(avals) != len(in_specs) or len(avals) != len(body.invars):
        raise TypeError(f"shard_map: {len(avals)} operands for {len(in_specs)} in_specs and a body of "
                        f"{len(body.invars)} inputs")
    for i, (aval, spec, inner) in enumerate(zip(avals, in_specs, body.in_avals)):
        local = _local_shape(aval.shape, spec, mesh)
        if local != tuple(inner.shape) or aval.dtype != inner.dtype:
            raise TypeError(f"shard_map: operand {i} of type {aval.str_short()} split by {spec} does not match the "
                            f"body's input {inner.str_short()}")
    return [ShapedArray(_global_shape(a.shape, spec, mesh), a.dtype, a.weak_type)
            for a, spec in zip(body.out_avals, out_specs)]


shard_map_p = family.primitive("shard_map", shape_rule=_shard_map_rule, multiple_results=True)
NO_SHARDING_RULE[shard_map_p] = ("not yet: JAX types a shard_map's results from out_specs over the mesh's explicit "
                                 "axes; its body runs on Manual axes")


# --- varying manual axes ---------------------------------------------------------------------


def _ordered(axes: AbstractSet[Any], env: parallel.AxisEnv) -> tuple:
    return tuple(a for a in env.names if a in axes)


class _Rewriter:
    """Infers the manual axes each value varies over and makes every mixing explicit with ``pvary``."""

    def __init__(self, env: parallel.AxisEnv):
        self.env = env

    def pvary(self, eqns: list, atom: Any, have: frozenset, want: frozenset) -> Any:
        missing = want - have
        if not missing or isinstance(atom, Literal):
            return atom
        out = Var(atom.aval)
        eqns.append(Equation(parallel.pvary_p, [atom], [out], {"axes": _ordered(missing, self.env), "env": self.env},
                             None))
        return out

    def program(self, program: Program, in_vmas: Sequence[frozenset],
                out_want: Sequence[frozenset] | None = None) -> tuple[Program, list[frozenset]]:
        vma: dict[int, frozenset] = {v.id: frozenset() for v in program.constvars}
        for v, m in zip(program.invars, in_vmas):
            vma[v.id] = frozenset(m)

        def of(atom: Any) -> frozenset:
            return frozenset() if isinstance(atom, Literal) else vma.get(atom.id, frozenset())

        eqns: list[Equation] = []
        for eqn in program.eqns:
            new_eqn, outs = self.equation(eqn, [of(a) for a in eqn.inputs], eqns)
            eqns.append(new_eqn)
            for v, m in zip(new_eqn.outputs, outs):
                vma[v.id] = m
        out_vmas = [of(a) for a in program.outvars]
        outvars = list(program.outvars)
        if out_want is not None:
            outvars = [self.pvary(eqns, a, m, w) for a, m, w in zip(outvars, out_vmas, out_want)]
            out_vmas = [m | w for m, w in zip(out_vmas, out_want)]
        return Program(program.constvars, program.consts, program.invars, outvars, eqns), out_vmas

    def equation(self, eqn: Equation, in_vmas: list[frozenset], eqns: list) -> tuple[Equation, list[frozenset]]:
        prim, params = eqn.primitive, eqn.params
        inputs = list(eqn.inputs)

        def lift(indices: Sequence[int], want: frozenset) -> None:
            for i in indices:
                inputs[i] = self.pvary(eqns, inputs[i], in_vmas[i], want)
                in_vmas[i] = in_vmas[i] | want

        def rebuilt(new_params: dict | None = None) -> Equation:
            return Equation(prim, inputs, eqn.outputs, new_params if new_params is not None else params,
                            eqn.source_info)

        if prim in (parallel.psum_invariant_p, parallel.pmax_p, parallel.pmin_p, parallel.all_gather_invariant_p):
            # Varying -> invariant over the axes: the operand is made to vary over them first (JAX's pvary).
            axes = frozenset(params["axes"])
            lift([0], axes)
            return rebuilt(), [in_vmas[0] - axes]
        if prim is parallel.psum_p:
            return rebuilt(), [in_vmas[0] - frozenset(params["axes"])]
        if prim in (parallel.all_gather_p, parallel.psum_scatter_p, parallel.all_to_all_p, parallel.ppermute_p, parallel.pvary_p):
            axes = frozenset(params["axes"])
            lift([0], axes)
            return rebuilt(), [in_vmas[0]]
        if prim is parallel.axis_index_p:
            return rebuilt(), [frozenset(params["axes"])]
        if prim is control_flow.scan_p:
            return self.scan(eqn, inputs, in_vmas, eqns)
        if prim is control_flow.while_p:
            return self.while_(eqn, inputs, in_vmas, eqns)
        if prim is control_flow.cond_p:
            return self.cond(eqn, inputs, in_vmas, eqns)
        union = frozenset().union(*in_vmas) if in_vmas else frozenset()
        if any(isinstance(v, Program) or (isinstance(v, tuple) and any(isinstance(p, Program) for p in v))
               for v in params.values()):
            return rebuilt(), [union] * len(eqn.outputs)  # other sub-programs: conservatively varying
        lift(range(len(inputs)), union)
        return rebuilt(), [union] * len(eqn.outputs)

    def scan(self, eqn, inputs, in_vmas, eqns):
        p = eqn.params
        nc = p["num_carry"]
        carry = list(in_vmas[:nc])
        while True:
            body, outs = self.program(p["body"], carry + in_vmas[nc:])
            new = [c | o for c, o in zip(carry, outs[:nc])]
            if new == carry:
                break
            carry = new
        body, outs = self.program(p["body"], carry + in_vmas[nc:], out_want=carry + outs[nc:])
        for i in range(nc):
            inputs[i] = self.pvary(eqns, inputs[i], in_vmas[i], carry[i])
        return Equation(eqn.primitive, inputs, eqn.outputs, {**p, "body": body}, eqn.source_info), outs

    def while_(self, eqn, inputs, in_vmas, eqns):
        p = eqn.params
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        cconsts, bconsts, carry = in_vmas[:cn], in_vmas[cn:cn + bn], list(in_vmas[cn + bn:])
        while True:
            cond, (pred,) = self.program(p["cond_program"], carry + cconsts)
            body, outs = self.program(p["body_program"], carry + bconsts)
            new = [c | o | pred for c, o in zip(carry, outs)]
            if new == carry:
                break
            carry = new
        body, _ = self.program(p["body_program"], carry + bconsts, out_want=carry)
        for i, m in enumerate(carry):
            inputs[cn + bn + i] = self.pvary(eqns, inputs[cn + bn + i], in_vmas[cn + bn + i], m)
        return (Equation(eqn.primitive, inputs, eqn.outputs, {**p, "cond_program": cond, "body_program": body},
                         eqn.source_info), carry)

    def cond(self, eqn, inputs, in_vmas, eqns):
        branches = eqn.params["branches"]
        results = [self.program(b, in_vmas[1:]) for b in branches]
        outs = [frozenset(in_vmas[0]).union(*ms) for ms in zip(*[r[1] for r in results])]
        new = tuple(self.program(b, in_vmas[1:], out_want=outs)[0] for b in branches)
        return Equation(eqn.primitive, inputs, eqn.outputs, {**eqn.params, "branches": new}, eqn.source_info), outs


# --- differentiation inside a body -----------------------------------------------------------


def _vma_before_differentiation(program: Program, flat_args: list) -> Program:
    """Inside a ``check_vma`` body, ``pvary`` made explicit in a program about to be differentiated.

    ``grad`` inside a body differentiates its function before the body is
    analysed; JAX types every value with its varying axes while tracing, so a
    replicated input mixed with a varying one gets a ``pvary``, whose transpose
    sums the cotangents over those axes. Here the program is rewritten the same
    way, its inputs' varying axes taken from the body traced so far.
    Registered in ``toolkit.ad.api.PREPARE_FOR_DIFFERENTIATION`` by ``toolkit.ad.rules.shard_map``.
    """
    frame = parallel.current_frame()
    if frame is None or not frame.check_vma:
        return program
    in_vmas = _varying_axes_of(flat_args, frame)
    return _Rewriter(frame.env).program(program, in_vmas)[0]


def _varying_axes_of(values: Sequence[Any], frame: Any) -> list[frozenset]:
    """The manual axes each of ``values`` (tracers of the body or of traces around it) varies over."""
    body_builder = None
    result: list[Any] = [None] * len(values)
    for i, value in enumerate(values):
        if not isinstance(value, tracing.Tracer):
            result[i] = frozenset()  # a constant: replicated
            continue
        builder: tracing.ProgramBuilder | None = value._builder
        chain = [builder]
        while builder is not None and builder.parent is not frame.outer_builder:
            builder = builder.parent
            chain.append(builder)
        if builder is None:
            result[i] = frozenset()  # from a trace around the shard_map: closed over, replicated
        elif len(chain) > 1:
            raise NotImplementedError(
                "differentiating inside a loop or cond inside a shard_map body with check_vma=True is not "
                "supported: the varying manual axes of the loop's values are not known until it is traced; "
                "take the grad directly in the body, around the shard_map, or pass check_vma=False")
        else:
            body_builder = builder
    pending = [i for i, r in enumerate(result) if r is None]
    if pending:
        b = body_builder
        assert b is not None  # the body's builder, where the pending values were traced
        invars = b.invars + [b._captured[id(t)]._var for t in b.captured_outer]
        vmas = list(frame.in_vmas) + [frozenset()] * len(b.captured_outer)
        so_far = Program(b.constvars, b.consts, invars, [values[i]._var for i in pending], list(b.eqns))
        _, out_vmas = _Rewriter(frame.env).program(so_far, vmas)
        for i, m in zip(pending, out_vmas):
            result[i] = m
    return result



# --- the user function -------------------------------------------------------------------------


def _fun_name(f: Any) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _broadcast_specs(specs: Any, tree: pytrees.PyTreeDef, what: str, fname: str) -> list[PartitionSpec]:
    is_leaf = lambda s: s is None or isinstance(s, PartitionSpec)  # noqa: E731
    dummy = pytrees.structure_of(tree, [0] * tree.num_leaves)
    try:
        flat = pytrees.broadcast_prefix(specs, dummy, is_leaf=is_leaf)
    except ValueError as exc:
        raise ValueError(f"shard_map applied to the function {fname!r} was given {what} {specs!r}, which must be "
                         f"a tree prefix of the corresponding value, but the value tree is {tree}: {exc}") from None
    out = []
    for s in flat:
        if s is None:
            s = PartitionSpec()
        elif not isinstance(s, PartitionSpec):
            raise TypeError(f"shard_map {what} leaves must be PartitionSpecs (or None), got {s!r}")
        out.append(s)
    return out


def _check_spec(spec: PartitionSpec, aval: ShapedArray, mesh: Mesh, manual: tuple, what: str, fname: str) -> None:
    if len(spec) > aval.ndim:
        raise ValueError(f"shard_map applied to the function {fname!r} was given {what} {spec} of length "
                         f"{len(spec)} for a value of rank {aval.ndim} ({aval.str_short()})")
    seen: list = []
    for entry in spec:
        if entry is UNCONSTRAINED:
            raise ValueError(f"shard_map {what} {spec}: UNCONSTRAINED is not allowed")
        for a in (() if entry is None else entry if isinstance(entry, tuple) else (entry,)):
            if a not in mesh.axis_names:
                raise ValueError(f"shard_map applied to the function {fname!r} was given {what} {spec} naming axis "
                                 f"{a!r}, which is not in the mesh (axes {mesh.axis_names})")
            if a not in manual:
                raise ValueError(f"shard_map {what} {spec} names axis {a!r}, which is not a manual axis "
                                 f"(axis_names={set(manual)})")
            if a in seen:
                raise ValueError(f"shard_map {what} {spec} uses mesh axis {a!r} more than once")
            seen.append(a)


@family.function(binds=(shard_map_p,))
def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any, in_specs: Any = None,
              mesh: Mesh | None = None, axis_names: Any = frozenset(), check_vma: bool = True) -> Any:
    """Map ``f`` over the shards of its arguments (see the module docstring); ``jax.shard_map``'s signature.

    Without ``f`` it returns a decorator. ``in_specs`` / ``out_specs`` are
    ``PartitionSpec`` pytree prefixes of the argument tuple and of ``f``'s
    result.
    """
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh, axis_names=axis_names,
                                 check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, got {f!r}")
    if in_specs is None:
        raise TypeError("shard_map requires in_specs")

    jitted: dict[int, Any] = {}  # id(mesh) -> (mesh, jit of the call), for calls outside any trace

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        the_mesh = mesh if mesh is not None else get_mesh()
        if the_mesh is None:
            raise ValueError("shard_map requires a mesh: pass mesh= or call it under `with mesh:` / set_mesh")
        if not isinstance(the_mesh, Mesh):
            raise TypeError(f"shard_map requires a concrete toolkit.shard.Mesh, got {type(the_mesh).__name__}")
        if not tracing.is_tracing():  # eagerly: compile the whole map once (per mesh) and run it
            entry = jitted.get(id(the_mesh))
            if entry is None or entry[0] is not the_mesh:
                call = functools.partial(_shard_map_call, f, mesh=the_mesh, in_specs=in_specs, out_specs=out_specs,
                                         axis_names=axis_names, check_vma=bool(check_vma))
                # One function per mesh, so the eager hook's jit finds its trace and executable again.
                entry = jitted[id(the_mesh)] = (the_mesh, functools.wraps(f)(lambda *a: call(a)))
            return tracing.eager_call(entry[1], *args)
        return _shard_map_call(f, args, the_mesh, in_specs, out_specs, axis_names, bool(check_vma))

    return wrapped


def _shard_map_call(f: Callable[..., Any], args: tuple, mesh: Mesh, in_specs: Any, out_specs: Any,
                    axis_names: Any, check_vma: bool) -> Any:
    fname = _fun_name(f)
    if parallel.current_frame() is not None:
        raise NotImplementedError(f"shard_map of {fname!r} inside another shard_map's body (nested shard_map) is not "
                                  "supported; use one shard_map over all the axes")
    names = frozenset(axis_names) if axis_names else frozenset(mesh.axis_names)
    unknown = [a for a in names if a not in mesh.axis_names]
    if unknown:
        raise ValueError(f"shard_map axis_names {sorted(map(str, unknown))} are not axes of the mesh "
                         f"{mesh.axis_names}")
    manual = tuple(a for a in mesh.axis_names if a in names)
    leaves, in_tree = pytrees.tree_flatten(args)
    specs = _broadcast_specs(tuple(in_specs) if isinstance(in_specs, list) else in_specs, in_tree, "in_specs", fname)
    avals = leaf_avals(leaves, f"shard_map applied to {fname!r}")
    bad = []
    for i, (aval, spec) in enumerate(zip(avals, specs)):
        _check_spec(spec, aval, mesh, manual, "in_specs", fname)
        for d, (size, axes) in enumerate(zip(aval.shape, _spec_dims(spec, aval.ndim))):
            n = math.prod(mesh.shape[a] for a in axes)
            if size % n:
                bad.append(f"  * args{pytrees.keystr(_leaf_paths(in_tree)[i])} of shape {aval.str_short()}, "
                           f"where dimension {d} of size {size} is mapped over mesh axes {axes} of total size {n}")
    if bad:
        raise ValueError(f"shard_map applied to the function {fname!r} was given argument arrays with axis sizes "
                         "that are not evenly divisible by the corresponding mesh axis sizes:\n\n"
                         f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
                         f"{mesh.axis_names}.\n\n" + "\n".join(bad))
    local = [ShapedArray(_local_shape(a.shape, s, mesh), a.dtype, a.weak_type) for a, s in zip(avals, specs)]
    env = parallel.AxisEnv(tuple(mesh.axis_names), tuple(mesh.axis_sizes), manual)
    out_tree_box: list = []

    def flat_body(*tracers: Any) -> list[Any]:
        out = f(*pytrees.tree_unflatten(in_tree, list(tracers)))
        out_leaves, out_tree = pytrees.tree_flatten(out)
        out_tree_box.append(out_tree)
        return out_leaves

    in_vmas = [frozenset(_spec_axes(s)) & frozenset(manual) for s in specs]
    with parallel.axis_frame(env, check_vma, tracing.current_builder(), in_vmas):
        body, captured = tracing.trace_flat(flat_body, local, [f"an argument of {fname}"] * len(local))
    out_tree = out_tree_box[0]
    o_specs = _broadcast_specs(out_specs, out_tree, "out_specs", fname)
    for spec, aval in zip(o_specs, body.out_avals):
        _check_spec(spec, aval, mesh, manual, "out_specs", fname)
    all_specs = specs + [PartitionSpec()] * len(captured)  # closed-over values are replicated
    if check_vma:
        in_vmas = [frozenset(_spec_axes(s)) & frozenset(manual) for s in all_specs]
        body, out_vmas = _Rewriter(env).program(body, in_vmas)
        for i, (spec, m) in enumerate(zip(o_specs, out_vmas)):
            missing = m - _spec_axes(spec)
            if missing:
                path = pytrees.keystr(_leaf_paths(out_tree)[i]) if out_tree.num_leaves > 1 else ""
                raise ValueError(
                    f"shard_map applied to the function {fname!r} was given out_specs which require replication "
                    "which can't be statically inferred given the mesh:\n\n"
                    f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
                    f"{mesh.axis_names}.\n\n"
                    f"out_specs{path} is {spec} which implies that the corresponding output value is replicated "
                    f"across mesh axis {', '.join(repr(a) for a in _ordered(missing, env))}, but the value varies "
                    f"over {sorted(map(str, m))}.\n\n"
                    "Check if these output values are meant to be replicated over those mesh axes. If not, consider "
                    "revising the corresponding out_specs entries. If so, consider disabling the check by passing "
                    "the check_vma=False argument to `toolkit.shard_map`.")
    outs = shard_map_p.bind(*leaves, *captured, body=body, mesh=mesh, in_specs=tuple(all_specs),
                            out_specs=tuple(o_specs), manual_axes=manual, check_vma=check_vma)
    return pytrees.tree_unflatten(out_tree, outs)


def _leaf_paths(tree: pytrees.PyTreeDef) -> list:
    dummy = pytrees.structure_of(tree, [0] * tree.num_leaves)
    return [path for path, _ in pytrees.tree_flatten_with_path(dummy)[0]]
