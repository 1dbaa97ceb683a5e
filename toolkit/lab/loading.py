"""``load_module``: any program in, as a :class:`toolkit.stages.Lowered`.

A pass is only as useful as the programs it can be run on. ``load_module``
takes what a researcher has at hand and gives the same ``Lowered`` that
``toolkit.jit(f).lower(...)`` gives, so ``as_text()``, ``compiler_ir()``,
``cost_analysis()``, ``compile(pipeline=...)`` and calling the result work on
it unchanged. Accepted:

* MLIR text (``str`` holding a module, or ``bytes``), MLIR bytecode, a
  StableHLO portable (VHLO) artifact;
* a path (``str`` without a newline or ``{``, or any ``os.PathLike``) to a file
  holding any of those, or a serialized export;
* the bytes of ``Exported.serialize()`` (toolkit's or ``jax.export``'s);
* an ``ir.Module`` (copied: the caller's module is never changed);
* a toolkit :class:`~toolkit.export.Exported`;
* by duck typing (``jax`` is never imported): a JAX ``Exported``
  (``.serialize()``, ``.mlir_module_serialized``, ``.in_avals``, ...; read
  through toolkit's deserializer, so it keeps its ``in_tree``) or a JAX
  ``Lowered`` (``.as_text()``);
* a toolkit ``Lowered`` (returned as it is).

What the result takes and returns:

* a module (text, bytecode, VHLO, ``ir.Module``, JAX ``Lowered``): ``@main``'s
  arguments, flat and positional; one result is returned as an array, several
  as a tuple (a JAX ``Lowered``'s own output tree when it has only tuples,
  lists, dicts and None). ``args_info``/``out_info`` carry each argument's
  and result's ``name``: ``jax.arg_info``, else the argument's location name
  (``loc("x")``, what JAX writes), else ``args[i]``; ``jax.result_info``,
  else ``result[i]``.
* an export: its ``in_tree`` (``compiled(*args, **kwargs)`` as the exported
  function was called) and ``out_tree``; names are the export's paths
  (``args[0]['w']``, ``result[1]``).

Shardings written on ``@main``'s arguments (``mhlo.sharding`` or Shardy's
``sdy.sharding``) and ``mhlo.num_partitions`` are honoured: the program runs
SPMD on that many devices, partitioned by Shardy when the module declares an
``sdy.mesh`` and by GSPMD otherwise. Dimensions written ``?`` (and an
export's symbolic dimensions) make ``compile()`` shape-polymorphic: each call
binds the argument shapes, refines the module (``toolkit-bind-shapes``,
``toolkit-refine-shapes``, shape assertions checked) and compiles once per
shape, as ``Exported.call`` does. A platform index argument
(``jax.global_constant = "_platform_index"``, a multi-platform export) is
folded for ``platform`` (default: this process's devices' platform) by
``toolkit-platform-specialize``; a bare module with one needs ``platforms=``.

Errors name what was wrong: ``TypeError`` for an object of no accepted kind
(its type and the list of kinds), ``ValueError`` for an unreadable path,
bytes in no known format, text the parser rejects (with the parser's
messages), a module without ``@main``, argument types toolkit cannot
represent, ordered effects (tokens: call such an export with
``Exported.call``) or more partitions than devices.

Example::

    lowered = toolkit.load_module(jax.jit(model).lower(x))       # or a path, text, bytes, an Exported, ...
    compiled = lowered.compile(pipeline="toolkit-simplify, cse")
    y = compiled(np.asarray(x))
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import struct
from typing import Any, Sequence

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir

from toolkit.core import pytrees
from toolkit.core.config import enable_x64
from toolkit.core.avals import ShapedArray, ShapeDtypeStruct
from toolkit.core.program import Program, Var
from toolkit.core.shape_poly import SymbolicScope, symbolic_shape
from toolkit.export import convert as conversions
from toolkit.export import deserialize
from toolkit.export.callee_shardings import _meshes, _parse_sharding  # the sdy.sharding reader Exported.call uses
from toolkit.export.calling_convention import MainArgument, find_main, main_signature
from toolkit.export.exported import Exported
from toolkit.export.inspection import deserialize_untrusted, result_paths
from toolkit.export.runner import argument_names
from toolkit.export.shardings import ExportedNamedSharding
from toolkit.ir.context import shared_context
from toolkit.ir.serialization import BYTECODE_MAGIC, deserialize_portable_artifact, read_module
from toolkit.passes.pipeline import Pipeline, parse_pipeline
from toolkit.passes.platform_specialize import platform_index_position
from toolkit.runtime import client as runtime_client
from toolkit.shard import GSPMDSharding, hlo_sharding_from_text
from toolkit.sharding_plan import ShardingPlan
from toolkit.stages import ArgInfo, Compiled, Lowered, PolymorphicCompiled, Traced, Wrapped

ACCEPTED = ("MLIR text (str or bytes)", "MLIR bytecode", "a StableHLO portable (VHLO) artifact",
            "a path (str or os.PathLike)", "bytes of Exported.serialize()", "an ir.Module",
            "a toolkit Exported", "a JAX Exported", "a JAX Lowered (.as_text())", "a toolkit Lowered")

_DYNAMIC = ir.ShapedType.get_dynamic_size()
_ELEMENT_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "complex<f32>": np.complex64,
                   "complex<f64>": np.complex128}


@dataclasses.dataclass(frozen=True)
class NamedArgInfo(ArgInfo):
    """``args_info`` of a loaded program: ``ArgInfo`` plus the argument's name (``jax.arg_info`` or its path)."""

    name: str = ""


class ResultInfo(ShapeDtypeStruct):
    """``out_info`` of a loaded program: a ``ShapeDtypeStruct`` plus the result's name (``jax.result_info``)."""

    __slots__ = ("name",)

    def __init__(self, aval: ShapedArray, name: str):
        super().__init__(aval.shape, aval.dtype, weak_type=aval.weak_type)
        self.name = name

    def __repr__(self) -> str:
        return f"ResultInfo(name={self.name!r}, shape={self.shape}, dtype={self.dtype.name})"


@dataclasses.dataclass
class _Signature:
    """What a loaded program takes and returns, and where it runs."""

    in_avals: tuple[ShapedArray, ...]
    in_tree: pytrees.PyTreeDef
    arg_names: tuple[str, ...]
    kept: tuple[int, ...]
    out_avals: tuple[ShapedArray, ...]
    out_tree: pytrees.PyTreeDef
    result_names: tuple[str, ...]
    arg_shardings: list[Any]  # per in_aval: an HloSharding, or None (replicated / single device)
    num_partitions: int
    platforms: tuple[str, ...]


class _LoadedFunction(Wrapped):
    """The stand-in for the Python function a loaded program never had: it checks the argument count."""

    def __init__(self, name: str, in_tree: pytrees.PyTreeDef, arg_names: Sequence[str]):
        def loaded(*args: Any, **kwargs: Any) -> Any:
            raise TypeError(f"{name} was loaded from a module: it has no Python function to trace; "
                            "call its compile() result")
        loaded.__name__ = name
        super().__init__(loaded)
        self._in_tree = in_tree
        self._arg_names = tuple(arg_names)

    def _signature(self, args: tuple, kwargs: dict) -> Any:
        flat_positional = pytrees.tree_structure((tuple(range(self._in_tree.num_leaves)), {}))
        if self._in_tree == flat_positional and (kwargs or len(args) != self._in_tree.num_leaves):
            given = f"{len(args)} positional" + (f" and {len(kwargs)} keyword" if kwargs else "")
            raise TypeError(f"{self.name} takes {self._in_tree.num_leaves} positional argument(s) "
                            f"({', '.join(self._arg_names)}), got {given}")
        return super()._signature(args, kwargs)


class LoadedLowered(Lowered):
    """A :class:`~toolkit.stages.Lowered` made from a module rather than traced (see :func:`load_module`)."""

    name: str
    arg_names: tuple[str, ...]
    result_names: tuple[str, ...]
    _target_platform: str

    @property
    def args_info(self) -> Any:
        """The inputs' tree of :class:`NamedArgInfo` (abstract value, donated — never —, name)."""
        traced = self._traced
        return pytrees.tree_unflatten(traced.in_tree, [NamedArgInfo(a, False, n)
                                                       for a, n in zip(traced.flat_in_avals, self.arg_names)])

    @property
    def out_info(self) -> Any:
        """The outputs' tree of :class:`ResultInfo` (shape, dtype, name)."""
        traced = self._traced
        return pytrees.tree_unflatten(traced.out_tree, [ResultInfo(a, n) for a, n in
                                                        zip(traced.program.out_avals, self.result_names)])

    @property
    def in_avals(self) -> tuple[ShapedArray, ...]:
        """The flat inputs' abstract values (symbolic dimensions where the module has ``?`` or an export a variable)."""
        return self._traced.flat_in_avals

    def _platform_pipeline(self) -> Pipeline:
        # Fold the platform index, when the module has one, for the platform chosen at load time.
        if platform_index_position(self._module.operation) is None:
            return Pipeline()
        if self._target_platform not in self.platforms:
            raise ValueError(f"cannot compile {self.name} for {self._target_platform!r}: its platform index "
                             f"selects among {self.platforms}")
        return parse_pipeline(f"builtin.module(toolkit-platform-specialize{{platform={self._target_platform} "
                              f"platforms={','.join(self.platforms)} quiet=true}})")

    def compile(self, compiler_options: Any = None, *, pipeline: Any = None,
                device_assignment: Any = None) -> Compiled | PolymorphicCompiled:
        """As :meth:`Lowered.compile`; a program whose signature has 64-bit types is called with them.

        A loaded module's types are its own, whatever ``jax_enable_x64`` says: its
        ``f64`` arguments are not canonicalized to ``f32`` (which could only fail),
        so its calls run inside ``toolkit.enable_x64()``.
        """
        compiled = super().compile(compiler_options, pipeline=pipeline, device_assignment=device_assignment)
        avals = (*self._traced.flat_in_avals, *self._traced.program.out_avals)
        called_with_x64 = _CALLED_WITH_X64.get(type(compiled))
        if called_with_x64 is not None and any(np.dtype(a.dtype).name in _SIXTY_FOUR_BIT for a in avals):
            compiled.__class__ = called_with_x64
        return compiled

    def __repr__(self) -> str:
        return f"LoadedLowered({self.name}, in_avals={[a.str_short() for a in self.in_avals]})"


_SIXTY_FOUR_BIT = frozenset({"float64", "int64", "uint64", "complex128"})


class _Compiled64(Compiled):
    """A loaded program with 64-bit types in its signature: called with x64 on (see ``LoadedLowered.compile``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with enable_x64():
            return super().__call__(*args, **kwargs)


class _PolymorphicCompiled64(PolymorphicCompiled):
    """The shape-polymorphic counterpart of :class:`_Compiled64`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        with enable_x64():
            return super().__call__(*args, **kwargs)


_CALLED_WITH_X64: dict[type, type] = {Compiled: _Compiled64, PolymorphicCompiled: _PolymorphicCompiled64,
                                      _Compiled64: _Compiled64, _PolymorphicCompiled64: _PolymorphicCompiled64}


# --- reading the source -----------------------------------------------------------------------------------------


def load_module(source: Any, *, name: str | None = None, platform: str | None = None,
                platforms: Sequence[str] | None = None) -> Lowered:
    """``source`` — a module in any form, an export, or a JAX stage — as a ``Lowered`` (see the module docstring).

    ``name`` names the program in messages and in the ``Compiled`` (default:
    the module's or export's name, the file name, or ``"module"``).
    ``platform``: which branch of a multi-platform module to keep (default: the
    platform of this process's devices). ``platforms``: the platform list a
    bare module's platform index argument selects among (exports carry theirs).

    Raises ``TypeError`` for an object of no accepted kind and ``ValueError``
    for a source that cannot be read or run (what was wrong, in the message).
    """
    if isinstance(source, Lowered):
        return source
    if isinstance(source, Exported):
        return _from_exported(source, name, platform)
    if isinstance(source, ir.Module):
        # A copy in toolkit's context: the caller's module (and its context, maybe JAX's) stays untouched.
        buffer = io.BytesIO()
        source.operation.write_bytecode(buffer)
        with shared_context() as context:
            module = ir.Module.parse(buffer.getvalue(), context)
        return _from_module(module, name, platform, platforms)
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = os.fspath(source)
        try:
            with open(path, "rb") as file:
                data = file.read()
        except OSError as error:
            raise ValueError(f"cannot read {path!r}: {error.strerror or error}") from None
        stem = os.path.splitext(os.path.basename(path))[0]
        return _from_bytes(data, name or stem, platform, platforms, where=path)
    if isinstance(source, (bytes, bytearray, memoryview)):
        return _from_bytes(bytes(source), name, platform, platforms, where="the bytes given")
    if isinstance(source, str):
        return _from_module(_parse(source, "the text given"), name, platform, platforms)
    if _is_jax_exported(source):
        return _from_jax_exported(source, name, platform)
    if callable(getattr(source, "as_text", None)):
        if callable(getattr(source, "runtime_executable", None)):
            # A JAX Compiled prints optimized HLO, not StableHLO: the module to load is its Lowered's.
            raise TypeError(f"load_module cannot load a {type(source).__name__} (an XLA executable: its as_text() "
                            "is optimized HLO); pass the Lowered it was compiled from (jax.jit(f).lower(...))")
        return _from_jax_lowered(source, name, platform, platforms)
    raise TypeError(f"load_module cannot load an object of type {type(source).__module__}.{type(source).__qualname__}; "
                    f"it accepts {', '.join(ACCEPTED)}")


def _looks_like_path(text: str) -> bool:
    # A module's text has a brace (module {...}, func.func @main(...) {...}); a path has neither braces nor newlines.
    return "\n" not in text and "{" not in text and bool(text.strip())


def _is_jax_exported(source: Any) -> bool:
    return all(hasattr(source, a) for a in ("mlir_module_serialized", "in_avals", "in_tree", "platforms")) \
        and callable(getattr(source, "serialize", None))


def _looks_like_serialized_export(data: bytes) -> bool:
    """A flatbuffer starts with a small aligned root offset; MLIR text and bytecode never do."""
    if len(data) < 12 or len(data) % 4 or data.startswith(BYTECODE_MAGIC):
        return False
    root = struct.unpack_from("<I", data, 0)[0]
    return 4 <= root < len(data) and root % 4 == 0


def _from_bytes(data: bytes, name: str | None, platform: str | None, platforms: Sequence[str] | None, *,
                where: str) -> Lowered:
    if _looks_like_serialized_export(data):
        try:
            exported = deserialize_untrusted(data)
        except ValueError:
            exported = None  # not an export after all: read it as a module below
        if exported is not None:
            return _from_exported(exported, name, platform)
    return _from_module(_parse(data, where), name, platform, platforms)


def _parse(data: bytes | str, where: str) -> ir.Module:
    """The module in ``data`` (text, bytecode or VHLO; binary read out of process first), in toolkit's context."""
    context = shared_context()
    errors: list[str] = []

    def collect(diagnostic: ir.Diagnostic) -> bool:
        # The parser reports through diagnostics; its exception says only "Unable to parse module assembly".
        if diagnostic.severity == ir.DiagnosticSeverity.ERROR:
            errors.append(f"{diagnostic.location}: {diagnostic.message}")
        return True

    handler = context.attach_diagnostic_handler(collect)
    try:
        return read_module(data, context, untrusted=True)
    except ir.MLIRError as error:
        messages = errors or [f"{d.location}: {d.message}" for d in error.error_diagnostics] or [str(error)]
        raise ValueError(f"cannot parse {where} as MLIR: " + "; ".join(messages)) from None
    except ValueError as error:
        raise ValueError(f"cannot read {where}: {error}") from None
    finally:
        handler.detach()


def _from_jax_exported(source: Any, name: str | None, platform: str | None) -> Lowered:
    try:
        # A live object of this process (not bytes from elsewhere): read in-process, no probe.
        exported = deserialize(bytes(source.serialize()))
    except Exception:  # jax.export cannot serialize its tree (a custom pytree node not registered for it)
        # Its module, flat: the arguments are @main's, without the tree.
        module = _parse(bytes(source.mlir_module_serialized), "the JAX Exported's module")
        return _from_module(module, name or str(source.fun_name), platform, tuple(source.platforms))
    return _from_exported(exported, name, platform)


def _from_jax_lowered(source: Any, name: str | None, platform: str | None,
                      platforms: Sequence[str] | None) -> LoadedLowered:
    try:
        text = source.as_text(debug_info=True)  # argument locations carry JAX's argument names
    except TypeError:
        text = source.as_text()
    if not isinstance(text, str):
        raise TypeError(f"load_module: {type(source).__name__}.as_text() returned {type(text).__name__}, not "
                        "MLIR text")
    lowered = _from_module(_parse(text, f"{type(source).__name__}.as_text()"), name, platform, platforms)
    out_tree = _converted_tree(getattr(source, "out_tree", None), len(lowered.result_names))
    if out_tree is not None:
        lowered._traced.out_tree = out_tree
    return lowered


def _converted_tree(foreign: Any, count: int) -> pytrees.PyTreeDef | None:
    """toolkit's tree for a foreign (JAX) tree of ``count`` leaves, when it is made of tuples, lists, dicts and None."""
    try:
        example = foreign.unflatten(list(range(count)))
    except Exception:  # no tree, or not of this many leaves
        return None
    leaves, tree = pytrees.tree_flatten(example)
    return tree if leaves == list(range(count)) else None


# --- building the Lowered -----------------------------------------------------------------------------------------


def _from_module(module: ir.Module, name: str | None, platform: str | None,
                 platforms: Sequence[str] | None) -> LoadedLowered:
    try:
        main = find_main(module)
    except ValueError:
        functions = [f"@{ir.StringAttr(op.attributes['sym_name']).value}" for op in module.body.operations
                     if op.operation.name == "func.func"]
        raise ValueError("the module has no @main function to load" +
                         (f" (it defines {', '.join(functions)})" if functions else " (it defines no function)")
                         ) from None
    with module.context:
        classified = main_signature(module)
    name = name or _module_name(module)
    block = main.regions[0].blocks[0]
    arg_attrs = _dict_attrs(main, "arg_attrs", len(block.arguments))
    scope = SymbolicScope()
    in_avals: list[ShapedArray] = []
    arg_names: list[str] = []
    sharding_texts: list[str | None] = []
    has_index = False
    for i, (argument, value, attrs) in enumerate(zip(classified.arguments, block.arguments, arg_attrs)):
        if argument.kind == "platform_index":
            has_index = True
            continue
        if argument.kind != "array":
            raise ValueError(_unsupported_argument(name, i, argument))
        arg_name = _arg_name(attrs, value, len(in_avals))
        in_avals.append(_aval(value.type, f"{name} argument {arg_name}", scope, f"d{len(in_avals)}_"))
        arg_names.append(arg_name)
        sharding_texts.append(argument.sharding)
    results = list(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value).results)
    res_attrs = _dict_attrs(main, "res_attrs", len(results))
    out_avals: list[ShapedArray] = []
    result_names: list[str] = []
    for i, (result_type, attrs) in enumerate(zip(results, res_attrs)):
        if "token" in str(result_type):
            raise ValueError(f"{name}: @main returns a token (result {i}): modules with ordered effects are not "
                             "loaded; call such an export with Exported.call")
        info = attrs.get("jax.result_info")
        result_name = info.value if isinstance(info, ir.StringAttr) and info.value else f"result[{i}]"
        out_avals.append(_aval(result_type, f"{name} result {result_name}", scope, f"r{i}_"))
        result_names.append(result_name)
    if has_index:
        if platforms is None:
            raise ValueError(f"{name}: @main takes a platform index (jax.global_constant = \"_platform_index\"); "
                             "give the platforms it selects among, load_module(..., platforms=('cpu', 'cuda'))")
        platforms = tuple(platforms)
    num_partitions = _module_int(module, "mhlo.num_partitions", 1)
    replicas = _module_int(module, "mhlo.num_replicas", 1)
    if replicas != 1:
        raise ValueError(f"{name}: mhlo.num_replicas = {replicas}: only one replica (SPMD partitions) is supported")
    shardings = _hlo_shardings(module, sharding_texts, in_avals, num_partitions, name)
    n = len(in_avals)
    in_tree = pytrees.tree_structure((tuple(range(n)), {}))
    out_tree = pytrees.tree_structure(0 if len(out_avals) == 1 else tuple(range(len(out_avals))))
    signature = _Signature(tuple(in_avals), in_tree, tuple(arg_names), tuple(range(n)), tuple(out_avals), out_tree,
                           tuple(result_names), shardings, num_partitions, tuple(platforms or ()))
    return _lowered(module, name, signature, platform)


def _from_exported(exported: Exported, name: str | None, platform: str | None) -> Lowered:
    name = name or exported.fun_name
    if exported.calling_convention_version < conversions.FIRST_VERSION_WITH_EFFECTS:
        exported = conversions.convert_calling_convention(exported, conversions.FIRST_VERSION_WITH_EFFECTS)
    if exported.ordered_effects:
        raise ValueError(f"{name}: the export has ordered effects ({', '.join(map(str, exported.ordered_effects))}); "
                         "modules taking tokens are not loaded: call it with Exported.call")
    with shared_context() as context:
        module = deserialize_portable_artifact(exported.mlir_module_serialized, context)
    signature = _Signature(
        tuple(exported.in_avals), exported.in_tree, tuple(argument_names(exported)), exported.module_kept_var_idx,
        tuple(exported.out_avals), exported.out_tree, tuple(result_paths(exported)),
        list(exported._hlo_shardings("in")), exported.nr_devices,
        tuple(exported.platforms))
    return _lowered(module, name, signature, platform)


def _lowered(module: ir.Module, name: str, sig: _Signature, platform: str | None) -> LoadedLowered:
    devices = runtime_client.devices()
    if sig.num_partitions > len(devices):
        raise ValueError(f"{name} is partitioned over {sig.num_partitions} devices, but this process has "
                         f"{len(devices)}; start it with TOOLKIT_NUM_CPU_DEVICES={sig.num_partitions}")
    devices = devices[:sig.num_partitions]
    arg_shardings = [None if h is None or sig.num_partitions == 1 else GSPMDSharding(tuple(devices), h)
                     for h in sig.arg_shardings]
    plan = ShardingPlan(devices, arg_shardings, None, sig.out_tree, [sig.num_partitions > 1])
    plan.partitioner = "shardy" if _has_sdy_mesh(module) else "gspmd"
    # Arguments without a sharding are the partitioner's to choose: Compiled lays them out as the executable says.
    plan.inputs_from_executable = True  # type: ignore[attr-defined]
    wrapped = _LoadedFunction(name, sig.in_tree, sig.arg_names)
    program = Program([], [], [Var(a) for a in sig.in_avals], [Var(a) for a in sig.out_avals], [])
    traced = Traced(wrapped, program, sig.in_tree, sig.out_tree, sig.in_avals, (False,) * len(sig.in_avals),
                    sig.arg_names)
    lowered = LoadedLowered(traced, module, sig.kept, plan, sig.platforms)
    lowered.name, lowered.arg_names, lowered.result_names = name, sig.arg_names, sig.result_names
    lowered._target_platform = platform or plan.platform
    return lowered


# --- reading @main ------------------------------------------------------------------------------------------------


def _module_name(module: ir.Module) -> str:
    attrs = module.operation.attributes
    return ir.StringAttr(attrs["sym_name"]).value if "sym_name" in attrs else "module"


def _module_int(module: ir.Module, attribute: str, default: int) -> int:
    attrs = module.operation.attributes
    return int(ir.IntegerAttr(attrs[attribute]).value) if attribute in attrs else default


def _dict_attrs(main: Any, key: str, count: int) -> list[dict[str, ir.Attribute]]:
    if key not in main.attributes:
        return [{} for _ in range(count)]
    return [{named.name: named.attr for named in ir.DictAttr(a)} for a in ir.ArrayAttr(main.attributes[key])]


def _unsupported_argument(name: str, index: int, argument: MainArgument) -> str:
    if argument.kind == "token":
        return (f"{name}: @main argument {index} is a token: modules with ordered effects are not loaded; call such "
                "an export with Exported.call")
    return (f"{name}: @main argument {index} is the dimension variable {argument.name!r} (calling convention < 9); "
            "convert it with `toolkit export convert --calling-convention 9` or load the serialized export")


_NAME_LOCATION = re.compile(r'^loc\("((?:[^"\\]|\\.)+)"[()]')  # a name location, not a file's "f.mlir":1:2


def _arg_name(attrs: dict[str, ir.Attribute], value: ir.Value, position: int) -> str:
    """``jax.arg_info``, else the argument's location name (JAX writes ``loc("x")``), else ``args[i]``."""
    info = attrs.get("jax.arg_info")
    if isinstance(info, ir.StringAttr) and info.value:
        return info.value
    match = _NAME_LOCATION.match(str(value.location))
    return match.group(1) if match else f"args[{position}]"


def _aval(mlir_type: ir.Type, what: str, scope: SymbolicScope, prefix: str) -> ShapedArray:
    if not isinstance(mlir_type, ir.RankedTensorType):
        raise ValueError(f"{what} has type {mlir_type}: only ranked tensors can be loaded")
    dtype = _dtype(mlir_type.element_type, what)
    shape: list[Any] = []
    for axis, size in enumerate(mlir_type.shape):
        if size == _DYNAMIC:
            shape.append(symbolic_shape(f"{prefix}{axis}", scope=scope)[0])
        else:
            shape.append(size)
    return ShapedArray(tuple(shape), dtype)


def _dtype(element_type: ir.Type, what: str) -> np.dtype:
    text = str(element_type)
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            return np.dtype(f"{'u' if element_type.is_unsigned else ''}int{width}")
        if width in (2, 4) and hasattr(ml_dtypes, f"int{width}"):
            return np.dtype(getattr(ml_dtypes, f"{'u' if element_type.is_unsigned else ''}int{width}"))
    elif text in _ELEMENT_DTYPES:
        return np.dtype(_ELEMENT_DTYPES[text])
    else:
        named = {"bf16": "bfloat16", "f8E4M3FN": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
                 "f8E4M3FNUZ": "float8_e4m3fnuz", "f8E5M2FNUZ": "float8_e5m2fnuz",
                 "f8E4M3B11FNUZ": "float8_e4m3b11fnuz", "f8E4M3": "float8_e4m3", "f8E3M4": "float8_e3m4"}.get(text)
        if named is not None and hasattr(ml_dtypes, named):
            return np.dtype(getattr(ml_dtypes, named))
    raise ValueError(f"{what} has element type {text}, which toolkit has no array dtype for")


# --- shardings ----------------------------------------------------------------------------------------------------


def _has_sdy_mesh(module: ir.Module) -> bool:
    return any(op.operation.name == "sdy.mesh" for op in module.body.operations)


def _hlo_shardings(module: ir.Module, texts: Sequence[str | None], avals: Sequence[ShapedArray],
                   num_partitions: int, name: str) -> list[Any]:
    """Per argument: the HloSharding its ``mhlo.sharding``/``sdy.sharding`` text means, or None."""
    if num_partitions == 1:
        return [None] * len(texts)
    meshes = _meshes(module) if _has_sdy_mesh(module) else {}
    shardings: list[Any] = []
    for text, aval in zip(texts, avals):
        if text is None:
            shardings.append(None)
            continue
        try:
            if text.startswith("#sdy.sharding"):
                mesh, dims = _parse_sharding(text, meshes)
                shardings.append(ExportedNamedSharding(mesh, tuple(dims)).to_hlo_sharding(aval.ndim))
            else:
                shardings.append(hlo_sharding_from_text(text))
        except (ValueError, NotImplementedError) as error:
            raise ValueError(f"{name}: cannot read the sharding {text!r}: {error}") from None
    return shardings
