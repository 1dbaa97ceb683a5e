"""Lowering a ``Program`` to a StableHLO module.

The module looks like JAX's: ``module @jit_<name>`` with
``mhlo.num_partitions``/``mhlo.num_replicas``, a public ``@main`` whose results
carry ``jax.result_info`` naming their output paths, and one location per
equation as JAX writes it, so ``as_text(debug_info=True)`` shows where each op
came from and XLA's HLO carries it on (each op's ``op_name`` and stack frames):
``loc("jit(f)/while/body/sin"(callsite("f.<locals>.body"("x.py":4:8 to :18) at
"f"("x.py":9:11 to :40))))`` -- a name (the name stack, then the primitive) over
the user's frames inside the trace, innermost first (``SourceInfo.callers``),
each ``NameLoc(qualified function name, file:line:column range)``. Region bodies
extend the name stack as JAX names them (``while/cond``, ``while/body``,
``cond/branch_<i>_fun``); a nested ``jit``'s private function is named relative
to its ``func.call``, whose location is ``.../jit(g)``: XLA prefixes the call's
name when it inlines the call. Ops of ``@main`` that no equation made are named
``jit(f)``. See "From HLO back to Python" in docs/debugging.md.

Multi-platform lowering (``platforms`` with more than one entry, as
``toolkit.export`` requests): ``@main`` gets a leading ``tensor<i32>``
platform-index argument (attribute ``jax.global_constant = "_platform_index"``,
JAX's convention) whose value is the position of the running platform in
``platforms``. A primitive whose rule table has per-platform entries that
resolve to *different* rules for the requested platforms is lowered once per
distinct rule, each inside a branch of a ``stablehlo.case`` on (a mapping of)
the platform index; inside a branch ``ctx.platform`` is that branch's
platform. Primitives with one rule for all platforms are lowered once.
``toolkit-platform-specialize`` folds the index away when compiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence, cast

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, sdy, stablehlo

from toolkit.compute_on import frontend_attributes
from toolkit.core.avals import ShapedArray, abstract_token, is_static_shape
from toolkit.core.program import Literal, Program, Var
from toolkit.core.tracing import Scope, render_name_stack
from toolkit.ir.context import shared_context
from toolkit.lowering import dims
from toolkit.lowering.tokens import thread_ordered_tokens
from toolkit.lowering.registry import lowering_rules
from toolkit.lowering.types import dense_constant_attr, tensor_type
from toolkit.shard.shardy import ShardyMeshSymbols, shardy_mesh_for, shardy_sharding_text


@dataclass
class ModuleContext:
    """What every rule of one lowering shares."""

    module: ir.Module
    platforms: tuple[str, ...] = ("cpu",)
    #: The platforms ``@main`` dispatches over (the platform index indexes
    #: this); ``platforms`` narrows to a subset inside a per-platform branch.
    all_platforms: tuple[str, ...] = ()
    #: The ``i32`` platform index (a block argument of ``@main``), or None
    #: when lowering for one platform.
    platform_index: ir.Value | None = None
    name_stack: str = ""
    #: Dimension variable name -> ``tensor<i64>`` value, for symbolic shapes (see ``lowering/dims.py``).
    dim_env: dict = field(default_factory=dict)
    #: ``"gspmd"`` or ``"shardy"``: which form sharding rules emit (``@Sharding``
    #: custom calls or ``sdy.sharding_constraint`` over an ``sdy.mesh`` symbol).
    partitioner: str = "gspmd"
    #: The module's Shardy mesh symbols: ``shardy_meshes.name_for(mesh)`` is the
    #: ``@name`` to write; ``annotate_shardings`` declares every one named.
    shardy_meshes: ShardyMeshSymbols = field(default_factory=ShardyMeshSymbols)

    @property
    def shardy_mesh_name(self) -> str:
        """The first mesh's symbol (``"mesh"``): for rules written before several meshes were supported."""
        return self.shardy_meshes.first() or self.shardy_meshes.first_name
    #: (full name, id(source info)) -> (source info, location): ids, as a SourceInfo hashes all its frames.
    _locations: dict = field(default_factory=dict)
    #: id(SourceInfo or frames tuple) -> (it, the location of its frames); one frame's 6 fields -> location.
    _frame_locations: dict = field(default_factory=dict)
    _function_counter: int = 0
    #: (id(program), platforms, dimension variables) -> (symbol, program) of the private functions lowered so far
    _private_functions: dict = field(default_factory=dict)
    _symbols: set = field(default_factory=lambda: {"main"})

    def location(self, name: str, source_info: Any, *, stacked: bool = True) -> ir.Location:
        """The location of ops of primitive ``name`` traced at ``source_info``, under the current name stack
        and the equation's own (its transformations: ``jit(f)/transpose(jvp())/mul``).

        ``stacked=False``: ``name`` is already the full name. Cached per (name, source).
        """
        if stacked:
            own = render_name_stack(source_info.name_stack) if source_info is not None and source_info.name_stack \
                else ""
            prefix = f"{self.name_stack}/{own}" if self.name_stack and own else (self.name_stack or own)
            if prefix:
                name = f"{prefix}/{name}"
        key = (name, id(source_info))
        entry = self._locations.get(key)
        if entry is not None and entry[0] is source_info:
            return entry[1]
        frames = self.frames_location(source_info)
        loc = ir.Location.name(name) if frames is None else ir.Location.name(name, childLoc=frames)
        self._locations[key] = (source_info, loc)
        return loc

    def frames_location(self, source_info: Any) -> ir.Location | None:
        """``callsite(frame at callers...)`` of a ``SourceInfo``, or its one frame (as JAX's tracebacks);
        None when it has no frames."""
        if source_info is None or not source_info.file:
            return None
        entry = self._frame_locations.get(id(source_info))
        if entry is not None and entry[0] is source_info:
            return entry[1]
        loc = self._frame_location(source_info)
        if source_info.callers:
            loc = ir.Location.callsite(loc, [self._callers_location(source_info.callers)])
        self._frame_locations[id(source_info)] = (source_info, loc)
        return loc

    def _callers_location(self, callers: tuple) -> ir.Location:
        """``callsite(c1 at callsite(c2 at ...))`` of caller frames, cached per (interned) tuple."""
        entry = self._frame_locations.get(id(callers))
        if entry is not None and entry[0] is callers:
            return entry[1]
        loc = self._frame_location(callers[-1])
        for frame in reversed(callers[:-1]):
            loc = ir.Location.callsite(self._frame_location(frame), [loc])
        self._frame_locations[id(callers)] = (callers, loc)
        return loc

    def _frame_location(self, frame: Any) -> ir.Location:
        """``NameLoc(function, FileLineColRange)`` of one frame (``SourceInfo`` fields): XLA's stack frame."""
        key = frame[:6]
        loc = self._frame_locations.get(key)
        if loc is not None:
            return loc
        file, line, function, column, end_line, end_column = key
        if end_line >= line and (end_line, end_column) != (line, column):
            place = ir.Location.file(file, line, column, end_line, end_column)
        else:
            place = ir.Location.file(file, line, column)
        loc = self._frame_locations[key] = ir.Location.name(function, childLoc=place)
        return loc

    def fresh_function_name(self, base: str) -> str:
        self._function_counter += 1
        return f"{base}_{self._function_counter}"

    def private_function(self, program: Program, name: str) -> str:
        """The symbol of a ``func.func private`` computing ``program`` (lowered once per distinct program).

        Named ``name`` as JAX names them (``g``, then ``g_0``, ``g_1``, ... for other
        programs of the same name). Its arguments are, as JAX passes them: the platform
        index when lowering for several platforms, then one ``tensor<i32>`` per dimension
        variable in scope (sorted by name, ``jax.global_constant = "<name>"``), then the
        program's inputs. :meth:`call_arguments` gives the leading ones at a call site.
        """
        dim_names = tuple(sorted(self.dim_env))
        key = (id(program), self.platforms, dim_names, self.platform_index is not None)
        entry = self._private_functions.get(key)
        if entry is not None:
            return entry[0]
        taken = self._symbols | {ir.StringAttr(op.attributes["sym_name"]).value for op in self.module.body.operations
                                 if "sym_name" in op.attributes}
        symbol = name
        n = 0
        while symbol in taken:
            symbol = f"{name}_{n}"
            n += 1
        self._symbols.add(symbol)
        self._private_functions[key] = (symbol, program)  # the program is kept: its id stays unique
        i32 = ir.IntegerType.get_signless(32)
        scalar_i32 = ir.RankedTensorType.get([], i32)
        leading_attrs = []
        if self.platform_index is not None:
            leading_attrs.append({"jax.global_constant": ir.StringAttr.get("_platform_index")})
        leading_attrs += [{"jax.global_constant": ir.StringAttr.get(n)} for n in dim_names]
        in_types = [scalar_i32] * len(leading_attrs) + [tensor_type(a) for a in program.in_avals]
        out_types = [tensor_type(a) for a in program.out_avals]
        with ir.InsertionPoint(self.module.body):
            function = func.FuncOp(symbol, ir.FunctionType.get(in_types, out_types))
        function.attributes["sym_visibility"] = ir.StringAttr.get("private")
        if leading_attrs:
            function.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in leading_attrs]
                                                  + [ir.DictAttr.get({}) for _ in program.in_avals])
        block = function.add_entry_block()
        arguments = list(block.arguments)
        saved = (self.platform_index, self.dim_env, self.name_stack)
        # Ops of a private function are named relative to it; its func.call carries ".../jit(name)" and XLA
        # prefixes that when it inlines the call (as JAX's cached functions).
        self.name_stack = ""
        try:
            with ir.InsertionPoint(block):
                if self.platform_index is not None:
                    self.platform_index, arguments = arguments[0], arguments[1:]
                i64 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(64))
                self.dim_env = {n: stablehlo.ConvertOp(i64, v).result
                                for n, v in zip(dim_names, arguments[:len(dim_names)])}
                outs = lower_program_inline(self, program, arguments[len(dim_names):])
                func.ReturnOp(outs)
        finally:
            self.platform_index, self.dim_env, self.name_stack = saved
        return symbol

    def call_arguments(self) -> list[ir.Value]:
        """The leading arguments of a call of a :meth:`private_function` made here (platform index, dimensions)."""
        leading = [] if self.platform_index is None else [self.platform_index]
        i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        return leading + [stablehlo.ConvertOp(i32, self.dim_env[n]).result for n in sorted(self.dim_env)]


@dataclass
class RuleContext:
    """Per-equation view a lowering rule gets."""

    module_context: ModuleContext
    avals_in: Sequence[ShapedArray]
    avals_out: Sequence[ShapedArray]
    params: dict
    #: The equation's primitive, source and the name stack it is lowered under (for region and call names).
    primitive_name: str = ""
    source_info: Any = None
    name_stack: str = ""

    @property
    def out_types(self) -> list[ir.Type]:
        return [tensor_type(a) for a in self.avals_out]

    @property
    def out_type(self) -> ir.Type:
        return tensor_type(self.avals_out[0])

    @property
    def platform(self) -> str:
        return self.module_context.platforms[0]

    def lower_program(self, program: Program, operands: Sequence[ir.Value], *,
                      region: str | None = None) -> list[ir.Value]:
        """Emit ``program``'s ops at the current insertion point (for region bodies).

        Their names extend the equation's name stack by ``region`` (default: JAX's
        name for where ``program`` sits in the equation's parameters, e.g.
        ``while/body``; ``""`` adds nothing).
        """
        mctx = self.module_context
        if region is None:
            region = region_name(self.primitive_name, self.params, program)
        saved = mctx.name_stack
        if region:
            mctx.name_stack = f"{self.name_stack}/{region}" if self.name_stack else region
        else:
            mctx.name_stack = self.name_stack
        try:
            return lower_program_inline(mctx, program, operands)
        finally:
            mctx.name_stack = saved

    def call_program(self, program: Program, name: str, operands: Sequence[ir.Value]) -> list[ir.Value]:
        """A ``func.call`` of ``program`` lowered as a private function named after ``name`` (nested ``jit``).

        The call is located at ``<name stack>/jit(<name>)``: XLA prefixes that to the
        names of the function's ops when it inlines the call.
        """
        mctx = self.module_context
        symbol = mctx.private_function(program, name)
        callee = ir.FlatSymbolRefAttr.get(symbol)
        # The call's name is the equation's name stack ending in the scope jit(name): `jvp(jit(g))` under jvp.
        own = self.source_info.name_stack if self.source_info is not None else ()
        call_name = render_name_stack(own + (Scope(f"jit({name})"),))
        call_name = f"{mctx.name_stack}/{call_name}" if mctx.name_stack else call_name
        with mctx.location(call_name, self.source_info, stacked=False):
            call = func.CallOp([tensor_type(a) for a in program.out_avals], callee,
                               mctx.call_arguments() + list(operands))
        return list(call.results)

    def constant(self, value: Any, aval: ShapedArray) -> ir.Value:
        return stablehlo.ConstantOp(dense_constant_attr(value, aval)).result

    def dim_value(self, d: Any) -> ir.Value:
        """A dimension size (int or symbolic) as a ``tensor<i64>`` value."""
        return dims.dim_value(self.module_context.dim_env, d)

    def shape_value(self, shape: Sequence[Any]) -> ir.Value:
        """A shape as a ``tensor<Nxi64>`` value, for dynamic ops."""
        return dims.shape_value(self.module_context.dim_env, shape)

    def iota(self, aval: ShapedArray, dimension: int) -> ir.Value:
        """``iota`` of ``aval``'s type along ``dimension`` (``dynamic_iota`` for symbolic shapes)."""
        if is_static_shape(aval.shape):
            return stablehlo.IotaOp(tensor_type(aval), dimension).result
        return stablehlo.DynamicIotaOp(tensor_type(aval), self.shape_value(aval.shape), dimension).result

    def broadcast(self, value: ir.Value, aval: ShapedArray, broadcast_dimensions: Sequence[int] = ()) -> ir.Value:
        """``value`` broadcast to ``aval``'s shape: ``broadcast_in_dim``, or its dynamic form for symbolic shapes."""
        if is_static_shape(aval.shape):
            return stablehlo.BroadcastInDimOp(tensor_type(aval), value, list(broadcast_dimensions)).result
        return stablehlo.DynamicBroadcastInDimOp(tensor_type(aval), value, self.shape_value(aval.shape),
                                                 list(broadcast_dimensions)).result


def lower_program_inline(mctx: ModuleContext, program: Program, args: Sequence[ir.Value],
                         consts: Sequence[ir.Value] | None = None) -> list[ir.Value]:
    """Emit the ops of ``program`` at the current insertion point; returns its outputs."""
    env: dict[int, ir.Value] = {}
    if consts is None:
        # A captured concrete token (toolkit.array.Token) holds no data: a fresh token stands for it (its
        # computation is done before the call, as a token argument's is).
        consts = [stablehlo.CreateTokenOp().result if v.aval is abstract_token
                  else stablehlo.ConstantOp(dense_constant_attr(np.asarray(c), v.aval)).result
                  for v, c in zip(program.constvars, program.consts)]
    for v, value in zip(program.constvars, consts):
        env[v.id] = value
    if len(args) != len(program.invars):
        raise ValueError(f"program expects {len(program.invars)} inputs, got {len(args)}")
    for v, value in zip(program.invars, args):
        env[v.id] = value
    literal_cache: dict[Any, ir.Value] = {}

    def read(atom: Var | Literal) -> ir.Value:
        if type(atom) is Literal:
            value = atom.value
            # Bytes, not repr: numpy's array printing is slow, and -0.0/NaN payloads must stay distinct.
            key = (value.tobytes() if isinstance(value, np.ndarray) else (type(value), repr(value)), atom.aval)
            value = literal_cache.get(key)
            if value is None:
                value = literal_cache[key] = stablehlo.ConstantOp(dense_constant_attr(atom.value, atom.aval)).result
            return value
        return env[cast(Var, atom).id]  # `type(atom) is Literal` does not narrow the union for mypy

    for eqn in program.eqns:
        rules = lowering_rules(eqn.primitive)
        per_platform = _rules_per_platform(eqn.primitive, rules, mctx.platforms)
        name_stack = mctx.name_stack
        if eqn.source_info is not None and eqn.source_info.name_stack:  # regions of ops under a transformation
            own = render_name_stack(eqn.source_info.name_stack)
            name_stack = f"{name_stack}/{own}" if name_stack else own
        ctx = RuleContext(mctx, [a.aval for a in eqn.inputs], [v.aval for v in eqn.outputs], eqn.params,
                          eqn.primitive.name, eqn.source_info, name_stack)
        with mctx.location(eqn.primitive.name, eqn.source_info):
            try:
                operands = [read(a) for a in eqn.inputs]
                if len(set(per_platform)) == 1:
                    out = per_platform[0](ctx, *operands, **eqn.params)
                else:
                    out = _lower_per_platform(mctx, ctx, per_platform, operands, eqn)
            except Exception as exc:
                where = f" (traced at {eqn.source_info})" if eqn.source_info else ""
                raise type(exc)(f"lowering `{eqn.primitive.name}`{where} failed: {exc}") from exc
        if not eqn.primitive.multiple_results:
            out = [out]
        if eqn.source_info is not None and eqn.source_info.compute_type:  # toolkit.compute_on, as JAX marks it
            _mark_compute_type(out, eqn.source_info.compute_type)
        for v, value in zip(eqn.outputs, out):
            value = value if isinstance(value, ir.Value) else value.result
            if v.aval.sharding is not None and _adds_layout(eqn, v.aval):
                with mctx.location(eqn.primitive.name, eqn.source_info):
                    value = _constrain_to_type(mctx, value, v.aval)
            env[v.id] = value
    return [read(a) for a in program.outvars]


#: (primitive, parameter) -> the name JAX gives ops of that sub-program (after the equation's name stack).
_REGION_NAMES = {
    ("while", "cond_program"): "while/cond",
    ("while", "body_program"): "while/body",
    ("scan", "body"): "while/body",  # JAX lowers scan to a while loop and names its body so
    ("custom_jvp_call", "call"): "",  # JAX names neither custom-derivative call
    ("custom_vjp_call", "call"): "",
}


def region_name(primitive: str, params: dict, program: Any) -> str:
    """The name-stack entry for ops of ``program``, a sub-program in ``params`` of an equation of ``primitive``.

    ``cond`` branch ``i`` is ``cond/branch_<i>_fun``, ``while`` regions are
    ``while/cond`` and ``while/body``, a ``scan`` body ``while/body`` (JAX's names);
    other sub-programs are named after the primitive.
    """
    for key, value in params.items():
        if value is program:
            return _REGION_NAMES.get((primitive, key), primitive)
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if item is program:
                    return f"cond/branch_{i}_fun" if primitive == "cond" else f"{primitive}/{key}_{i}"
    return primitive


def _mark_compute_type(outs: Sequence[Any], compute_type: str) -> None:
    """The ops making ``outs`` get ``mhlo.frontend_attributes`` for ``compute_type`` (JAX's
    ``wrap_compute_type_in_place``: the owner of each result, block arguments left alone)."""
    entries = frontend_attributes(compute_type)
    for value in outs:
        value = value if isinstance(value, ir.Value) else value.result
        if isinstance(value, ir.BlockArgument):
            continue
        op = value.owner
        attrs = {a.name: a.attr for a in ir.DictAttr(op.attributes["mhlo.frontend_attributes"])} \
            if "mhlo.frontend_attributes" in op.attributes else {}
        attrs.update({k: ir.StringAttr.get(v) for k, v in entries.items()})
        op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(attrs)


def _adds_layout(eqn: Any, aval: ShapedArray) -> bool:
    """Whether an op with an explicitly sharded result gets a constraint to its type: every one, as JAX
    (``mlir.lower_with_sharding_in_types``), except the sharding constraints themselves."""
    return eqn.primitive.name not in ("sharding_constraint", "reshard")


def _constrain_to_type(mctx: ModuleContext, value: ir.Value, aval: ShapedArray) -> ir.Value:
    """``value`` constrained to its explicit type sharding (``sdy.sharding_constraint`` or ``@Sharding``).

    On a mesh with Auto axes too, as JAX's ``lower_with_sharding_in_types``: every dimension stays open for the
    partitioner to shard further on the Auto axes (Shardy's ``?``, GSPMD's ``unspecified_dims``), and the
    Explicit axes the type leaves unused are kept replicated (Shardy's ``replicated=``)."""
    sharding, ndim = aval.sharding, aval.ndim
    mesh = sharding.mesh
    if not is_static_shape(aval.shape) or not mesh.explicit_axes:
        return value
    mixed = bool(mesh.auto_axes)
    if mctx.partitioner == "shardy":
        name = mctx.shardy_meshes.name_for(shardy_mesh_for(sharding, ndim))
        replicated = [a for a in mesh.explicit_axes if a not in sharding.spec.axis_names_used()] if mixed else []
        text = shardy_sharding_text(sharding, ndim, name, open_dims=mixed, replicated=replicated)
        return sdy.ShardingConstraintOp(value, ir.Attribute.parse(text)).result
    op = stablehlo.CustomCallOp([value.type], [value], "Sharding")
    op.attributes["mhlo.sharding"] = ir.StringAttr.get(str(sharding._to_xla_hlo_sharding(ndim)))
    if mixed and ndim:
        op.attributes["backend_config"] = ir.StringAttr.get(f"unspecified_dims=[{','.join(map(str, range(ndim)))}]")
    return op.result


def _rules_per_platform(primitive: Any, rules: dict, platforms: Sequence[str]) -> list:
    """The rule each of ``platforms`` uses (a platform-specific one, else the generic one)."""
    if len(rules) == 1 and None in rules:
        return [rules[None]] * len(platforms)
    chosen = []
    for platform in platforms:
        rule = rules.get(platform) or rules.get(None)
        if rule is None:
            if len(platforms) == 1 and len(rules) == 1:
                # Historic leniency: a rule registered for one platform serves a single-platform lowering.
                rule = next(iter(rules.values()))
            else:
                known = sorted(p for p in rules if p is not None)
                raise NotImplementedError(f"primitive `{primitive.name}` has no lowering rule for platform "
                                          f"{platform!r} (it has rules for {known})")
        chosen.append(rule)
    return chosen


def _lower_per_platform(mctx: ModuleContext, ctx: RuleContext, per_platform: list, operands: list[ir.Value],
                        eqn: Any) -> list[ir.Value]:
    """Lower one equation once per distinct rule, under a ``stablehlo.case`` on the platform index."""
    if mctx.platform_index is None:
        raise ValueError("a platform-dependent lowering needs the platform index argument of @main")
    branches: list[Any] = []  # distinct rules, in order of first use
    branch_platforms: list[list[str]] = []
    for platform, rule in zip(mctx.platforms, per_platform):
        if rule not in branches:
            branches.append(rule)
            branch_platforms.append([])
        branch_platforms[branches.index(rule)].append(platform)
    i32 = ir.IntegerType.get_signless(32)
    scalar_i32 = ir.RankedTensorType.get([], i32)
    # The platform index counts positions in all_platforms; map it to a branch number.
    branch_of = [0] * len(mctx.all_platforms)
    for b, names in enumerate(branch_platforms):
        for name in names:
            branch_of[mctx.all_platforms.index(name)] = b
    index = mctx.platform_index
    if branch_of != list(range(len(mctx.all_platforms))):
        mapping = stablehlo.CaseOp([scalar_i32], index, len(branch_of))
        for region, b in zip(mapping.regions, branch_of):
            with ir.InsertionPoint(region.blocks.append()):
                stablehlo.ReturnOp([stablehlo.ConstantOp(
                    ir.DenseElementsAttr.get_splat(scalar_i32, ir.IntegerAttr.get(i32, b))).result])
        index = mapping.result
    case = stablehlo.CaseOp(ctx.out_types, index, len(branches))
    saved = mctx.platforms
    try:
        for region, rule, names in zip(case.regions, branches, branch_platforms):
            mctx.platforms = tuple(names)
            with ir.InsertionPoint(region.blocks.append()):
                out = rule(ctx, *operands, **eqn.params)
                if not eqn.primitive.multiple_results:
                    out = [out]
                stablehlo.ReturnOp([v if isinstance(v, ir.Value) else v.result for v in out])
    finally:
        mctx.platforms = saved
    results = list(case.results)
    return results if eqn.primitive.multiple_results else results[0]


def lower_program(program: Program, *, name: str, result_names: Sequence[str] | None = None,
                  arg_attrs: Sequence[dict[str, ir.Attribute]] | None = None,
                  result_attrs: Sequence[dict[str, ir.Attribute]] | None = None,
                  num_partitions: int = 1, num_replicas: int = 1,
                  platforms: Sequence[str] = ("cpu",), context: ir.Context | None = None,
                  arg_names: Sequence[str] | None = None, shape_assertions: bool = True,
                  dim_vars_as_arguments: bool = False, partitioner: str = "gspmd",
                  shardy_meshes: ShardyMeshSymbols | None = None,
                  arg_locations: Sequence[str | None] | None = None) -> ir.Module:
    """A StableHLO module ``@jit_<name>`` whose ``@main`` computes ``program``.

    Constants of ``program`` become ``stablehlo.constant`` ops in ``@main``.
    With several ``platforms``, ``@main`` takes a leading platform-index
    argument (see the module docstring). With symbolic input dimensions,
    ``@main`` starts by computing the dimension variables from its arguments'
    shapes, with shape assertions naming ``arg_names`` (``lowering/dims.py``),
    and the module gets ``jax.uses_shape_polymorphism = true``. With
    ``dim_vars_as_arguments`` (what ``export`` asks for, JAX's inner-function
    convention) ``@main`` instead takes one ``tensor<i32>`` argument per
    dimension variable, sorted by name, after the platform index and marked
    ``jax.global_constant = "<name>"``; the caller computes and checks them.
    ``partitioner="shardy"`` makes sharding constraints ``sdy.sharding_constraint``
    ops over the mesh symbols named in ``shardy_meshes`` (pass the caller's
    table to fix the names of ``@main``'s meshes first); the caller declares
    them (``annotate_shardings(..., mode="shardy", mesh_symbols=...)``).
    ``arg_locations`` names the program's inputs in ``@main``'s block argument
    locations (``loc("x")``, as JAX names them after the function's parameters);
    ops no equation made are located at ``jit(<name>)`` over ``program.source_info``.
    """
    context = context or shared_context()
    with context, ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(f"jit_{_sanitize(name)}")
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, num_partitions)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, num_replicas)
        mctx = ModuleContext(module, tuple(platforms), all_platforms=tuple(platforms), partitioner=partitioner,
                             shardy_meshes=shardy_meshes if shardy_meshes is not None else ShardyMeshSymbols())
        multi_platform = len(platforms) > 1
        in_types = [tensor_type(v.aval) for v in program.invars]
        if multi_platform:
            if len(set(platforms)) != len(platforms):
                raise ValueError(f"platforms must be distinct, got {tuple(platforms)}")
            in_types = [ir.RankedTensorType.get([], i32)] + in_types
            arg_attrs = [{"jax.global_constant": ir.StringAttr.get("_platform_index")}] + (
                list(arg_attrs) if arg_attrs is not None else [{} for _ in program.invars])
        in_avals = [v.aval for v in program.invars]
        dim_var_names = dims.dim_var_names(in_avals) if dim_vars_as_arguments else []
        if dim_var_names:
            if arg_attrs is None:
                arg_attrs = [{} for _ in in_types]
            leading = 1 if multi_platform else 0
            scalar_i32 = ir.RankedTensorType.get([], i32)
            in_types = in_types[:leading] + [scalar_i32] * len(dim_var_names) + in_types[leading:]
            arg_attrs = list(arg_attrs[:leading]) + [
                {"jax.global_constant": ir.StringAttr.get(n)} for n in dim_var_names] + list(arg_attrs[leading:])
        out_types = [tensor_type(a.aval) for a in program.outvars]
        with ir.InsertionPoint(module.body):
            main = func.FuncOp("main", ir.FunctionType.get(in_types, out_types))
        main.attributes["sym_visibility"] = ir.StringAttr.get("public")
        if arg_attrs is not None:
            main.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(dict(a)) for a in arg_attrs])
        all_result_attrs = []
        for i in range(len(out_types)):
            attrs = dict(result_attrs[i]) if result_attrs is not None else {}
            if result_names is not None:
                attrs["jax.result_info"] = ir.StringAttr.get(result_names[i])
            all_result_attrs.append(ir.DictAttr.get(attrs))
        main.result_attrs = ir.ArrayAttr.get(all_result_attrs)
        arg_locs = None
        if arg_locations is not None:
            if len(arg_locations) != len(program.invars):
                raise ValueError(f"arg_locations names {len(arg_locations)} arguments, but the program has "
                                 f"{len(program.invars)} inputs")
            unknown = ir.Location.unknown()
            named = [ir.Location.name(n) if n else unknown for n in arg_locations]
            arg_locs = [unknown] * (len(in_types) - len(named)) + named  # platform index, dimension variables
        block = main.add_entry_block(arg_locs)
        arguments = list(block.arguments)
        if multi_platform:
            mctx.platform_index, arguments = arguments[0], arguments[1:]
        # Ops no equation makes (constants, dimension computations, the return) are named "jit(f)", as JAX's.
        mctx.name_stack = f"jit({name})"
        frames = mctx.frames_location(program.source_info)  # where the trace started, as JAX's "jit(f)"(...)
        main_loc = ir.Location.name(mctx.name_stack) if frames is None else ir.Location.name(mctx.name_stack,
                                                                                              childLoc=frames)
        with ir.InsertionPoint(block), main_loc:
            if dim_var_names:
                values, arguments = arguments[:len(dim_var_names)], arguments[len(dim_var_names):]
                module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
                mctx.dim_env = {n: stablehlo.ConvertOp(ir.RankedTensorType.get([], ir.IntegerType.get_signless(64)),
                                                       v).result for n, v in zip(dim_var_names, values)}
            elif dims.has_symbolic_dims(in_avals):
                module.operation.attributes["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(True)
                names = arg_names or [f"argument {i}" for i in range(len(in_avals))]
                mctx.dim_env = dims.compute_dim_vars(in_avals, arguments, names, assertions=shape_assertions)
            outs = lower_program_inline(mctx, program, arguments)
            func.ReturnOp(outs)
    if getattr(mctx, "_callback_tokens", None):  # ordered callbacks were lowered: one chain across calls/regions
        thread_ordered_tokens(module)
    return module


def _sanitize(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return cleaned or "fun"
