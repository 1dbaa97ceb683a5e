"""Seeded, dtype-aware arguments for a module's ``@main`` (what :mod:`.numerics` runs it on).

* Floats are standard-normal draws rounded to the element type (bf16, f16 and
  the float8/6/4 types through ``ml_dtypes``); complex numbers have normal
  real and imaginary parts; integers are small (``[-8, 8]``, clipped to the
  type's range; unsigned ``[0, 8]``); booleans are fair coin flips.
* An argument that reaches the start index of a ``gather``,
  ``dynamic_slice``, ``dynamic_update_slice`` or the index operand of a
  ``scatter`` — directly or through ``convert``, ``reshape``, ``broadcast``,
  ``concatenate``, ``slice``, ``transpose``, ``select``, ``clamp``,
  ``add``/``subtract`` (JAX's negative-index wrap) and ``func.call`` — gets
  values in ``[0, bound)``, ``bound`` being the number of valid start
  positions of the dimension it indexes (the smallest over every use).
  Random indices would otherwise be clamped or masked to the same few values
  and hide what a pass did to the indexing.
* A shape-polymorphic ``@main`` (dynamic dimensions in its arguments) is
  bound to small static sizes first: ``toolkit-bind-shapes`` then
  ``toolkit-refine-shapes`` (see :func:`bind_static_shapes`).

Example::

    inputs = random_inputs(module, seed=0)   # one numpy array per argument of @main
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.ir.context import shared_context
from toolkit.ir.serialization import read_module
from toolkit.passes.pass_base import PipelineError
from toolkit.passes.pipeline import run_pipeline

#: Sizes tried, in order, for the dynamic dimensions of a polymorphic @main (the same size for all).
DYNAMIC_SIZES: tuple[int, ...] = (4, 2, 3, 8, 1)

_INTEGER_LIMIT = 8  # integers are drawn from [-8, 8] (safe for shifts, divisions and small loop counts)

_NAMED_FLOATS: dict[str, Any] = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
                                 "bf16": ml_dtypes.bfloat16}


class UnsupportedModuleError(ValueError):
    """The module cannot be run by :func:`~toolkit.passes.numerics.run_main` (no @main, tokens, ...)."""


def as_module(module: ir.Module | str | bytes) -> ir.Module:
    """``module`` itself, or the module parsed from MLIR text, bytecode or a portable artifact.

    Raises ``TypeError`` for anything else and ``ValueError`` for unreadable data.
    """
    if isinstance(module, ir.Module):
        return module
    if isinstance(module, (str, bytes, bytearray)):
        try:
            return read_module(module if isinstance(module, str) else bytes(module), shared_context())
        except ir.MLIRError as error:
            raise ValueError(f"cannot parse the module: {error}") from None
    raise TypeError(f"expected an ir.Module, MLIR text or bytecode, got {type(module).__name__}")


def main_function(module: ir.Module) -> ir.Operation:
    """The ``func.func @main`` of ``module``; raises :class:`UnsupportedModuleError` if there is none."""
    names = []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        name = ir.StringAttr(op.operation.attributes["sym_name"]).value
        if name == "main":
            return op.operation
        names.append("@" + name)
    raise UnsupportedModuleError(
        f"the module has no func.func @main to run (functions: {', '.join(names) or 'none'})")


def element_dtype(element_type: ir.Type) -> np.dtype:
    """The numpy dtype (``ml_dtypes`` for bf16, f8, int4, ...) holding ``element_type``.

    Raises :class:`UnsupportedModuleError` for element types with no numpy form.
    """
    if isinstance(element_type, ir.IntegerType):
        width = element_type.width
        if width == 1:
            return np.dtype(np.bool_)
        prefix = "u" if element_type.is_unsigned else ""
        if width in (8, 16, 32, 64):
            return np.dtype(f"{prefix}int{width}")
        if width in (2, 4):
            return np.dtype(getattr(ml_dtypes, f"{prefix}int{width}"))
    elif isinstance(element_type, ir.ComplexType):
        inner = element_dtype(element_type.element_type)
        if inner == np.float32:
            return np.dtype(np.complex64)
        if inner == np.float64:
            return np.dtype(np.complex128)
    else:
        text = str(element_type)
        if text in _NAMED_FLOATS:
            return np.dtype(_NAMED_FLOATS[text])
        # f8E4M3FN -> float8_e4m3fn, f4E2M1FN -> float4_e2m1fn, f8E8M0FNU -> float8_e8m0fnu.
        if text.startswith("f") and "E" in text:
            bits, _, rest = text[1:].partition("E")
            named = getattr(ml_dtypes, f"float{bits}_e{rest.lower()}", None)
            if named is not None:
                return np.dtype(named)
    raise UnsupportedModuleError(f"element type {element_type} has no numpy form")


def argument_types(main: ir.Operation) -> list[ir.Type]:
    """The argument types of ``@main``, checked to be tensors with a numpy element type.

    Raises :class:`UnsupportedModuleError` naming the first token, tuple or
    otherwise unsupported argument.
    """
    function_type = ir.TypeAttr(main.attributes["function_type"]).value
    types = list(function_type.inputs)
    for index, type_ in enumerate(types):
        if not isinstance(type_, ir.RankedTensorType):
            raise UnsupportedModuleError(
                f"argument {index} of @main has type {type_}: only ranked tensors can be given random values "
                "(tokens, tuples and unranked tensors are not supported)")
        try:
            element_dtype(type_.element_type)
        except UnsupportedModuleError as error:
            raise UnsupportedModuleError(f"argument {index} of @main ({type_}): {error}") from None
    return types


def is_polymorphic(module: ir.Module) -> bool:
    """Whether an argument of ``@main`` has a dynamic dimension."""
    return any(not t.has_static_shape for t in argument_types(main_function(module)))


def bind_static_shapes(module: ir.Module, shapes: Sequence[Sequence[int]] | None = None) -> ir.Module:
    """A static copy of a shape-polymorphic ``module`` (``module`` is left alone).

    ``shapes``: one shape per argument of @main (e.g. the shapes of the inputs
    to run). Without it every dynamic dimension gets the same size, the first
    of :data:`DYNAMIC_SIZES` that shape refinement accepts (its shape
    assertions hold). Raises :class:`UnsupportedModuleError` when none does.
    """
    main = main_function(module)
    types = argument_types(main)
    if shapes is not None and len(shapes) != len(types):
        raise ValueError(f"@main takes {len(types)} arguments, got {len(shapes)} shapes")
    candidates: list[list[list[int]]] = []
    if shapes is not None:
        candidates.append([list(s) for s in shapes])
    else:
        for size in DYNAMIC_SIZES:
            candidates.append([[d if d != ir.ShapedType.get_dynamic_size() else size for d in t.shape]
                               for t in types])
    text = module.operation.get_asm(enable_debug_info=True)
    errors = []
    for candidate in candidates:
        with module.context, ir.Location.unknown():
            bound = ir.Module.parse(text)
            refined = ",".join(str(ir.RankedTensorType.get([int(d) for d in shape], t.element_type))
                               for shape, t in zip(candidate, types))
        try:
            run_pipeline(bound, f"toolkit-bind-shapes{{types={refined}}}, toolkit-refine-shapes")
        except PipelineError as error:
            errors.append(f"  {refined}: {str(error).splitlines()[0]}")
            continue
        return bound
    hint = "" if shapes is not None else "\npass inputs=[...] of the shapes to use"
    raise UnsupportedModuleError(
        "cannot bind the shape-polymorphic @main to static shapes; tried\n" + "\n".join(errors) + hint)


# --------------------------------------------------------------------------
# Which arguments are indices
# --------------------------------------------------------------------------
# Ops through which an index value keeps its meaning (operand numbers that carry it; None: all).
_CARRIERS: dict[str, tuple[int, ...] | None] = {
    "stablehlo.convert": None, "stablehlo.reshape": None, "stablehlo.broadcast_in_dim": None,
    "stablehlo.broadcast": None, "stablehlo.concatenate": None, "stablehlo.slice": None,
    "stablehlo.transpose": None, "stablehlo.select": (1, 2), "stablehlo.clamp": (1,),
    "stablehlo.add": None, "stablehlo.subtract": (0,), "stablehlo.optimization_barrier": None,
}
# Carriers followed only where they compute integers.
_INTEGER_ONLY = {"stablehlo.add", "stablehlo.subtract", "stablehlo.select", "stablehlo.clamp"}
# Custom calls that pass their operand through unchanged (sharding annotations, shape refinement).
_CARRYING_CUSTOM_CALLS = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                          "stablehlo.shape_refinement_operand_wrapper"}
# Ops whose region's block arguments are their operands (shard_map bodies).
_REGION_ARGUMENT_OPS = {"sdy.manual_computation"}


def _shape(value: ir.Value) -> list[int]:
    type_ = value.type
    return list(type_.shape) if isinstance(type_, ir.RankedTensorType) and type_.has_static_shape else []


def _dense_i64(op: ir.Operation, name: str) -> list[int]:
    return [int(v) for v in ir.DenseI64ArrayAttr(op.attributes[name])]


def _sink_bound(op: ir.Operation, operand: int) -> int | None:
    """How many start positions the index at ``operand`` of ``op`` may take (None: not an index)."""
    name = op.name
    operands = list(op.operands)
    if name == "stablehlo.dynamic_slice" and operand >= 1:
        dim, sizes = operand - 1, _dense_i64(op, "slice_sizes")
        shape = _shape(operands[0])
        return shape[dim] - sizes[dim] + 1 if dim < len(shape) else None
    if name == "stablehlo.dynamic_update_slice" and operand >= 2:
        dim = operand - 2
        shape, update = _shape(operands[0]), _shape(operands[1])
        return shape[dim] - update[dim] + 1 if dim < len(shape) and dim < len(update) else None
    if name == "stablehlo.gather" and operand == 1:
        numbers = stablehlo.GatherDimensionNumbers(op.attributes["dimension_numbers"])
        shape, sizes = _shape(operands[0]), _dense_i64(op, "slice_sizes")
        bounds = [shape[d] - sizes[d] + 1 for d in numbers.start_index_map if d < len(shape)]
        return min(bounds) if bounds else None
    if name == "stablehlo.scatter":
        count = len(op.results)
        if operand != count:
            return None
        numbers = stablehlo.ScatterDimensionNumbers(op.attributes["scatter_dimension_numbers"])
        shape, updates = _shape(operands[0]), _shape(operands[count + 1])
        # Operand dims that are neither inserted nor batching take their window size from the updates.
        window = [1] * len(shape)
        windowed = [d for d in range(len(shape))
                    if d not in numbers.inserted_window_dims and d not in numbers.input_batching_dims]
        for dim, update_dim in zip(windowed, numbers.update_window_dims):
            if update_dim < len(updates):
                window[dim] = updates[update_dim]
        bounds = [shape[d] - window[d] + 1 for d in numbers.scattered_dims_to_operand_dims if d < len(shape)]
        return min(bounds) if bounds else None
    return None


def _callee(module: ir.Module, call: ir.Operation) -> ir.Operation | None:
    callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == callee:
            return op.operation
    return None


def _carried_to(module: ir.Module, owner: ir.Operation, operand: int) -> list[ir.Value]:
    """The values that carry operand ``operand`` of ``owner`` onwards (results, or a callee's argument)."""
    if owner.name == "func.call":
        callee = _callee(module, owner)
        if callee is None or not callee.regions[0].blocks:
            return []
        arguments = list(callee.regions[0].blocks[0].arguments)
        return [arguments[operand]] if operand < len(arguments) else []
    if owner.name in _REGION_ARGUMENT_OPS:
        arguments = list(owner.regions[0].blocks[0].arguments) if owner.regions[0].blocks else []
        return [arguments[operand]] if operand < len(arguments) else []
    if owner.name == "stablehlo.custom_call":
        target = ir.StringAttr(owner.attributes["call_target_name"]).value
        return list(owner.results) if target in _CARRYING_CUSTOM_CALLS else []
    carried = _CARRIERS.get(owner.name, ())
    if owner.name in _INTEGER_ONLY and not all(_is_integer(r) for r in owner.results):
        return []  # float arithmetic (residual streams, biases) does not compute indices: stop early
    return list(owner.results) if carried is None or operand in carried else []


def _is_integer(value: ir.Value) -> bool:
    return isinstance(getattr(value.type, "element_type", None), ir.IntegerType)


def index_bounds(module: ir.Module) -> dict[int, int]:
    """``{argument number: bound}`` for each argument of @main that reaches an index operand.

    The argument's values should lie in ``[0, bound)`` (see the module docstring).
    """
    main = main_function(module)
    bounds: dict[int, int] = {}
    for number, argument in enumerate(main.regions[0].blocks[0].arguments):
        best: int | None = None
        work: list[ir.Value] = [argument]
        seen: set[ir.Value] = set()
        while work:
            value = work.pop()
            if value in seen:
                continue
            seen.add(value)
            for use in value.uses:
                owner = use.owner
                owner = owner.operation if hasattr(owner, "operation") else owner
                operand = use.operand_number
                bound = _sink_bound(owner, operand)
                if bound is not None:
                    best = bound if best is None else min(best, bound)
                    continue
                work.extend(_carried_to(module, owner, operand))
        if best is not None:
            bounds[number] = max(best, 1)
    return bounds


# --------------------------------------------------------------------------
# Drawing values
# --------------------------------------------------------------------------
def _draw(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, bound: int | None) -> np.ndarray:
    if bound is not None and dtype != np.bool_:
        return rng.integers(0, bound, size=shape).astype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu" or (dtype.kind == "V" and "int" in dtype.name):
        info = ml_dtypes.iinfo(dtype)
        low, high = max(-_INTEGER_LIMIT, int(info.min)), min(_INTEGER_LIMIT, int(info.max))
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    values = rng.standard_normal(shape)
    info = ml_dtypes.finfo(dtype)
    if float(info.min) >= 0:  # unsigned floats (float8_e8m0fnu): powers of two near 1
        values = np.abs(values) + 0.5
    values = np.clip(values, float(info.min) / 2, float(info.max) / 2)
    return values.astype(dtype)


def random_inputs(module: ir.Module | str | bytes, *, seed: int = 0) -> list[np.ndarray]:
    """One seeded random numpy array per argument of ``module``'s ``@main`` (see the module docstring).

    The same ``(module, seed)`` always gives the same arrays. A polymorphic
    @main is bound first (:func:`bind_static_shapes`) and the arrays have its
    static shapes. Raises :class:`UnsupportedModuleError` for a module
    without @main or with token / unsupported argument types.
    """
    parsed = as_module(module)
    if is_polymorphic(parsed):
        parsed = bind_static_shapes(parsed)
    main = main_function(parsed)
    bounds = index_bounds(parsed)
    rng = np.random.default_rng(seed)
    inputs = []
    for number, type_ in enumerate(argument_types(main)):
        inputs.append(np.asarray(_draw(rng, tuple(type_.shape), element_dtype(type_.element_type),
                                       bounds.get(number))))
    return inputs
