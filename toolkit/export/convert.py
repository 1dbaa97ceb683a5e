"""Convert exported artifacts: calling-convention version, StableHLO target, static or plain modules.

``convert(exported_or_bytes, ...)`` returns a new ``Exported`` (or, with
``plain=True``, the bytes of a plain StableHLO portable artifact):

* ``calling_convention=N`` (8, 9 or 10) rewrites what the convention puts
  in the module (see ``docs/calling-conventions.md``): 10 ↔ 9 changes only
  the version field, but 9 cannot carry Shardy (``sdy``) shardings; 8 has no
  ``jax.global_constant`` attributes (removed going down, put back going
  up) and no effect tokens (ordered effects cannot go to 8);
* ``stablehlo_target="X.Y.Z"`` re-serializes the portable artifact for that
  StableHLO version; an op or attribute newer than the target is refused,
  naming it (``stablehlo.composite is newer than StableHLO 0.15.0``);
* ``static_args=`` (argument types ``"f32[4,3],f32[4,3]"``, MLIR types
  ``"tensor<4x3xf32>,..."`` or dimension values ``"b=4"``) gives a static
  ``Exported``: the platform index folded for ``platform`` (default
  ``cpu``, else the first platform), shapes bound and refined, shape
  assertions checked, the ``_wrapped_jax_export_main`` wrapper inlined;
* ``plain=True`` goes one step further: the module alone, without JAX's
  module attributes, for consumers that do not speak JAX's convention.

Every conversion that cannot be done raises :class:`ConversionError`
(a ``ValueError``) whose ``feature`` names what blocks it.

Example::

    exp9 = convert(blob, calling_convention=9)
    old = convert(exp9, calling_convention=8, stablehlo_target="1.0.0")
    vhlo = convert(blob, static_args="b=4", plain=True)
"""

from __future__ import annotations

import dataclasses
import io
import re
from typing import Any, Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.core import shape_poly
from toolkit.core.avals import ShapedArray
from toolkit.export import calling_convention as export_calling_convention
from toolkit.export import provenance
from toolkit.export.call import _refine_to, dim_var_values
from toolkit.export.exported import Exported, artifact_version, portable_artifact_target
from toolkit.export.serialization import deserialize
from toolkit.ir.context import make_context
from toolkit.ir.serialization import deserialize_portable_artifact
from toolkit.ir.symbols import lookup_symbol
from toolkit.lowering.types import element_type
from toolkit.passes.bind_shapes import split_types
from toolkit.passes.pipeline import run_pipeline
from toolkit.passes.platform_specialize import platform_index_position, specialize_platform
from toolkit.runtime.portable import serialize_portable

#: Calling-convention versions ``convert`` writes.
CONVERTIBLE_CALLING_CONVENTIONS = (8, 9, 10)
#: The first version with effect tokens and ``jax.global_constant`` (JAX's and XlaCallModule's).
FIRST_VERSION_WITH_EFFECTS = 9
#: The first version whose consumer honours the exporter's Shardy choice.
FIRST_VERSION_WITH_SHARDY = 10

class ConversionError(ValueError):
    """A conversion that cannot be done; ``feature`` names what blocks it."""

    def __init__(self, message: str, feature: str):
        super().__init__(message)
        self.feature = feature


def parse_version(text: str) -> tuple[int, int, int]:
    """``"1.8.0"`` → ``(1, 8, 0)``; ``ValueError`` for anything else."""
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\.(\d+)\s*", str(text))
    if not match:
        raise ValueError(f"{text!r} is not a StableHLO version (X.Y.Z)")
    return tuple(int(g) for g in match.groups())  # type: ignore[return-value]


def version_text(version: Sequence[int]) -> str:
    return ".".join(str(v) for v in version)


def writable_versions() -> tuple[str, str]:
    """The oldest and newest StableHLO versions this jaxlib writes."""
    return str(stablehlo.get_minimum_version()), str(stablehlo.get_current_version())


def _as_exported(exported_or_bytes: Any) -> Exported:
    if isinstance(exported_or_bytes, Exported):
        return exported_or_bytes
    if isinstance(exported_or_bytes, (bytes, bytearray, memoryview)):
        return deserialize(bytes(exported_or_bytes))
    raise TypeError(f"convert expects an Exported or its serialized bytes, got {type(exported_or_bytes).__name__}.")


def read_module(exp: Exported, context: ir.Context | None = None) -> ir.Module:
    """The embedded module of ``exp``, parsed into ``context`` (a fresh one by default)."""
    context = context or make_context()
    return deserialize_portable_artifact(exp.mlir_module_serialized, context)


def has_shardy(module: ir.Module) -> str | None:
    """What in ``module`` is Shardy (``sdy.mesh @mesh``, an ``sdy.sharding``), or None."""
    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("sdy."):
            name = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else ""
            found.append(f"{op.name} @{name}" if name else op.name)
            return ir.WalkResult.INTERRUPT
        for name in op.attributes:
            name = name if isinstance(name, str) else name.name
            if name.startswith("sdy."):
                found.append(f"attribute {name}")
                return ir.WalkResult.INTERRUPT
        if op.name == "func.func":
            for which in ("arg_attrs", "res_attrs"):
                if which in op.attributes and "sdy.sharding" in str(op.attributes[which]):
                    found.append("attribute sdy.sharding")
                    return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found[0] if found else None


def _functions(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in module.body.operations if op.operation.name == "func.func"]


def _arg_attrs(function: ir.Operation) -> list[dict[str, ir.Attribute]]:
    count = len(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs)
    if "arg_attrs" not in function.attributes:
        return [{} for _ in range(count)]
    return [{n.name: n.attr for n in ir.DictAttr(a)} for a in ir.ArrayAttr(function.attributes["arg_attrs"])]


def _set_arg_attrs(function: ir.Operation, attrs: list[dict[str, ir.Attribute]]) -> None:
    function.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attrs])


def _name(function: ir.Operation) -> str:
    return ir.StringAttr(function.attributes["sym_name"]).value


def serialize_module(module: ir.Module, target: str) -> bytes:
    """``module`` as a portable artifact for StableHLO ``target``; :class:`ConversionError` naming what is too new."""
    oldest, newest = writable_versions()
    wanted = parse_version(target)
    if wanted < parse_version(oldest):
        raise ConversionError(f"StableHLO {target} is older than the oldest version this jaxlib writes ({oldest})",
                              f"StableHLO target {target} < {oldest}")
    if wanted > parse_version(newest):
        raise ConversionError(f"StableHLO {target} is newer than this jaxlib writes ({newest})",
                              f"StableHLO target {target} > {newest}")
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    try:
        return serialize_portable(buffer.getvalue(), target, keep_shardy=has_shardy(module) is not None)
    except ValueError as error:
        raise _too_new(str(error), target) from None


def _too_new(message: str, target: str) -> ConversionError:
    match = re.search(r"failed to legalize operation '([^']+)'", message)
    if match:
        vhlo = match.group(1)
        op = re.sub(r"^vhlo\.", "stablehlo.", re.sub(r"_v\d+$", "", vhlo))
        where = re.search(r"(<[^>]*>|[\w./-]+):(\d+):(\d+): error", message)
        detail = ""
        if "attr" in message.split("failed to legalize")[0][-200:]:
            detail = " (an attribute of it)"
        return ConversionError(
            f"the module uses {op}{detail} in a form ({vhlo}) newer than StableHLO {target}"
            + (f" (module line {where.group(2)})" if where and where.group(1) != "<unknown>" else ""), op)
    match = re.search(r"error: ([^\n]+)", message)
    reason = match.group(1) if match else message.splitlines()[0]
    attr = re.search(r"#vhlo\.(\w+?)_v\d+|#(\w+)<", reason)
    feature = attr.group(0) if attr else reason[:80]
    return ConversionError(f"cannot write the module for StableHLO {target}: {reason}", feature)


# --- calling conventions -------------------------------------------------------------


def _strip_global_constants(module: ir.Module) -> bool:
    changed = False
    with module.context:
        for function in _functions(module):
            attrs = _arg_attrs(function)
            if any("jax.global_constant" in a for a in attrs):
                _set_arg_attrs(function, [{k: v for k, v in a.items() if k != "jax.global_constant"}
                                          for a in attrs])
                changed = True
    return changed


def _add_global_constants(module: ir.Module, exp: Exported) -> bool:
    """Mark the platform index and dimension-variable arguments as version 9 does (from a version 8 module)."""
    changed = False
    multi = len(exp.platforms) > 1
    dim_vars = export_calling_convention.all_dim_vars(exp.in_avals)
    with module.context:
        for function in _functions(module):
            name = _name(function)
            if name not in ("main", export_calling_convention.WRAPPED_MAIN_NAME):
                continue
            attrs = _arg_attrs(function)
            names = ([export_calling_convention.PLATFORM_INDEX_NAME] if multi else []) + (dim_vars if name != "main" else [])
            if len(attrs) < len(names):
                raise ConversionError(f"@{name} takes {len(attrs)} arguments, fewer than the platform index and "
                                      f"dimension variables {names} the export declares", "calling convention 8 "
                                      "module does not match the export's platforms/dimension variables")
            for index, constant in enumerate(names):
                if attrs[index].get("jax.global_constant") is None:
                    attrs[index]["jax.global_constant"] = ir.StringAttr.get(constant)
                    changed = True
            _set_arg_attrs(function, attrs)
    return changed


def convert_calling_convention(exp: Exported, version: int) -> Exported:
    """``exp`` under calling convention ``version`` (8, 9 or 10); :class:`ConversionError` when impossible."""
    version = int(version)
    if version not in CONVERTIBLE_CALLING_CONVENTIONS:
        raise ConversionError(f"toolkit converts to calling conventions {CONVERTIBLE_CALLING_CONVENTIONS}, "
                              f"not {version}", f"calling convention {version}")
    if version == exp.calling_convention_version:
        return exp
    module = read_module(exp)
    if version < FIRST_VERSION_WITH_SHARDY:
        shardy = has_shardy(module)
        if shardy is not None:
            raise ConversionError(
                f"the module has Shardy shardings ({shardy}); calling convention {version} consumers partition "
                "with GSPMD (mhlo.sharding) and need 10 to honour Shardy", f"Shardy sharding ({shardy})")
    if version < FIRST_VERSION_WITH_EFFECTS and exp.ordered_effects:
        raise ConversionError(
            f"the export has ordered effects ({', '.join(map(str, exp.ordered_effects))}): their tokens are "
            f"arguments of @main only from calling convention {FIRST_VERSION_WITH_EFFECTS}",
            "ordered effects (effect tokens)")
    if version < FIRST_VERSION_WITH_EFFECTS <= exp.calling_convention_version:
        changed = _strip_global_constants(module)
    elif exp.calling_convention_version < FIRST_VERSION_WITH_EFFECTS <= version:
        changed = _add_global_constants(module, exp)
    else:
        changed = False
    serialized = exp.mlir_module_serialized
    if changed:
        serialized = serialize_module(module, artifact_version(serialized) or portable_artifact_target())
    return _replace(exp, mlir_module_serialized=serialized, calling_convention_version=version)


def _replace(exp: Exported, **changes: Any) -> Exported:
    """``dataclasses.replace`` keeping toolkit's provenance record (a conversion is recorded in it)."""
    new = dataclasses.replace(exp, **changes)
    provenance.carry_over(exp, new, changes)
    return new


def retarget(exp: Exported, target: str) -> Exported:
    """``exp`` with its module re-serialized for StableHLO ``target`` (:class:`ConversionError` when too new)."""
    parse_version(target)
    if artifact_version(exp.mlir_module_serialized) == target:
        return exp
    module = read_module(exp)
    return _replace(exp, mlir_module_serialized=serialize_module(module, target))


# --- static and plain modules ----------------------------------------------------------

_SHORT_DTYPES = {"f16": "float16", "f32": "float32", "f64": "float64", "bf16": "bfloat16", "i8": "int8",
                 "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "u16": "uint16", "u32": "uint32",
                 "u64": "uint64", "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
                 "bool": "bool", "i1": "bool", "pred": "bool", "c64": "complex64", "c128": "complex128"}


def _dtype_matches(text: str, dtype: np.dtype) -> bool:
    return _SHORT_DTYPES.get(text, text) == np.dtype(dtype).name


def static_shapes(exp: Exported, spec: str | Sequence[Any] | dict[str, int]) -> list[tuple[int, ...]]:
    """Concrete shapes for every flat input of ``exp`` from ``spec``.

    ``spec``: dimension values (``"b=4,n=3"`` or ``{"b": 4}``), argument
    types (``"f32[4,3],f32[4]"``, MLIR ``"tensor<4x3xf32>,..."``), or a list
    of shapes / arrays / ``ShapeDtypeStruct`` s. Raises ``ValueError`` for a
    spec that does not fit the export's avals.
    """
    avals = exp.in_avals
    if isinstance(spec, dict) or (isinstance(spec, str) and spec.strip() and all(
            re.fullmatch(r"\s*\w+\s*=\s*-?\d+\s*", p) for p in spec.split(","))):
        env = dict(spec) if isinstance(spec, dict) else {
            k.strip(): int(v) for k, v in (p.split("=") for p in spec.split(","))}
        missing = [v for v in export_calling_convention.all_dim_vars(avals) if v not in env]
        if missing:
            raise ValueError(f"no value for the dimension variable(s) {', '.join(missing)}")
        unknown = sorted(set(env) - set(export_calling_convention.all_dim_vars(avals)))
        if unknown:
            raise ValueError(f"{', '.join(unknown)} is not a dimension variable of the export "
                             f"(it has {', '.join(export_calling_convention.all_dim_vars(avals)) or 'none'})")
        shapes = []
        for aval in avals:
            shapes.append(tuple(int(d.evaluate(env)) if shape_poly.is_symbolic_dim(d) else int(d)
                                for d in aval.shape))
        _check_solution(exp, shapes)
        return shapes
    if isinstance(spec, str):
        pieces = split_types(spec)
        shapes_in: list[Any] = []
        for piece in pieces:
            short = re.fullmatch(r"\s*(\w+)\[([\d,\s]*)\]\s*", piece)
            mlir = re.fullmatch(r"\s*tensor<((?:\d+x)*)(\w+)>\s*", piece)
            if short:
                dims = tuple(int(d) for d in short.group(2).split(",") if d.strip())
                shapes_in.append((short.group(1), dims))
            elif mlir:
                dims = tuple(int(d) for d in mlir.group(1).split("x") if d)
                shapes_in.append((mlir.group(2), dims))
            else:
                raise ValueError(f"{piece!r} is not an argument type (write f32[4,3] or tensor<4x3xf32>)")
        if len(shapes_in) != len(avals):
            raise ValueError(f"{len(shapes_in)} argument type(s) given, the export takes {len(avals)}")
        for index, ((dtype_text, _), aval) in enumerate(zip(shapes_in, avals)):
            if not _dtype_matches(dtype_text, aval.dtype):
                raise ValueError(f"argument {index}: element type {dtype_text}, the export declares "
                                 f"{np.dtype(aval.dtype).name}")
        shapes = [dims for _, dims in shapes_in]
    else:
        items: Sequence[Any] = spec  # shapes, arrays or ShapeDtypeStructs (mypy keeps `str` in spec's type here)
        shapes = [tuple(getattr(s, "shape", s)) for s in items]
        if len(shapes) != len(avals):
            raise ValueError(f"{len(shapes)} argument shape(s) given, the export takes {len(avals)}")
    for index, (shape, aval) in enumerate(zip(shapes, avals)):
        if len(shape) != len(aval.shape) or any(
                not shape_poly.is_symbolic_dim(d) and int(d) != s for d, s in zip(aval.shape, shape)):
            raise ValueError(f"argument {index}: shape {list(shape)} does not fit the declared "
                             f"{aval.str_short()}")
    _check_solution(exp, shapes)
    return [tuple(int(s) for s in shape) for shape in shapes]


def _check_solution(exp: Exported, shapes: Sequence[Sequence[int]]) -> None:
    if export_calling_convention.all_dim_vars(exp.in_avals):
        dim_var_values(exp, [ShapedArray(tuple(s), a.dtype) for s, a in zip(shapes, exp.in_avals)])


def _choose_platform(exp: Exported, platform: str | None) -> str:
    if platform is not None:
        if platform not in exp.platforms:
            raise ConversionError(f"platform {platform!r} is not among the export's platforms {exp.platforms}",
                                  f"platform {platform}")
        return platform
    return "cpu" if "cpu" in exp.platforms else exp.platforms[0]


def _call_counts(module: ir.Module) -> dict[str, int]:
    counts: dict[str, int] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.call":
            name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            counts[name] = counts.get(name, 0) + 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return counts


def _inline_calls_from_main(module: ir.Module) -> int:
    """Inline every ``func.call`` in ``@main`` of a private function called only there; returns how many."""
    inlined = 0
    while True:
        main = export_calling_convention.find_main(module).operation
        counts = _call_counts(module)
        target = None
        for op in main.regions[0].blocks[0].operations:
            call = op.operation
            if call.name != "func.call":
                continue
            name = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
            callee = lookup_symbol(module, name)
            if callee is not None and counts.get(name) == 1 and len(callee.regions[0].blocks) == 1:
                target = (call, callee.operation)
                break
        if target is None:
            return inlined
        call, callee = target
        block = callee.regions[0].blocks[0]
        for argument, operand in zip(block.arguments, call.operands):
            argument.replace_all_uses_with(operand)
        ops = list(block.operations)
        returned = list(ops[-1].operands)
        for op in ops[:-1]:
            op.operation.move_before(call)
        for result, value in zip(call.results, returned):
            result.replace_all_uses_with(value)
        call.erase()
        callee.erase()
        inlined += 1


def specialize(exp: Exported, spec: Any, *, platform: str | None = None) -> Exported:
    """A static ``Exported`` for the shapes ``spec`` gives (see :func:`static_shapes`).

    The platform index is folded for ``platform``, the shapes bound and
    refined (the module's shape assertions checked: a spec that violates
    the export's constraints is a ``ValueError`` quoting the assertion), and
    the wrapper inlined. The result is still a JAX-convention export
    (version and effects unchanged) that any JAX reader calls.
    """
    if exp.calling_convention_version < FIRST_VERSION_WITH_EFFECTS:
        exp = convert_calling_convention(exp, FIRST_VERSION_WITH_EFFECTS)
    shapes = static_shapes(exp, spec)
    chosen = _choose_platform(exp, platform)
    module = read_module(exp)
    if platform_index_position(module.operation) is not None:
        specialize_platform(module.operation, exp.platforms.index(chosen))
    main = export_calling_convention.find_main(module)
    inputs = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs)
    nr_tokens = sum(1 for t in inputs if str(t) == "!stablehlo.token")
    with module.context, ir.Location.unknown():
        kept_types = [ir.RankedTensorType.get(list(shapes[i]), _element_type(exp.in_avals[i].dtype))
                      for i in exp.module_kept_var_idx]
        types = list(inputs[:nr_tokens]) + kept_types
        if len(types) != len(inputs):
            raise ConversionError(f"@main takes {len(inputs)} arguments, the export's convention gives "
                                  f"{len(types)}", "@main signature")
        if any(isinstance(t, ir.ShapedType) and not t.has_static_shape for t in inputs):
            _refine_to(module, types, exp)
        _inline_calls_from_main(module)
        run_pipeline(module, "builtin.module(symbol-dce)")
        main = export_calling_convention.find_main(module)
        results = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
        array_results = [t for t in results if str(t) != "!stablehlo.token"]
        dynamic = [str(t) for t in array_results if isinstance(t, ir.ShapedType) and not t.has_static_shape]
        if dynamic or any(isinstance(t, ir.ShapedType) and not t.has_static_shape for t in
                          ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).inputs):
            raise ConversionError(f"shape refinement left dynamic types in @main: {', '.join(dynamic)}",
                                  "dynamic shapes after refinement")
        export_calling_convention.set_module_attributes(module, uses_shape_polymorphism=False)
    out_avals = tuple(ShapedArray(tuple(ir.ShapedType(t).shape), a.dtype)
                      for t, a in zip(array_results, exp.out_avals))
    in_avals = tuple(ShapedArray(tuple(s), a.dtype) for s, a in zip(shapes, exp.in_avals))
    target = artifact_version(exp.mlir_module_serialized) or portable_artifact_target()
    return _replace(exp, in_avals=in_avals, out_avals=out_avals, platforms=(chosen,), uses_global_constants=False,
                    mlir_module_serialized=serialize_module(module, target), _get_vjp=None)


def _element_type(dtype: Any) -> ir.Type:
    return element_type(np.dtype(dtype))


def plain_module(exp: Exported, spec: Any = None, *, platform: str | None = None,
                 context: ir.Context | None = None) -> ir.Module:
    """The static module of ``exp`` without JAX's convention: ``@main`` takes exactly the array arguments.

    ``spec`` as for :func:`specialize` (None: the export must be static
    already). Ordered effects are refused (their tokens would be arguments);
    JAX's module attributes (``jax.uses_shape_polymorphism``) are removed;
    ``jax.result_info`` names stay, as harmless documentation.
    """
    if exp.ordered_effects:
        raise ConversionError(
            f"the export has ordered effects ({', '.join(map(str, exp.ordered_effects))}): @main takes and "
            "returns effect tokens, which a plain consumer does not supply", "ordered effects (effect tokens)")
    if spec is None:
        dynamic = [a.str_short() for a in exp.in_avals if not all(isinstance(d, int) for d in a.shape)]
        if dynamic:
            raise ConversionError(f"the export is shape-polymorphic ({', '.join(dynamic)}): give static argument "
                                  "types or dimension values (--static)", "symbolic shapes")
        spec = [a.shape for a in exp.in_avals]
    static = specialize(exp, spec, platform=platform)
    module = read_module(static, context)
    with module.context:
        attributes = module.operation.attributes
        if "jax.uses_shape_polymorphism" in attributes:
            del attributes["jax.uses_shape_polymorphism"]
    return module


def convert(exported_or_bytes: Any, *, calling_convention: int | None = None, stablehlo_target: str | None = None,
            static_args: Any = None, plain: bool = False, platform: str | None = None) -> Exported | bytes:
    """Convert an ``Exported`` (or its bytes); see the module docstring.

    Returns an ``Exported``, or with ``plain=True`` the bytes of a portable
    artifact (StableHLO ``stablehlo_target``, default the export's own
    target). Raises :class:`ConversionError` naming the blocking feature.
    """
    exp = _as_exported(exported_or_bytes)
    if stablehlo_target is not None:
        parse_version(stablehlo_target)
    if plain:
        if calling_convention is not None:
            raise ValueError("a plain module has no calling convention: give calling_convention or plain, not both")
        module = plain_module(exp, static_args, platform=platform)
        target = stablehlo_target or artifact_version(exp.mlir_module_serialized) or portable_artifact_target()
        return serialize_module(module, target)
    if static_args is not None:
        exp = specialize(exp, static_args, platform=platform)
    if calling_convention is not None:
        exp = convert_calling_convention(exp, calling_convention)
    if stablehlo_target is not None:
        exp = retarget(exp, stablehlo_target)
    return exp
