"""``export(fun_jit)(*specs)``: lower a ``toolkit.jit`` function once into an :class:`Exported`.

The result has every field ``jax.export.export`` fills, with the same
meaning, so its ``serialize()`` bytes load in JAX (and JAX's in toolkit):

* ``mlir_module_serialized`` is a StableHLO portable artifact targeting the
  version ``stablehlo.get_version_from_compatibility_requirement(WEEK_4)``
  gives (1.15.0 with jaxlib 0.10.2), as JAX targets;
* the module follows the calling convention of
  :mod:`toolkit.export.calling_convention`;
* custom calls must target :data:`STABLE_CUSTOM_CALL_TARGETS` unless allowed
  with ``DisabledSafetyCheck.custom_call(name)``.

Example::

    >>> f = toolkit.jit(lambda x, y: x * 2 + y)
    >>> exp = export(f)(ShapeDtypeStruct((4,), np.float32), np.ones(4, np.float32))
    >>> exp.in_avals, exp.platforms
    ((ShapedArray(float32[4]), ShapedArray(float32[4])), ('cpu',))
    >>> blob = exp.serialize()
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

from jaxlib.mlir import ir

from toolkit import shard
from toolkit.ad.api import vjp
from toolkit.ad.interpret import eval_program
from toolkit.core import dtypes, pytrees, shape_poly
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.export import calling_convention, provenance
from toolkit.export.exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    portable_artifact_target,
)
from toolkit.export.shardings import (EMPTY_MESH, ExportedAbstractDevice, ExportedAbstractMesh, ExportedNamedSharding,
                                      hlo_to_named_sharding)
from toolkit.ir.context import shared_context
from toolkit.numpy import zeros
from toolkit.passes.sharding_annotate import annotate_shardings
from toolkit.runtime import client as runtime_client
from toolkit.runtime.portable import serialize_portable
from toolkit.shard.mesh import abstract_mesh_on
from toolkit.shard.resolve import abstract_only_context, is_sharding_leaf
from toolkit.sharding_plan import plan_shardings
from toolkit.stages import Wrapped, jit

#: jaxlib's CPU LAPACK kernels (FFI), whose compatibility JAX tests and guarantees.
_CPU_KERNELS = tuple(f"lapack_{t}{op}_ffi" for op in ("potrf", "geqrf", "getrf", "gesdd", "geev", "gees", "trsm",
                                                       "gtsv", "gehrd") for t in "sdcz") + tuple(
    f"lapack_{name}_ffi" for name in ("sorgqr", "dorgqr", "cungqr", "zungqr", "ssyevd", "dsyevd", "cheevd", "zheevd",
                                      "ssytrd", "dsytrd", "chetrd", "zhetrd"))
#: jaxlib's GPU solver kernels (FFI).
_GPU_KERNELS = ("cu_lu_pivots_to_permutation", "cusolver_getrf_ffi", "hip_lu_pivots_to_permutation",
                "hipsolver_getrf_ffi", "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", "hipsolver_geqrf_ffi",
                "hipsolver_orgqr_ffi", "cusolver_potrf_ffi", "hipsolver_potrf_ffi", "cusolver_syevd_ffi",
                "hipsolver_syevd_ffi", "cusolver_gesvd_ffi", "cusolver_gesvdj_ffi", "hipsolver_gesvd_ffi",
                "hipsolver_gesvdj_ffi", "hipsolver_gesdd_ffi", "cusolver_sytrd_ffi", "hipsolver_sytrd_ffi",
                "cusparse_gtsv2_ffi")

#: Custom-call targets an export may contain without a ``DisabledSafetyCheck``:
#: the set JAX 0.10.2 guarantees stable (``_CUSTOM_CALL_TARGETS_GUARANTEED_STABLE``,
#: backed by its back-compat tests). Anything else needs
#: ``DisabledSafetyCheck.custom_call(target)``.
STABLE_CUSTOM_CALL_TARGETS: frozenset[str] = frozenset({
    *_CPU_KERNELS, *_GPU_KERNELS,
    "Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "annotate_device_placement",
    "cu_threefry2x32_ffi", "hip_threefry2x32_ffi",
    "Eigh", "Qr", "ProductOfElementaryHouseholderReflectors", "LuDecomposition",
    "ApproxTopK", "stablehlo.dynamic_approx_top_k", "tf.call_tf_function", "tpu_custom_call",
    "AllocateBuffer", "mosaic_gpu_v2",
    "stablehlo.dynamic_reduce_window", "stablehlo.dynamic_rng_bit_generator", "stablehlo.dynamic_top_k",
    "shape_assertion",
})


#: Host callbacks (``toolkit.pure_callback``, ``debug.print``, ...): an export never holds one (JAX's rule).
_HOST_CALLBACK_TARGETS = frozenset({"xla_ffi_python_cpu_callback", "xla_ffi_python_gpu_callback",
                                    "xla_python_cpu_callback", "xla_python_gpu_callback",
                                    "xla_ffi_partitioned_python_cpu_callback"})


def serialize_module(module: ir.Module) -> bytes:
    """``module`` as a portable artifact at :func:`portable_artifact_target`; ``module`` is left unchanged.

    Through jaxlib's serializer, as JAX does: CHLO ops are legalized to StableHLO first, and
    Shardy annotations (which have no VHLO form) are kept as plain MLIR next to the VHLO
    ("mixed serialization", which JAX 0.10 always asks for on CPU: ``serialize_with_sdy``).
    Without Shardy ops the bytes are the same either way, but asking for it also skips
    jaxlib's Shardy round-trip export pipeline: about half the time on a 1000-op module.
    The module itself is handed over, as JAX hands it (jaxlib's entry point takes a module
    or bytecode, which it would parse again in a new context: ~10-20% of the time).
    """
    return serialize_portable(module, portable_artifact_target(), keep_shardy=True)


def check_custom_calls(module: ir.Module, disabled_checks: Sequence[DisabledSafetyCheck],
                       bytecode: bytes | None = None) -> None:
    """Refuse custom calls to targets outside :data:`STABLE_CUSTOM_CALL_TARGETS` (``ValueError``).

    ``DisabledSafetyCheck.custom_call(name)`` allows ``name``. ``bytecode``, the
    module's MLIR bytecode if the caller has it, skips the walk over every op
    (~2 µs per op from Python) when no op is named ``custom_call``: bytecode keeps
    op names as plain strings in its string section.
    """
    if bytecode is not None and b"custom_call" not in bytecode:
        return
    allowed = set(STABLE_CUSTOM_CALL_TARGETS)
    allowed |= {target for c in disabled_checks if (target := c.is_custom_call()) is not None}
    refused: list[str] = []
    callbacks: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target in _HOST_CALLBACK_TARGETS:  # as JAX: no disabled check allows them
                callbacks.append(f"{target!r} at {op.location}")
            elif target not in allowed:
                refused.append(f"{target!r} at {op.location}")
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if callbacks:
        raise NotImplementedError("serialization of host_callbacks is not yet implemented: the program calls back "
                                  "into Python (toolkit.pure_callback, io_callback, debug.print or debug.callback): "
                                  + "; ".join(callbacks))
    if refused:
        raise ValueError("Cannot export custom calls whose targets have no compatibility guarantee: "
                         + "; ".join(refused) + ". Allow a target explicitly with "
                         "export(..., disabled_checks=[DisabledSafetyCheck.custom_call(name)]).")


def _abstract_device(mesh: Any) -> ExportedAbstractDevice | None:
    devices = getattr(mesh, "_flat_devices_tuple", None)
    if not devices:
        return None
    d = devices[0]
    num_cores = getattr(d, "num_cores", None) if d.platform == "tpu" else (
        getattr(d, "core_count", None) if d.platform == "gpu" else None)
    return ExportedAbstractDevice(d.device_kind, num_cores, d.platform)


def recorded_sharding(sharding: Any, ndim: int) -> ExportedNamedSharding | None:
    """How an export records one toolkit sharding (JAX's rules): a named sharding over an abstract mesh.

    Unspecified (None) stays None; a single-device sharding becomes a
    replicated sharding over the empty mesh; a GSPMD sharding becomes a named
    one over ``_axis_<i>`` axes when it is replicated or an iota tiling.
    """
    if sharding is None:
        return None

    if isinstance(sharding, shard.NamedSharding):
        mesh = sharding.mesh
        if not mesh.axis_names:
            return ExportedNamedSharding(EMPTY_MESH, (None,) * ndim, memory_kind=sharding.memory_kind)
        abstract = ExportedAbstractMesh(mesh.axis_sizes, mesh.axis_names,
                                        tuple(getattr(t, "name", str(t)) for t in mesh.axis_types),
                                        _abstract_device(mesh))
        spec = sharding.spec
        return ExportedNamedSharding(abstract, tuple(spec), frozenset(getattr(spec, "reduced", ()) or ()),
                                     frozenset(getattr(spec, "unreduced", ()) or ()), sharding.memory_kind)
    if isinstance(sharding, shard.SingleDeviceSharding):
        return ExportedNamedSharding(EMPTY_MESH, (None,) * ndim, memory_kind=getattr(sharding, "memory_kind", None))
    hlo = sharding._to_xla_hlo_sharding(ndim)
    if hlo.is_replicated():
        return ExportedNamedSharding(EMPTY_MESH, (None,) * ndim, memory_kind=getattr(sharding, "memory_kind", None))
    try:
        return hlo_to_named_sharding(hlo, ndim)
    except (ValueError, NotImplementedError) as exc:
        raise TypeError(f"Cannot record the sharding {sharding} in an export: {exc}") from None


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = (),
           calling_convention_version: int | None = None) -> Callable[..., Exported]:
    """Export ``fun_jit`` (a ``toolkit.jit`` function) for persistent serialization.

    Returns a function taking the argument specs — ``ShapeDtypeStruct``s
    (with shardings if wanted) or arrays, in the ``(args, kwargs)`` form
    ``fun_jit`` takes — and returning an :class:`Exported`.

    Args:
      fun_jit: the result of ``toolkit.jit``.
      platforms: platforms to lower for (default ``(default_export_platform(),)``).
        With several, ``@main`` takes a leading platform-index argument and
        platform-dependent primitives lower under a ``stablehlo.case``.
      disabled_checks: safety checks to skip, e.g.
        ``DisabledSafetyCheck.custom_call("my_kernel")``.
      calling_convention_version: 9 or 10 (default 10, JAX 0.10.2's default).

    Under ``use_abstract_mesh`` alone (an Explicit axis, no concrete mesh) the export is over that mesh, as
    JAX's: ``nr_devices`` is its size and the recorded shardings name it without devices (toolkit lowers over
    the mesh laid on this process's first devices, so there must be that many).

    Raises ``TypeError`` when ``fun_jit`` is not a jit function, ``ValueError``
    for an unsupported calling-convention version or a custom call without a
    stability guarantee.

    Example::

        exp = export(toolkit.jit(f), platforms=("cpu", "cuda"))(ShapeDtypeStruct((3,), np.float32))
    """
    if not isinstance(fun_jit, Wrapped):
        raise TypeError(f"The function to export must be the result of toolkit.jit, got {fun_jit!r}.")
    version = calling_convention.DEFAULT_CALLING_CONVENTION_VERSION if calling_convention_version is None \
        else int(calling_convention_version)
    if not minimum_supported_calling_convention_version <= version <= maximum_supported_calling_convention_version:
        raise ValueError(f"The requested export calling convention version {version} is outside the range of "
                         f"supported versions [{minimum_supported_calling_convention_version}.."
                         f"{maximum_supported_calling_convention_version}].")
    lowering_platforms = tuple(platforms) if platforms else (default_export_platform(),)
    if not lowering_platforms or not all(isinstance(p, str) and p for p in lowering_platforms):
        raise ValueError(f"platforms must be non-empty platform names, got {platforms!r}.")
    if len(set(lowering_platforms)) != len(lowering_platforms):
        raise ValueError(f"platforms must be distinct, got {lowering_platforms}.")
    disabled = tuple(disabled_checks)
    for check in disabled:
        if not isinstance(check, DisabledSafetyCheck):
            raise TypeError(f"disabled_checks must be DisabledSafetyCheck values, got {check!r}.")

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        check_symbolic_scopes(fun_jit.name, args_specs, kwargs_specs)
        target, (args_specs, kwargs_specs), abstract = _concrete_for_lowering(fun_jit, (args_specs, kwargs_specs))
        context = abstract_only_context()
        if context is None:
            traced = target.trace(*args_specs, **kwargs_specs)
            exp = export_traced(traced, platforms=lowering_platforms, disabled_checks=disabled,
                                calling_convention_version=version)
        else:
            # use_abstract_mesh alone (JAX exports over it, for devices to come): traced and lowered over the
            # same mesh laid on real devices, then recorded without them, as for abstract shardings above.
            abstract.add((tuple(context.axis_sizes), tuple(context.axis_names)))
            with shard.set_mesh(_stand_in_mesh(context)):
                traced = target.trace(*args_specs, **kwargs_specs)
                exp = export_traced(traced, platforms=lowering_platforms, disabled_checks=disabled,
                                    calling_convention_version=version)
            exp = _requested_outs_only(exp, target)
        exp = _record_abstract_meshes(exp, abstract) if abstract else exp
        return provenance.record_export(exp)  # who wrote it, when (a flatbuffer field JAX's readers skip)

    return do_export


def _concrete_for_lowering(fun_jit: Any, specs: Any) -> tuple[Any, Any, set]:
    """``fun_jit`` and the specs with every ``NamedSharding`` over an ``AbstractMesh`` put on real devices.

    An export over an abstract mesh is device-polymorphic (JAX records the
    mesh without devices, ``nr_devices`` its size). toolkit's lowering needs a
    device assignment, so the mesh is laid over the first ``mesh.size``
    devices for lowering only; :func:`_record_abstract_meshes` then records
    it without devices again. Returns the keys ``(sizes, names)`` of the
    abstract meshes met (empty: nothing changed).
    """
    abstract: set = set()

    def concrete(sharding: Any) -> Any:
        if not (isinstance(sharding, shard.NamedSharding) and isinstance(sharding.mesh, shard.AbstractMesh)):
            return sharding
        mesh = sharding.mesh
        real = _stand_in_mesh(mesh)
        abstract.add((tuple(mesh.axis_sizes), tuple(mesh.axis_names)))
        return shard.NamedSharding(real, sharding.spec, memory_kind=sharding.memory_kind)

    def concrete_spec(leaf: Any) -> Any:
        if isinstance(leaf, ShapeDtypeStruct) and leaf.sharding is not None:
            new = concrete(leaf.sharding)
            if new is not leaf.sharding:
                return ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=new, weak_type=leaf.weak_type)
        return leaf

    in_shardings = pytrees.tree_map(concrete, fun_jit.in_shardings)
    out_shardings = pytrees.tree_map(concrete, fun_jit.out_shardings)
    specs = pytrees.tree_map(concrete_spec, specs)
    if not abstract:
        return fun_jit, specs, abstract
    target = jit(fun_jit.fun, static_argnums=fun_jit.static_argnums, static_argnames=fun_jit.static_argnames,
                 donate_argnums=fun_jit.donate_argnums, keep_unused=fun_jit.keep_unused,
                 in_shardings=in_shardings, out_shardings=out_shardings)
    return target, specs, abstract


def _stand_in_mesh(mesh: Any) -> Any:
    """The ``AbstractMesh`` ``mesh`` laid over the first ``mesh.size`` devices (a ``Mesh`` of its axes), to lower
    with; ``ValueError`` when there are fewer devices."""
    devices = runtime_client.devices()
    if len(devices) < mesh.size:
        raise ValueError(f"Exporting over {mesh} lowers with {mesh.size} devices, but only {len(devices)} are "
                         "available (set TOOLKIT_NUM_CPU_DEVICES before the first backend use).")
    return abstract_mesh_on(mesh, devices[:mesh.size])


def _requested_outs_only(exp: Exported, fun_jit: Any) -> Exported:
    """``exp`` recording only the results' shardings ``fun_jit``'s ``out_shardings`` asked for.

    Over an abstract mesh alone JAX has no devices to lay an explicitly typed result out on, so it leaves the
    sharding of every result not given one unspecified (its ``_concretize_abstract_out_shardings`` needs a device
    assignment); the stand-in mesh toolkit lowers with would record the type's.
    """
    assert exp._out_named_shardings is not None  # export_traced records them
    count = len(exp.out_avals)
    given = fun_jit.out_shardings
    if given is None:
        requested = [False] * count
    elif is_sharding_leaf(given):
        requested = [True] * count
    else:
        requested = [s is not None for s in pytrees.broadcast_prefix(
            given, pytrees.structure_of(exp.out_tree, [0] * count), is_leaf=is_sharding_leaf)]
    if all(requested):
        return exp
    return dataclasses.replace(exp, out_shardings_hlo=(None,) * count, _out_named_shardings=tuple(
        s if r else None for s, r in zip(exp._out_named_shardings, requested)))


def _record_abstract_meshes(exp: Exported, abstract: set) -> Exported:
    """``exp`` with the meshes that were abstract recorded without devices (no ``abstract_device``), as JAX does."""
    def strip(named: Any) -> Any:
        if named is None or (named.mesh.axis_sizes, named.mesh.axis_names) not in abstract:
            return named
        # Nor the default memory kind the lowering's devices gave it (JAX keeps an abstract mesh's None).
        memory_kind = None if named.memory_kind == "device" else named.memory_kind
        return dataclasses.replace(named, mesh=dataclasses.replace(named.mesh, abstract_device=None),
                                   memory_kind=memory_kind)

    # export_traced, which made exp, records the named shardings.
    assert exp._in_named_shardings is not None and exp._out_named_shardings is not None
    return dataclasses.replace(exp, _in_named_shardings=tuple(strip(s) for s in exp._in_named_shardings),
                               _out_named_shardings=tuple(strip(s) for s in exp._out_named_shardings))


def check_symbolic_scopes(fun_name: str, args_specs: Sequence[Any], kwargs_specs: dict[str, Any]) -> None:
    """``ValueError`` (JAX's message) unless every symbolic dimension of the specs shares one scope.

    Checked before tracing, as JAX does: otherwise the first shape rule to
    compare two dimensions fails with "sizes b and b differ", the same
    variable name in two scopes.
    """
    first: tuple[Any, str] | None = None  # (scope, argument path)
    for path, leaf in pytrees.tree_flatten_with_path((tuple(args_specs), dict(kwargs_specs)))[0]:
        for d in getattr(leaf, "shape", ()):  # static arguments may have no shape
            if not shape_poly.is_symbolic_dim(d):
                continue
            where = ("args" if path[0].idx == 0 else "kwargs") + pytrees.keystr(tuple(path[1:]))
            if first is None:
                first = (d.scope, where)
            else:
                first[0]._check_same_scope(d, f"when exporting {fun_name}", self_descr=f"current (from {first[1]}) ",
                                           other_descr=where)


def export_traced(traced: Any, *, platforms: Sequence[str], disabled_checks: Sequence[DisabledSafetyCheck] = (),
                  calling_convention_version: int = calling_convention.DEFAULT_CALLING_CONVENTION_VERSION,
                  compute_dim_vars: calling_convention.DimVarsHook | None = None) -> Exported:
    """The :class:`Exported` of a ``Traced`` (the work behind :func:`export`)."""
    platforms = tuple(platforms)
    in_avals = tuple(traced.flat_in_avals)
    dim_vars = calling_convention.all_dim_vars(in_avals)
    lowered = traced.lower(platforms=platforms, dim_vars_as_arguments=True)
    kept = tuple(sorted(lowered.kept_var_idx))
    if dim_vars and len(kept) != len(in_avals):
        kept = tuple(range(len(in_avals)))  # JAX keeps every argument of polymorphic exports
    # A private copy, parsed from the lowering's bytecode: the Lowered's module is not touched (a cached
    # lowering's Lowered never parses one).
    source_bytecode = lowered._bytecode()
    with shared_context() as context:
        module = ir.Module.parse(source_bytecode, context)
    has_platform_index = len(platforms) > 1
    ordered_effects: tuple = ()
    # toolkit's own primitives have no effects; calls of other exports bring theirs. Unordered ones
    # are recorded; ordered ones would need tokens through @main, which toolkit's lowering does not
    # thread (the inner calls chain tokens of their own, see call.py), so they are not declared.
    unordered_effects = _called_unordered_effects(traced.program)
    if dim_vars:
        lowered_dim_args = [a.name for a in calling_convention.main_signature(module).arguments if a.kind == "dim_var"]
        if lowered_dim_args != list(dim_vars):
            # The lowering must give @main one argument per dimension variable (in sorted order)
            # for the wrapper to bind; until the polymorphic lowering does, refuse clearly.
            raise NotImplementedError(
                f"exporting with symbolic shapes needs the polymorphic lowering (dimension variables {dim_vars} "
                f"as leading arguments of @main, marked jax.global_constant); the lowering gave {lowered_dim_args}")
    if calling_convention.needs_wrapper(in_avals, len(ordered_effects)):
        calling_convention.wrap_main(module, in_avals, module_kept_var_idx=kept, has_platform_index=has_platform_index,
                     dim_vars=dim_vars, compute_dim_vars=compute_dim_vars)
    plan = lowered._plan if getattr(lowered, "_plan", None) is not None else plan_shardings(traced)
    if plan.num_partitions > 1:
        _use_shardy(module, plan, kept, has_platform_index, len(traced.program.out_avals))
    uses_global_constants = bool(dim_vars) or has_platform_index
    calling_convention.set_module_attributes(module, uses_shape_polymorphism=uses_global_constants)
    # The wrapper adds only shape assertions (an allowed target): the lowering's custom calls are the ones
    # to check, and without any (no op name "custom_call" in its bytecode) there is nothing to walk.
    check_custom_calls(module, disabled_checks, source_bytecode)
    serialized = serialize_module(module)

    out_avals = tuple(traced.program.out_avals)
    in_named = tuple(recorded_sharding(plan._arg_shardings[i], a.ndim) for i, a in enumerate(in_avals))
    out_specs = plan._out_shardings_flat(len(out_avals))
    out_named = tuple(recorded_sharding(s, a.ndim) for s, a in zip(out_specs, out_avals))
    return Exported(
        fun_name=traced.fun_name,
        in_tree=traced.in_tree,
        in_avals=tuple(_strip_weak(a) for a in in_avals),
        out_tree=traced.out_tree,
        out_avals=tuple(_strip_weak(a) for a in out_avals),
        in_shardings_hlo=(None,) * len(in_avals),
        out_shardings_hlo=(None,) * len(out_avals),
        nr_devices=plan.num_partitions,
        platforms=platforms,
        ordered_effects=ordered_effects,
        unordered_effects=unordered_effects,
        disabled_safety_checks=tuple(disabled_checks),
        mlir_module_serialized=serialized,
        calling_convention_version=calling_convention_version,
        module_kept_var_idx=kept,
        uses_global_constants=uses_global_constants,
        _in_named_shardings=in_named,
        _out_named_shardings=out_named,
        _get_vjp=functools.partial(_export_vjp, traced.program),
    )


def _called_unordered_effects(program: Any) -> tuple:
    """The unordered effects of the exports ``program`` calls, first occurrence first."""
    seen: dict = {}
    for eqn in program.walk():
        if eqn.primitive.name == "call_exported":
            for effect in eqn.params["exported"].exported.unordered_effects:
                seen.setdefault(effect, None)
    return tuple(seen)


def _export_vjp(program: Any, primal: Exported) -> Exported:
    """The VJP of ``primal`` as an ``Exported``, with jax.export's calling convention.

    The VJP function takes the flat primal arguments followed by one cotangent
    per flat output (the output avals) and returns a tuple with one cotangent
    per flat primal argument — exactly ``jax.export``'s ``Exported.vjp()``.
    Like JAX it differentiates the traced primal program again (here with
    ``toolkit.ad.vjp`` over ``program``) rather than the serialized module.
    """
    if primal.nr_devices != 1:
        raise NotImplementedError("Exported.vjp() is implemented for single-device exports only; "
                                  f"{primal.fun_name!r} spans {primal.nr_devices} devices.")
    num_args = len(primal.in_avals)
    # As in JAX, integer and boolean values (and float0 ones, from a VJP of a VJP) have float0
    # cotangents: a float0 aval in the signature, boolean zeros inside the module.
    no_tangent = [not dtypes.is_inexact(a.dtype) for a in (*primal.in_avals, *primal.out_avals)]

    def primal_flat(*args: Any) -> list[Any]:
        return eval_program(program, list(args))

    def vjp_fun(*args_and_cotangents: Any) -> tuple[Any, ...]:
        args, cotangents = args_and_cotangents[:num_args], args_and_cotangents[num_args:]
        _, pullback = vjp(primal_flat, *args)
        cts = pullback(list(cotangents))
        return tuple(zeros(a.shape, dtypes.bool_) if float0 else ct
                     for ct, a, float0 in zip(cts, primal.in_avals, no_tangent))

    vjp_fun.__name__ = f"vjp_{primal.fun_name}"
    in_avals = [*primal.in_avals, *(_tangent_aval(a) for a in primal.out_avals)]
    specs = [ShapeDtypeStruct(a.shape, dtypes.bool_ if a.dtype == dtypes.float0 else a.dtype) for a in in_avals]
    exp = export(jit(vjp_fun), platforms=primal.platforms, disabled_checks=primal.disabled_safety_checks,
                 calling_convention_version=primal.calling_convention_version)(*specs)
    return dataclasses.replace(exp, in_avals=tuple(in_avals),
                               out_avals=tuple(_tangent_aval(a) for a in primal.in_avals))


def _tangent_aval(aval: Any) -> Any:
    """JAX's ``to_tangent_aval``: float0 for integer, boolean and float0 values."""
    return aval if dtypes.is_inexact(aval.dtype) else ShapedArray(aval.shape, dtypes.float0)


def _use_shardy(module: ir.Module, plan: Any, kept: Sequence[int], has_platform_index: bool,
                num_outputs: int) -> None:
    """Re-annotate a sharded module's ``@main`` in Shardy form (``sdy.mesh`` + ``sdy.sharding``), as JAX exports.

    JAX 0.10.2 partitions with Shardy, and its ``call`` of an export cannot
    mix a GSPMD-annotated module into a Shardy one. Only possible when every
    given sharding is a ``NamedSharding`` over one mesh; otherwise the GSPMD
    (``mhlo.sharding``) annotations stay.
    """
    ins = [plan._arg_shardings[i] for i in kept]
    outs = list(plan._out_shardings_flat(num_outputs))
    given = [s for s in ins + outs if s is not None]
    if not given or not all(isinstance(s, shard.NamedSharding) for s in given) or \
            len({s.mesh.abstract_mesh._key() if hasattr(s.mesh.abstract_mesh, "_key") else id(s.mesh)
                 for s in given}) != 1:
        return
    main = calling_convention.find_main(module)
    with module.context, ir.Location.unknown():
        for which in ("arg_attrs", "res_attrs"):
            if which not in main.attributes:
                continue
            cleaned = []
            for a in ir.ArrayAttr(main.attributes[which]):
                cleaned.append(ir.DictAttr.get({n.name: n.attr for n in ir.DictAttr(a) if n.name != "mhlo.sharding"}))
            main.attributes[which] = ir.ArrayAttr.get(cleaned)
    annotate_shardings(module, ([None] if has_platform_index else []) + ins, outs, mode="shardy")


def _strip_weak(aval: Any) -> Any:
    # Weak types are not serialized; a fresh export equals its round trip only without them.
    if getattr(aval, "weak_type", False):
        return aval.update(weak_type=False) if hasattr(aval, "update") else type(aval)(aval.shape, aval.dtype)
    return aval
