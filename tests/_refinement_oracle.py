"""jaxlib's C++ shape refinement as a test oracle, and what tests compare against it.

Shared by the refinement tests (``tests/passes``) and the JAX corpus worker
(``tests/export/_poly_harness_worker.py``): bind ``@main``'s argument types,
refine with jaxlib's private ``refine_polymorphic_shapes`` (what
``jax.export`` runs), read ``@main``'s signature, and list what a module still
has that a static one must not. Call inside an MLIR context.
"""

from __future__ import annotations

import io

from jaxlib import _jax
from jaxlib.mlir import ir, passmanager

#: Ops whose result shape comes from an operand (dynamic_slice/dynamic_update_slice are static-shaped).
DYNAMIC_SHAPE_OPS = frozenset(f"stablehlo.{name}" for name in (
    "dynamic_broadcast_in_dim", "dynamic_reshape", "dynamic_iota", "dynamic_pad", "dynamic_gather",
    "dynamic_conv", "real_dynamic_slice"))


def bind_arguments(text: str, types: list[str]) -> ir.Module:
    """``text`` parsed, ``@main``'s last ``len(types)`` arguments given ``types`` (leading tokens and
    platform index kept) by StableHLO's C++ ``stablehlo-refine-arguments``."""
    module = ir.Module.parse(text)
    main = next(op for op in module.body.operations
                if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main")
    arguments = main.regions[0].blocks[0].arguments
    leading = [str(arguments[i].type) for i in range(len(arguments) - len(types))]
    passmanager.PassManager.parse(
        "builtin.module(stablehlo-refine-arguments{types=" + ",".join(leading + types) + "})").run(module.operation)
    return module


def jaxlib_refine(module: ir.Module) -> ir.Module:
    """``module`` (with static ``@main`` arguments) refined by jaxlib's C++ entry point, as jax.export does."""
    buffer = io.BytesIO()
    module.operation.write_bytecode(buffer)
    return ir.Module.parse(_jax.mlir.refine_polymorphic_shapes(
        buffer.getvalue(), enable_shape_assertions=True, validate_static_shapes=True))


def main_signature(module: ir.Module) -> str:
    for op in module.body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main":
            return str(ir.TypeAttr(op.operation.attributes["function_type"]).value)
    raise AssertionError("no @main")


def dynamic_leftovers(module: ir.Module) -> list[str]:
    """What keeps ``module`` from being static: dynamic result types, dynamic op forms, shape assertions,
    JAX's ``stablehlo.dynamic_*`` custom calls and custom calls that keep shape operands."""
    problems = []

    def visit(op):
        for result in op.results:
            if isinstance(result.type, ir.ShapedType) and not (
                    isinstance(result.type, ir.RankedTensorType) and result.type.has_static_shape):
                problems.append(f"dynamic result of {op.name}")
        if op.name in DYNAMIC_SHAPE_OPS:
            problems.append(op.name)
        if op.name == "stablehlo.custom_call":
            target = ir.StringAttr(op.attributes["call_target_name"]).value
            if target.startswith("stablehlo.dynamic_") or target == "shape_assertion":
                problems.append(f"custom_call @{target}")
            if "indices_of_shape_operands" in op.attributes:
                problems.append(f"custom_call @{target} keeps its shape operands")
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return problems
