"""``Exported.call``: run an exported function, eagerly or inside ``toolkit.jit``.

Both paths go through one primitive, ``call_exported``, whose lowering
parses the embedded portable artifact into the caller's MLIR context, clones
its functions into the caller's module under fresh names (the callee's
``@main`` becomes private) and emits a ``func.call`` with the platform index
bound. When the caller is lowered for one platform the callee is first
specialized for it (``toolkit-platform-specialize``: the index is folded and
the other ``case`` branches dropped); a multi-platform caller passes its own
platform index, mapped to the callee's platform order. A callee with symbolic
input shapes is refined to the caller's static shapes
(``toolkit-bind-shapes`` + ``toolkit-refine-shapes``, which also turns JAX's
``stablehlo.dynamic_*`` custom calls into static ops) and its shape
assertions checked.

Eagerly, ``call`` compiles ``jit`` of that primitive once per ``Exported``
(cached on the object, and shared between equal objects — the same blob
deserialized again — in a bounded table) and runs it with the same runtime
as ``jit``.

Checks before running (``TypeError``/``ValueError`` naming the problem):
input tree, dtypes, ranks and static dimensions match (argument path in the
message); the dimension variables are solved from the argument shapes
(``shape_poly.solve_dim_vars``) and every shape check of the solution holds;
the platform lowered for is among ``Exported.platforms`` unless
``DisabledSafetyCheck.platform()``; for sharded exports the computation uses
``nr_devices`` devices (eagerly: that many exist and no argument is committed
elsewhere).

Also as JAX does: float0 arguments go to the module as boolean zeros and
float0 results come back as numpy float0 zeros; ordered effects get a token
each (chained between calls in one block); Shardy callees are fitted to the
caller's partitioner (``callee_shardings``); differentiation uses the
exported VJP (``differentiation``). See ``docs/calling-conventions.md``.

Example::

    exp = toolkit.export.deserialize(blob)
    y = exp.call(np.ones(4, np.float32))
    z = toolkit.jit(lambda x: exp.call(x) * 2)(np.ones(4, np.float32))
"""

from __future__ import annotations

import itertools
import re
from typing import AbstractSet, Any, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func, stablehlo

from toolkit import shard
from toolkit.array import Array
from toolkit.core import dtypes, shape_poly, pytrees, tracing
from toolkit.core.avals import ShapedArray, aval_of
from toolkit.core.families import Family
from toolkit.core.sharding_types import NO_SHARDING_RULE
from toolkit.call_trees import argument_paths
from toolkit.export import call_batching, callee_shardings, differentiation
from toolkit.export import calling_convention
from toolkit.export.exported import DisabledSafetyCheck, Exported
from toolkit.export.shardings import to_toolkit_named_sharding
from toolkit.ir.serialization import deserialize_portable_artifact
from toolkit.lowering.registry import register_lowering
from toolkit.passes import PassFailure
from toolkit.passes.pipeline import PipelineError, run_pipeline
from toolkit.passes.platform_specialize import platform_index_position, specialize_platform
from toolkit.runtime import client as runtime_client
from toolkit.stages import jit

#: The primitives this file defines (``toolkit/core/families.py``: how their rules are found).
family = Family("call_exported")


class _ByIdentity:
    """Holds an ``Exported`` as a primitive parameter: hashed and compared by identity (cheap)."""

    __slots__ = ("exported",)

    def __init__(self, exported: Exported):
        self.exported = exported

    def __hash__(self) -> int:
        return id(self.exported)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByIdentity) and other.exported is self.exported

    def __repr__(self) -> str:
        return f"Exported({self.exported.fun_name})"


def _arg_names(tree: pytrees.PyTreeDef) -> list[str]:
    """Flat inputs named as JAX names them in shape messages: ``args[0]``, ``args[1]['w']``, ``kwargs['x']``."""
    dummy = pytrees.structure_of(tree, list(range(tree.num_leaves)))
    names = []
    for path, _ in pytrees.tree_flatten_with_path(dummy)[0]:
        head, *rest = path
        names.append(("args" if head.idx == 0 else "kwargs") + pytrees.keystr(tuple(rest)))
    return names


def dim_var_solution(exported: Exported) -> shape_poly.DimVarSolution:
    """The callee's dimension variables solved in terms of its argument shapes (computed once per ``Exported``).

    Raises ``ValueError`` naming the variables when some cannot be solved.
    """
    cached = exported.__dict__.get("_toolkit_dim_var_solution")
    if cached is None:
        try:
            cached = shape_poly.solve_dim_vars(exported.in_avals, _arg_names(exported.in_tree))
        except ValueError as error:
            raise ValueError(f"Cannot call the exported function {exported.fun_name!r}: {error}") from None
        object.__setattr__(exported, "_toolkit_dim_var_solution", cached)  # frozen dataclass: a private cache
    return cached


def dim_var_values(exported: Exported, avals: Sequence[ShapedArray]) -> dict[str, Any]:
    """The callee's dimension variables for arguments of ``avals`` (ints, or the caller's symbolic dimensions).

    Every shape check of the solution is discharged here, as JAX does when it
    traces the call: ``ValueError`` with the first failing check's message
    (the variable, the argument dimension and the values seen).
    """
    try:
        solution = dim_var_solution(exported)
    except ValueError as error:
        seen = ", ".join(f"{name}.shape = {tuple(a.shape)}" for name, a in zip(_arg_names(exported.in_tree), avals))
        raise ValueError(f"{error} The call's arguments have: {seen}.") from None
    try:
        return solution.values([a.shape for a in avals])
    except ValueError as error:
        raise ValueError(f"Calling the exported function {exported.fun_name!r}: {error}") from None


def _module_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a value has inside the module: float0 arrays are boolean zeros there (JAX lowers them to i1)."""
    return dtypes.bool_ if dtype == dtypes.float0 else dtype


def _out_avals(exported: Exported, avals: Sequence[ShapedArray]) -> list[ShapedArray]:
    env = dim_var_values(exported, avals)
    return [ShapedArray(tuple(shape_poly.evaluate_dim(d, env) for d in aval.shape), _module_dtype(aval.dtype))
            for aval in exported.out_avals]


def _shape_rule(*avals: ShapedArray, exported: _ByIdentity) -> list[ShapedArray]:
    return _out_avals(exported.exported, avals)


call_exported_p = family.primitive("call_exported", shape_rule=_shape_rule, multiple_results=True)
NO_SHARDING_RULE[call_exported_p] = ("not yet: the export records its in/out shardings; typing the call's results "
                                     "from them on explicit axes is to be done")


def bind_call(exported: Exported, args: Sequence[Any]) -> list[Any]:
    """The outputs of ``call_exported_p`` bound on ``args`` for ``exported``."""
    return list(call_exported_p.bind(*args, exported=_ByIdentity(exported)))


differentiation.attach(call_exported_p, bind_call)  # grad/vjp/jvp through the call use the exported VJP
call_batching.attach(call_exported_p)  # vmap of the call: rows folded into the batch dimension, or a loop


# --- checks -----------------------------------------------------------------


def check_arguments(exported: Exported, tree: pytrees.PyTreeDef, avals: Sequence[ShapedArray]) -> None:
    """``TypeError`` unless ``(tree, avals)`` fit ``exported``'s ``in_tree``/``in_avals``."""
    if tree != exported.in_tree:
        raise TypeError(f"The exported function {exported.fun_name!r} was called with inputs of structure "
                        f"{tree}, but it was exported for {exported.in_tree}.")
    paths = argument_paths(tree)
    for path, expected, actual in zip(paths, exported.in_avals, avals):
        # A float0 parameter (a cotangent of an integer value) also takes boolean zeros, its module form.
        same_dtype = np.dtype(expected.dtype) == np.dtype(actual.dtype) or (
            expected.dtype == dtypes.float0 and actual.dtype == dtypes.bool_)
        if not same_dtype or len(expected.shape) != len(actual.shape):
            raise TypeError(f"Argument {path} of the exported function {exported.fun_name!r} has type "
                            f"{actual.str_short()}, but the function was exported for {expected.str_short()}.")
        for axis, (d, size) in enumerate(zip(expected.shape, actual.shape)):
            if not shape_poly.is_symbolic_dim(d) and (shape_poly.is_symbolic_dim(size) or d != size):
                raise TypeError(f"Argument {path} of the exported function {exported.fun_name!r} has shape "
                                f"{tuple(actual.shape)}, but the function was exported for shape "
                                f"{tuple(expected.shape)} (dimension {axis} differs).")
    dim_var_values(exported, avals)


def _platform_allowed(exported: Exported, platform: str) -> bool:
    return platform in exported.platforms or DisabledSafetyCheck.platform() in exported.disabled_safety_checks


def check_platform(exported: Exported, platform: str) -> None:
    """``ValueError`` unless ``platform`` is one ``exported`` was lowered for (or the check is disabled)."""
    if not _platform_allowed(exported, platform):
        raise ValueError(f"The exported function {exported.fun_name!r} was lowered for platforms "
                         f"{exported.platforms} but it is used on {platform!r}. Export it for that platform, or "
                         "export with disabled_checks=[DisabledSafetyCheck.platform()].")


def _device_list(devices: Sequence[Any]) -> str:
    return "[" + ", ".join(f"{d.platform}:{d.id}" for d in devices) + "]"


def check_eager_devices(exported: Exported, leaves: Sequence[Any], tree: pytrees.PyTreeDef) -> None:
    """``ValueError`` when a sharded export cannot run eagerly on its ``nr_devices`` devices.

    Outside ``jit`` a sharded export runs on the first ``nr_devices`` devices
    (its arguments placed with the recorded shardings). That needs that many
    devices, and no argument committed to a different set of devices — an
    argument committed to one device is refused rather than silently spread
    over ``nr_devices`` (JAX refuses every eager call of a sharded export).
    """
    if exported.nr_devices <= 1:
        return

    available = runtime_client.devices()
    if len(available) < exported.nr_devices:
        raise ValueError(f"The exported function {exported.fun_name!r} was lowered for nr_devices="
                         f"{exported.nr_devices} devices, but only {len(available)} are available: "
                         f"{_device_list(available)}.")
    paths = None
    for i, leaf in enumerate(leaves):
        if type(leaf) is Array and leaf._committed:
            devices = sorted(leaf.sharding.device_set, key=lambda d: d.id)
            if len(devices) != exported.nr_devices:
                paths = paths or argument_paths(tree)
                raise ValueError(
                    f"The exported function {exported.fun_name!r} was lowered for nr_devices={exported.nr_devices} "
                    f"devices, but argument {paths[i]} is committed to {len(devices)} device"
                    f"{'s' if len(devices) != 1 else ''} {_device_list(devices)} (available devices: "
                    f"{_device_list(available)}). Call it inside toolkit.jit with shardings over "
                    f"{exported.nr_devices} devices, or pass uncommitted arrays, which are placed over the first "
                    f"{exported.nr_devices} devices.")


def check_devices(exported: Exported, num_devices: int) -> None:
    """``ValueError`` when a sharded export runs on a different number of devices than it was lowered for."""
    if exported.nr_devices > 1 and num_devices != exported.nr_devices:
        raise ValueError(f"The exported function {exported.fun_name!r} was lowered for {exported.nr_devices} "
                         f"devices and is called in a computation with {num_devices} devices.")


# --- the callee module ---------------------------------------------------------

_counter = itertools.count()


def _callee_module(exported: Exported, context: ir.Context, platform_index: int | None,
                   arg_types: Sequence[ir.Type] | None) -> ir.Module:
    """The embedded module parsed into ``context``, specialized for a platform and for static argument types."""
    try:
        module = deserialize_portable_artifact(exported.mlir_module_serialized, context)
    except ValueError as exc:  # names the artifact's StableHLO version when it is newer than jaxlib's
        raise ValueError(f"Cannot read the module of the exported function {exported.fun_name!r}: {exc}") from None
    if platform_index is not None and platform_index_position(module.operation) is not None:
        specialize_platform(module.operation, platform_index)
    if arg_types is not None:
        main = calling_convention.find_main(module)
        inputs = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs)
        platform_args = 1 if platform_index is None and len(exported.platforms) > 1 else 0
        callee_dynamic = any(not t.has_static_shape for t in inputs[platform_args:] if isinstance(t, ir.ShapedType))
        caller_static = all(t.has_static_shape for t in arg_types if isinstance(t, ir.ShapedType))
        # A caller with symbolic shapes of its own (a polymorphic export calling a polymorphic
        # export) keeps the callee dynamic: the caller's module is refined as a whole later.
        if callee_dynamic and caller_static:
            _refine_to(module, list(inputs[:platform_args]) + list(arg_types), exported)
    return module


def _refine_to(module: ir.Module, arg_types: Sequence[ir.Type], exported: Exported) -> None:
    """Give ``@main`` static argument types and make the module static (``toolkit-bind-shapes`` +
    ``toolkit-refine-shapes``), checking its shape assertions unless they were disabled."""
    types = ",".join(str(t) for t in arg_types)
    assertions = DisabledSafetyCheck.shape_assertions() not in exported.disabled_safety_checks
    pipeline = (f"builtin.module(toolkit-bind-shapes{{types={types}}}, "
                f"toolkit-refine-shapes{{enable-assertions={str(assertions).lower()}}})")
    try:
        run_pipeline(module, pipeline)
    except PipelineError as error:
        if isinstance(error.__cause__, PassFailure):
            # A failed shape assertion (a violated constraint, a dimension that does not fit) says
            # what the caller got wrong: that comes first, the pass that noticed it last.
            found_by = re.search(r"pass '([^']+)' failed", str(error))
            suffix = f" (found by pass '{found_by.group(1)}')" if found_by else ""
            raise ValueError(f"Calling the exported function {exported.fun_name!r}: {error.__cause__}{suffix}"
                             ) from None
        raise ValueError(f"Calling the exported function {exported.fun_name!r}: {error}") from None


def inline_module(caller: ir.Module, callee: ir.Module, prefix: str, keep: AbstractSet[str] = frozenset()) -> str:
    """Move every top-level op of ``callee`` into ``caller`` under fresh symbol names; returns ``@main``'s new name.

    Both modules must live in the same context. Functions become private.
    Symbols in ``keep`` (a shared Shardy mesh) keep their names.
    """
    table = ir.SymbolTable(callee.operation)
    renames = {}
    for op in callee.body.operations:
        if "sym_name" in op.attributes:
            old = ir.StringAttr(op.attributes["sym_name"]).value
            if old not in keep:
                renames[old] = f"{prefix}{old}"
    for old, new in renames.items():
        table.replace_all_symbol_uses(old, new, callee.operation)
        table.set_symbol_name(table[old], new)
    main_name = renames["main"]
    for op in list(callee.body.operations):
        if op.operation.name == "func.func":
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        caller.body.append(op.operation.detach_from_parent())
    return main_name


# --- lowering ---------------------------------------------------------------------


@register_lowering(call_exported_p)
def _call_exported_lowering(ctx: Any, *operands: ir.Value, exported: _ByIdentity) -> list[ir.Value]:
    exp = exported.exported
    mctx = ctx.module_context
    caller_platforms = mctx.platforms
    for platform in caller_platforms:
        check_platform(exp, platform)
    num_partitions = ir.IntegerAttr(mctx.module.operation.attributes["mhlo.num_partitions"]).value \
        if "mhlo.num_partitions" in mctx.module.operation.attributes else 1
    check_devices(exp, num_partitions)
    kept_operands = [operands[i] for i in exp.module_kept_var_idx]
    multi_callee = len(exp.platforms) > 1
    fold_index = None
    if multi_callee and len(caller_platforms) == 1:
        p = caller_platforms[0]
        fold_index = exp.platforms.index(p) if p in exp.platforms else 0
    context = mctx.module.context
    tokens = _effect_tokens_in(mctx, exp)
    callee = _callee_module(exp, context, fold_index, [t.type for t in tokens] + [o.type for o in kept_operands])
    prefix = f"_exported_{_sanitize(exp.fun_name)}_{next(_counter)}_"
    keep: set[str] = set()
    if callee_shardings.has_shardy(callee):
        if getattr(mctx, "partitioner", "gspmd") == "shardy":
            keep = callee_shardings.share_meshes(mctx.module, callee, mctx.shardy_meshes)
        else:
            callee_shardings.shardy_to_gspmd(callee)
    main_name = inline_module(mctx.module, callee, prefix, keep)
    callee_main = ir.SymbolTable(mctx.module.operation)[main_name]
    ftype = ir.FunctionType(ir.TypeAttr(callee_main.attributes["function_type"]).value)
    args: list[ir.Value] = []
    if multi_callee and fold_index is None:
        args.append(_map_platform_index(mctx, exp))
    args += tokens + kept_operands
    if len(args) != len(ftype.inputs):
        raise ValueError(f"the exported module's @main takes {len(ftype.inputs)} arguments, but the calling "
                         f"convention gives {len(args)} (version {exp.calling_convention_version})")
    call = func.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get(main_name), args)
    results = list(call.results)
    _effect_tokens_out(mctx, exp, results[:len(tokens)])
    results = results[len(tokens):]
    out_types = ctx.out_types
    fixed = []
    for value, want in zip(results, out_types):
        fixed.append(value if value.type == want else stablehlo.convert(want, value))
    return fixed


def _effect_tokens_in(mctx: Any, exp: Exported) -> list[ir.Value]:
    """One token per ordered effect of ``exp``, for the callee's token arguments (the calling convention).

    toolkit's own computations have no effects, so there are no tokens in
    ``@main``; the calls to exports with the same ordered effect in one block
    are chained instead — each takes the token the previous one returned —
    which keeps them in program order. The first call of a block starts from
    ``stablehlo.after_all()`` (no inputs: a fresh token). Effects are opaque:
    only their type names matter.
    """
    if not exp.ordered_effects:
        return []
    block = ir.InsertionPoint.current.block
    chains = mctx.__dict__.setdefault("_exported_effect_tokens", {})
    tokens = []
    for effect in exp.ordered_effects:
        last = chains.get(effect.type_name)
        if last is not None and last[0] == block:
            tokens.append(last[1])
        else:
            tokens.append(stablehlo.AfterAllOp([]).result)
    return tokens


def _effect_tokens_out(mctx: Any, exp: Exported, tokens: Sequence[ir.Value]) -> None:
    """Remember the tokens a call returned, for the next call with the same ordered effects in this block."""
    chains = mctx.__dict__.setdefault("_exported_effect_tokens", {})
    block = ir.InsertionPoint.current.block
    for effect, token in zip(exp.ordered_effects, tokens):
        chains[effect.type_name] = (block, token)


def _map_platform_index(mctx: Any, exp: Exported) -> ir.Value:
    """The callee's platform index computed from the caller's (a case when the orders differ)."""
    i32 = ir.IntegerType.get_signless(32)
    scalar = ir.RankedTensorType.get([], i32)
    mapping = [exp.platforms.index(p) if p in exp.platforms else 0 for p in mctx.all_platforms]
    if mapping == list(range(len(mapping))):
        return mctx.platform_index
    case = stablehlo.CaseOp([scalar], mctx.platform_index, len(mapping))
    for region, target in zip(case.regions, mapping):
        with ir.InsertionPoint(region.blocks.append()):
            stablehlo.ReturnOp([stablehlo.ConstantOp(
                ir.DenseElementsAttr.get_splat(scalar, ir.IntegerAttr.get(i32, target))).result])
    return case.result


def _sanitize(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name) or "fun"


# --- calling ----------------------------------------------------------------------


def _flat_avals(exported: Exported, args: tuple, kwargs: dict) -> tuple[list[Any], pytrees.PyTreeDef, list]:
    leaves, tree = pytrees.tree_flatten((args, kwargs))
    avals = []
    paths = None
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, tracing.Tracer):
            avals.append(leaf.aval)
            continue
        if type(leaf) is Array:
            avals.append(leaf.aval)
            continue
        try:
            avals.append(aval_of(leaf))
        except TypeError:
            paths = paths or argument_paths(tree)
            raise TypeError(f"Argument {paths[i]} of the exported function {exported.fun_name!r} is a "
                            f"{type(leaf).__name__}, not an array.") from None
    return leaves, tree, avals


def call_exported(exported: Exported, *args: Any, **kwargs: Any) -> Any:
    """Call ``exported`` on arrays (eagerly, compiled once and cached) or on tracers (inside ``toolkit.jit``).

    float0 values (cotangents of integer values, in VJP exports) are handled
    as JAX does: a float0 argument goes to the module as boolean zeros of its
    shape, and a float0 result is a numpy float0 array of zeros.
    """
    leaves, tree, avals = _flat_avals(exported, args, kwargs)
    check_arguments(exported, tree, avals)
    leaves = [np.zeros(a.shape, dtypes.bool_) if e.dtype == dtypes.float0 and a.dtype == dtypes.float0 else leaf
              for leaf, a, e in zip(leaves, avals, exported.in_avals)]
    if tracing.is_tracing():
        outs = list(call_exported_p.bind(*leaves, exported=_ByIdentity(exported)))
    else:
        check_eager_devices(exported, leaves, tree)
        outs = list(_eager_function(exported)(*leaves))
    outs = [np.zeros(_static_shape(exported, out), dtypes.float0) if e.dtype == dtypes.float0 else out
            for out, e in zip(outs, exported.out_avals)]
    return pytrees.tree_unflatten(exported.out_tree, outs)


def _static_shape(exported: Exported, value: Any) -> tuple[int, ...]:
    shape = tuple(value.shape)
    if not shape_poly.is_constant_shape(shape):
        raise NotImplementedError(f"The exported function {exported.fun_name!r} returns a float0 array of symbolic "
                                  f"shape {shape}; toolkit represents float0 results as numpy zeros, which need "
                                  "static shapes.")
    return shape


def _eager_function(exported: Exported) -> Any:
    """``toolkit.jit`` of the call, created once per ``Exported`` (it caches executables per signature)."""
    cached = exported.__dict__.get("_toolkit_call_jit")
    if cached is not None:
        return cached
    try:
        # Equal exports (e.g. the same blob deserialized twice) share one compiled function.
        shared = _shared_calls.get(exported)
    except TypeError:  # an unhashable field (hand-built Exported): no sharing
        shared = None
    if shared is not None:
        object.__setattr__(exported, "_toolkit_call_jit", shared)
        return shared

    platform = runtime_client.default_device().platform
    check_platform(exported, platform)
    in_shardings = None
    out_shardings = None
    if exported.nr_devices > 1:
        in_shardings, out_shardings = _concrete_shardings(exported)
    ref = _ByIdentity(exported)

    def flat_call(*flat: Any) -> Any:
        return list(call_exported_p.bind(*flat, exported=ref))

    flat_call.__name__ = f"call_exported_{_sanitize(exported.fun_name)}"
    wrapped = jit(flat_call, in_shardings=in_shardings, out_shardings=out_shardings, keep_unused=True)
    object.__setattr__(exported, "_toolkit_call_jit", wrapped)
    try:
        _shared_calls[exported] = wrapped
        while len(_shared_calls) > _SHARED_CALLS_MAX:
            _shared_calls.pop(next(iter(_shared_calls)))
    except TypeError:
        pass
    return wrapped


#: Compiled call functions by (equal) Exported, oldest first; bounded.
_shared_calls: dict[Exported, Any] = {}
_SHARED_CALLS_MAX = 64


def _concrete_shardings(exported: Exported) -> tuple[Any, Any]:
    """Shardings over the first ``nr_devices`` devices for a sharded export's eager call."""
    devices = runtime_client.devices()
    if len(devices) < exported.nr_devices:
        raise ValueError(f"The exported function {exported.fun_name!r} was lowered for nr_devices="
                         f"{exported.nr_devices} devices, but only {len(devices)} are available: "
                         f"{_device_list(devices)}.")
    devices = devices[:exported.nr_devices]
    meshes: dict[Any, Any] = {}

    def concrete(named: Any, aval: ShapedArray) -> Any:
        if named is None:
            return shard.GSPMDSharding.get_replicated(tuple(devices))
        key = named.mesh
        if key not in meshes:
            if not key.axis_sizes:
                return shard.GSPMDSharding.get_replicated(tuple(devices))
            types = tuple(getattr(shard.AxisType, t) for t in key.axis_types)
            meshes[key] = shard.Mesh(np.array(devices, dtype=object).reshape(key.axis_sizes), key.axis_names,
                                     axis_types=types)
        return to_toolkit_named_sharding(named, meshes[key])

    named_in = exported._in_named_shardings
    named_out = exported._out_named_shardings
    if named_in is None or named_out is None:
        in_s = tuple(shard.GSPMDSharding(tuple(devices), h) if h is not None else
                     shard.GSPMDSharding.get_replicated(tuple(devices)) for h in exported.in_shardings_hlo)
        out_s = tuple(shard.GSPMDSharding(tuple(devices), h) if h is not None else None
                      for h in exported.out_shardings_hlo)
    else:
        in_s = tuple(concrete(s, a) for s, a in zip(named_in, exported.in_avals))
        out_s = tuple(None if s is None else concrete(s, a) for s, a in zip(named_out, exported.out_avals))
    return in_s, list(out_s)
