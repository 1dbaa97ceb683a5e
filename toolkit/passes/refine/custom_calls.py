"""Custom calls under shape refinement: shape operands and JAX's ``stablehlo.dynamic_*`` targets.

Two dynamic forms of ``stablehlo.custom_call`` appear in ``jax.export`` modules:

* **Shape operands** (``indices_of_shape_operands``): a custom call with
  dynamic results gets one extra 1-D integer operand per result holding its
  shape (JAX's ``mlir.custom_call(..., result_shapes=...)``: LAPACK ``*_ffi``
  kernels, ``ApproxTopK``, ...). The results are refined from those operands;
  in ``mode=jax``, once every result is static the shape operands, their
  ``operand_layouts`` entries and the attribute are dropped — the kernel knows
  nothing of them (XLA would fail with "Wrong number of arguments") — as
  StableHLO's canonicalize-dynamism does. ``output_operand_aliases`` are
  renumbered past the dropped operands.
* **JAX's dynamic targets**, ops StableHLO has no dynamic form for; each turns
  into its static op once its size operands are constants:

  | target | operands | static form |
  | --- | --- | --- |
  | ``stablehlo.dynamic_top_k`` | operand, k | ``chlo.top_k`` |
  | ``stablehlo.dynamic_rng_bit_generator`` | key, shape | ``stablehlo.rng_bit_generator`` |
  | ``stablehlo.dynamic_approx_top_k`` | operand, iota, init value, init index, k, result shapes... | ``@ApproxTopK`` (k in its config) |
  | ``stablehlo.dynamic_reduce_window`` | N inputs, N inits, window dimensions, strides, base dilations, window dilations, padding (Nx2); ``called_computations = [@reducer]`` | ``stablehlo.reduce_window`` with the reducer's body |

  These are every ``stablehlo.dynamic_*`` target JAX 0.10.2 writes (the ones
  ``jax.export`` lists as stable custom calls).

Example::

    refine_custom_call(refinement, op)   # the driver calls this for every custom_call
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from toolkit.passes.pass_base import PassFailure, record_statistic
from toolkit.passes.refine import diagnostics
from toolkit.passes.refine.dynamic_ops import i64_array
from toolkit.passes.refine.interface import Refinement
from toolkit.passes.refine.rules import ShapeError, is_static, reduce_window_shape, shape_of
from toolkit.passes.refine.types import all_static, with_shape

SHAPE_OPERANDS = "indices_of_shape_operands"
#: The target of JAX's shape assertions (checked and erased by the sweep; an undecided one fails the static check).
SHAPE_ASSERTION = "shape_assertion"
#: The target ``toolkit-bind-shapes`` wraps retyped arguments in (erased once the shape is known).
OPERAND_WRAPPER = "stablehlo.shape_refinement_operand_wrapper"


def target_of(op: ir.Operation) -> str:
    """The ``call_target_name`` of a custom call."""
    return ir.StringAttr(op.attributes["call_target_name"]).value


def refine_custom_call(refinement: Refinement, op: ir.Operation) -> None:
    """Refine a custom call's results; in ``mode=jax`` make it static where its form is known."""
    rewrite = JAX_DYNAMIC_TARGETS.get(target_of(op))
    if rewrite is not None:
        rewrite(refinement, op)
        return
    if SHAPE_OPERANDS in op.attributes:
        refine_from_shape_operands(refinement, op)
        if refinement.jax_mode:
            drop_shape_operands(refinement, op)


# -- shape operands -----------------------------------------------------------

def shape_operand_indices(op: ir.Operation) -> list[int]:
    """The operand indices listed in ``indices_of_shape_operands`` (one per result, in order)."""
    return [int(i) for i in np.array(op.attributes[SHAPE_OPERANDS]).reshape(-1)]


def refine_from_shape_operands(refinement: Refinement, op: ir.Operation) -> None:
    """Give each result (tuple elements count one by one) the shape held by its constant shape operand."""
    shapes = []
    for index in shape_operand_indices(op):
        array = refinement.constant(op.operands[index])
        shapes.append(None if array is None else [int(x) for x in np.asarray(array).reshape(-1)])
    flat_index = 0
    for result in op.results:
        result_type = result.type
        if isinstance(result_type, ir.TupleType):
            elements = []
            for i in range(result_type.num_types):
                element = result_type.get_type(i)
                shape = shapes[flat_index] if flat_index < len(shapes) else None
                flat_index += 1
                elements.append(_refined(op, element, shape) or element)
            refinement.set_type(result, ir.TupleType.get_tuple(elements))
        else:
            shape = shapes[flat_index] if flat_index < len(shapes) else None
            flat_index += 1
            if shape is not None:
                refinement.refine_value(result, shape, op)


def _refined(op: ir.Operation, type_: ir.Type, shape: list[int] | None) -> ir.Type | None:
    if shape is None:
        return None
    try:
        return with_shape(type_, shape)
    except ShapeError as error:
        raise PassFailure(f"{diagnostics.describe_op(op)}: {error}", op) from None


def drop_shape_operands(refinement: Refinement, op: ir.Operation) -> bool:
    """Rebuild ``op`` without its shape operands once every result is static; True if it did.

    As StableHLO's canonicalize-dynamism: only when each shape operand is a
    constant equal to its (ranked tensor) result's shape.
    """
    indices = shape_operand_indices(op)
    results = list(op.results)
    if len(indices) != len(results):
        return False
    for index, result in zip(indices, results):
        shape = shape_of(result.type)
        array = refinement.constant(op.operands[index])
        if not is_static(shape) or array is None or [int(x) for x in np.asarray(array).reshape(-1)] != shape:
            return False
    dropped = set(indices)
    kept = [i for i in range(len(op.operands)) if i not in dropped]
    renumbered = {old: new for new, old in enumerate(kept)}
    attributes = {}
    with op.context:
        for name in op.attributes:
            attr = op.attributes[name]
            if name == SHAPE_OPERANDS:
                continue
            if name == "operand_layouts":
                layouts = list(ir.ArrayAttr(attr))
                attr = ir.ArrayAttr.get([layout for i, layout in enumerate(layouts) if i not in dropped])
            elif name == "output_operand_aliases":
                attr = ir.ArrayAttr.get([_renumbered_alias(op, alias, renumbered) for alias in ir.ArrayAttr(attr)])
            attributes[name] = attr
        new = ir.Operation.create("stablehlo.custom_call", results=[r.type for r in results],
                                  operands=[op.operands[i] for i in kept], attributes=attributes,
                                  loc=op.location, ip=ir.InsertionPoint(op))
    _replace_results(op, new, "dropped-shape-operands")
    return True


def _renumbered_alias(op: ir.Operation, attr: ir.Attribute, renumbered: dict[int, int]) -> ir.Attribute:
    alias = stablehlo.OutputOperandAlias(attr)
    if alias.operand_index not in renumbered:
        raise PassFailure(f"{diagnostics.describe_op(op)}: output_operand_aliases refers to shape operand "
                          f"#{alias.operand_index}", op)
    if renumbered[alias.operand_index] == alias.operand_index:
        return attr
    return stablehlo.OutputOperandAlias.get(list(alias.output_tuple_indices), renumbered[alias.operand_index],
                                            list(alias.operand_tuple_indices))


def _replace_results(op: ir.Operation, new: ir.Operation, statistic: str) -> None:
    for old_result, new_result in zip(op.results, new.results):
        old_result.replace_all_uses_with(new_result)
    op.erase()
    record_statistic(statistic)


# -- JAX's stablehlo.dynamic_* targets --------------------------------------------

def _scalar(array: np.ndarray) -> int:
    return int(np.asarray(array).reshape(()))


def _last_dim_set(type_: ir.Type, size: int) -> list[int] | None:
    shape = shape_of(type_)
    return None if shape is None else shape[:-1] + [size]


def _dynamic_top_k(refinement: Refinement, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_top_k(operand, k) -> (values, indices), k along the last dimension.
    k_array = refinement.constant(op.operands[1])
    if k_array is None:
        return
    k = _scalar(k_array)
    for result in op.results:
        shape = _last_dim_set(result.type, k)
        if shape is not None:
            refinement.refine_value(result, shape, op)
    if refinement.jax_mode and all_static(op.results):
        with op.context, ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("chlo.top_k", results=[r.type for r in op.results], operands=[op.operands[0]],
                                      attributes={"k": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), k)})
        _replace_results(op, new, "static-top_k")


def _dynamic_rng_bit_generator(refinement: Refinement, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_rng_bit_generator(key, shape) {rng_algorithm} -> (new key, bits).
    shape = refinement.constant(op.operands[1])
    if shape is None:
        return
    refinement.refine_value(op.results[1], [int(d) for d in np.asarray(shape).reshape(-1)], op)
    if refinement.jax_mode and all_static(op.results):
        with op.context, ir.InsertionPoint(op), op.location:
            new = ir.Operation.create("stablehlo.rng_bit_generator", results=[r.type for r in op.results],
                                      operands=[op.operands[0]],
                                      attributes={"rng_algorithm": op.attributes["rng_algorithm"]})
        _replace_results(op, new, "static-rng_bit_generator")


def _dynamic_approx_top_k(refinement: Refinement, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_approx_top_k(operand, iota, init value, init index, k, result shapes...)
    # is refined from its shape operands, then becomes the @ApproxTopK JAX writes for a constant k: the
    # first four operands, k moved into the (dictionary) backend config as `top_k` — as jaxlib does.
    if SHAPE_OPERANDS in op.attributes:
        refine_from_shape_operands(refinement, op)
    k = refinement.constant(op.operands[4]) if len(op.operands) > 4 else None
    if k is None or not (refinement.jax_mode and all_static(op.results)):
        return
    attributes = {name: op.attributes[name] for name in op.attributes if name != SHAPE_OPERANDS}
    with op.context, ir.InsertionPoint(op), op.location:
        # JAX writes the dictionary as the discardable `mhlo.backend_config` (see mlir.custom_call).
        config_name = "backend_config" if isinstance(attributes.get("backend_config"), ir.DictAttr) \
            else "mhlo.backend_config"
        config = attributes.get(config_name)
        entries = {} if config is None else {config[i].name: config[i].attr for i in range(len(config))}
        entries["top_k"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _scalar(k))
        attributes[config_name] = ir.DictAttr.get(entries)
        attributes["call_target_name"] = ir.StringAttr.get("ApproxTopK")
        new = ir.Operation.create("stablehlo.custom_call", results=[r.type for r in op.results],
                                  operands=list(op.operands)[:4], attributes=attributes)
    _replace_results(op, new, "static-approx_top_k")


_WINDOW_OPERANDS = ("window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding")


def _dynamic_reduce_window(refinement: Refinement, op: ir.Operation) -> None:
    # custom_call @stablehlo.dynamic_reduce_window(inputs..., inits..., window_dimensions, window_strides,
    # base_dilations, window_dilations, padding) {called_computations = [@reducer]}: JAX's reduce_window
    # with a symbolic window (mlir.reduce_window). With constant window operands it is a reduce_window
    # whose body is the reducer's.
    operands = list(op.operands)
    count = len(op.results)
    if len(operands) != 2 * count + len(_WINDOW_OPERANDS):
        raise PassFailure(f"{diagnostics.describe_op(op)}: expected {2 * count + 5} operands for {count} results "
                          f"(inputs, init values and 5 window operands), got {len(operands)}", op)
    window_values = operands[2 * count:]
    arrays = [refinement.constant(v) for v in window_values]
    if any(a is None for a in arrays):
        return
    window, strides, base_dilations, window_dilations = ([int(x) for x in np.asarray(a).reshape(-1)]
                                                         for a in arrays[:4])
    padding = [[int(x) for x in row] for row in np.asarray(arrays[4]).reshape(-1, 2)]
    for result, source in zip(op.results, operands[:count]):
        shape = shape_of(source.type)
        if shape is None:
            continue
        try:
            out = reduce_window_shape(shape, window, strides, base_dilations, window_dilations, padding)
        except ShapeError as error:
            raise PassFailure(f"{diagnostics.describe_op(op)}: {error}; window operands "
                              f"{diagnostics.describe_operands(op, refinement.constant, range(2 * count, len(operands)))}",
                              op) from None
        refinement.refine_value(result, out, op)
    if not (refinement.jax_mode and all_static(op.results)):
        return
    reducer = _reducer(refinement, op)
    with op.context, op.location:
        attributes = {"window_dimensions": i64_array(window), "window_strides": i64_array(strides),
                      "base_dilations": i64_array(base_dilations), "window_dilations": i64_array(window_dilations),
                      "padding": ir.DenseElementsAttr.get(np.asarray(padding, dtype=np.int64).reshape(-1, 2))}
        new = ir.Operation.create("stablehlo.reduce_window", results=[r.type for r in op.results],
                                  operands=operands[:2 * count], attributes=attributes, regions=1,
                                  ip=ir.InsertionPoint(op))
        _inline_body(reducer, new.regions[0])
    _replace_results(op, new, "static-reduce_window")


def _reducer(refinement: Refinement, op: ir.Operation) -> ir.Operation:
    computations = ir.ArrayAttr(op.attributes["called_computations"]) if "called_computations" in op.attributes \
        else []
    names = [ir.FlatSymbolRefAttr(c).value for c in computations]
    reducer = refinement.function(names[0]) if len(names) == 1 else None
    if reducer is None or len(reducer.regions[0].blocks) != 1:
        raise PassFailure(f"{diagnostics.describe_op(op)}: called_computations must name one function with a "
                          f"body (the reducer), got {names}", op)
    return reducer


def _inline_body(function: ir.Operation, region: ir.Region) -> None:
    """Fill ``region`` with a copy of ``function``'s body, ``func.return`` becoming ``stablehlo.return``."""
    copy = function.clone()  # detached
    source = copy.regions[0].blocks[0]
    block = region.blocks.append(*[arg.type for arg in source.arguments])
    for old, new in zip(source.arguments, block.arguments):
        old.replace_all_uses_with(new)
    for inner in list(source.operations):
        block.append(inner.operation if hasattr(inner, "operation") else inner)
    terminator = list(block.operations)[-1]
    terminator = terminator.operation if hasattr(terminator, "operation") else terminator
    ir.Operation.create("stablehlo.return", operands=list(terminator.operands), loc=terminator.location,
                        ip=ir.InsertionPoint(terminator))
    terminator.erase()
    copy.erase()


#: JAX custom call target -> its refinement (and, in mode=jax, rewrite to a static op).
JAX_DYNAMIC_TARGETS: dict[str, Callable[[Refinement, ir.Operation], None]] = {
    "stablehlo.dynamic_top_k": _dynamic_top_k,
    "stablehlo.dynamic_rng_bit_generator": _dynamic_rng_bit_generator,
    "stablehlo.dynamic_approx_top_k": _dynamic_approx_top_k,
    "stablehlo.dynamic_reduce_window": _dynamic_reduce_window,
}
