# RUN: %PYTHON %s | filecheck %s
# Multi-platform lowering: a primitive with per-platform rules is lowered once
# per distinct rule under a stablehlo.case on the platform index (mapped to a
# branch number when platforms share a rule); a primitive with one rule is
# lowered once.
import numpy as np
from jaxlib.mlir.dialects import stablehlo

import toolkit
import toolkit.numpy as tnp
from toolkit.core.avals import ShapeDtypeStruct
from toolkit.core.primitive import Primitive
from toolkit.export import export
from toolkit.lowering.registry import register_lowering

p = Primitive("lit_platform_dependent", shape_rule=lambda x: x)


@register_lowering(p, platforms=["cpu"])
def _cpu(ctx, x):
    return stablehlo.add(x, x)


@register_lowering(p, platforms=["cuda", "rocm"])
def _gpu(ctx, x):
    return stablehlo.multiply(x, x)


def run(f):
    print(f"TEST: {f.__name__}")
    f()
    return f


spec = ShapeDtypeStruct((4,), np.float32)
g = toolkit.jit(lambda x: p.bind(tnp.sin(x)))


# CHECK-LABEL: TEST: two_platforms
# CHECK: func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<4xf32>)
# CHECK: %[[S:.*]] = stablehlo.sine %arg1
# CHECK: "stablehlo.case"(%arg0) ({
# CHECK: stablehlo.add %[[S]], %[[S]]
# CHECK: }, {
# CHECK: stablehlo.multiply %[[S]], %[[S]]
@run
def two_platforms():
    print(g.trace(spec).lower(platforms=("cpu", "cuda")).as_text())


# CHECK-LABEL: TEST: shared_rule_maps_the_index
# CHECK: %[[B:.*]] = "stablehlo.case"(%arg0) ({
# CHECK: stablehlo.constant dense<0> : tensor<i32>
# CHECK: stablehlo.constant dense<1> : tensor<i32>
# CHECK: stablehlo.constant dense<0> : tensor<i32>
# CHECK: "stablehlo.case"(%[[B]]) ({
# CHECK: stablehlo.multiply
# CHECK: stablehlo.add
@run
def shared_rule_maps_the_index():
    print(g.trace(spec).lower(platforms=("cuda", "cpu", "rocm")).as_text())


# CHECK-LABEL: TEST: one_rule_for_all_requested
# CHECK: func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<4xf32>)
# CHECK-NOT: stablehlo.case
# CHECK: stablehlo.multiply
@run
def one_rule_for_all_requested():
    print(g.trace(spec).lower(platforms=("cuda", "rocm")).as_text())


# CHECK-LABEL: TEST: exported_module
# CHECK: module @jit__lambda_ attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32}
# CHECK: stablehlo.case
@run
def exported_module():
    print(export(g, platforms=("cpu", "cuda"))(spec).mlir_module())


# CHECK-LABEL: TEST: call_specializes_the_callee
# CHECK: func.func public @main(%arg0: tensor<4xf32>)
# CHECK: call @_exported__lambda__{{[0-9]+}}_main(%arg0)
# CHECK: func.func private @_exported__lambda__{{[0-9]+}}_main(%arg0: tensor<4xf32>)
# CHECK-NOT: stablehlo.case
# CHECK: stablehlo.add
@run
def call_specializes_the_callee():
    exp = export(g, platforms=("cuda", "cpu"))(spec)
    print(toolkit.jit(lambda x: exp.call(x)).lower(spec).as_text())
