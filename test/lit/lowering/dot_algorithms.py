# RUN: %PYTHON %s | filecheck %s
# Golden lowering of dot_general with a lax.DotAlgorithmPreset (toolkit/lax/dot_algorithms.py), as JAX 0.10.2:
# operands converted to the algorithm's types, precision [DEFAULT, DEFAULT] and an `algorithm`, result converted back.

from toolkit import lax
from toolkit.testing import lowered_text, run, spec


@run
def bf16_x3():
    # CHECK-LABEL: TEST: bf16_x3
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    print(lowered_text(lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32_X3),
                       spec((2, 3)), spec((3, 4))))


@run
def f16_converts():
    # CHECK-LABEL: TEST: f16_converts
    # CHECK: %[[L:.*]] = stablehlo.convert %arg0 : (tensor<2x3xf32>) -> tensor<2x3xf16>
    # CHECK: %[[R:.*]] = stablehlo.convert %arg1 : (tensor<3x4xf32>) -> tensor<3x4xf16>
    # CHECK: %[[D:.*]] = stablehlo.dot_general %[[L]], %[[R]], {{.*}} accumulation_type = f16, {{.*}} -> tensor<2x4xf16>
    # CHECK: stablehlo.convert %[[D]] : (tensor<2x4xf16>) -> tensor<2x4xf32>
    print(lowered_text(lambda a, b: lax.dot(a, b, precision="F16_F16_F16"), spec((2, 3)), spec((3, 4))))


@run
def default_preset():
    # CHECK-LABEL: TEST: default_preset
    # CHECK: stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    print(lowered_text(lambda a, b: lax.dot(a, b, precision=lax.DotAlgorithmPreset.DEFAULT), spec((2, 3)),
                       spec((3, 4))))
