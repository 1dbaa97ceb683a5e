# RUN: %PYTHON %s | filecheck %s
# Golden lowering of accuracy= on lax's transcendental functions (toolkit/lax/elementwise.py), as JAX 0.10.2 writes
# it: StableHLO's result_accuracy attribute on the op (a mode, or TOLERANCE with the nonzero tolerances printed),
# nothing without accuracy. Shape refinement and toolkit-opt's passes keep it.

import numpy as np

from toolkit import ShapeDtypeStruct, grad, jit, lax
from toolkit.core.shape_poly import symbolic_shape
from toolkit.passes import run_pipeline
from toolkit.testing import lowered_text, run, spec

HIGHEST, DEFAULT, Tolerance = lax.AccuracyMode.HIGHEST, lax.AccuracyMode.DEFAULT, lax.Tolerance


@run
def modes_and_tolerances():
    # CHECK-LABEL: TEST: modes_and_tolerances
    # CHECK: stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<3xf32>
    # CHECK: stablehlo.sine %arg0 {result_accuracy = #stablehlo.result_accuracy<atol = 1.000000e-03, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}
    # CHECK: stablehlo.cbrt %arg0 {result_accuracy = #stablehlo.result_accuracy<atol = 5.000000e-01, rtol = 2.500000e-01, ulps = 3, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}
    # CHECK: stablehlo.rsqrt %arg0 {result_accuracy = #stablehlo.result_accuracy<ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>}
    # DEFAULT is the attribute's default value, which MLIR does not print; no accuracy, no attribute.
    # CHECK: stablehlo.tanh %arg0 : tensor<3xf32>
    # CHECK: stablehlo.cosine %arg0 : tensor<3xf32>
    print(lowered_text(lambda x: (lax.exp(x, accuracy=HIGHEST), lax.sin(x, accuracy=Tolerance(atol=1e-3, ulps=2)),
                                  lax.cbrt(x, accuracy=Tolerance(atol=0.5, rtol=0.25, ulps=3)),
                                  lax.rsqrt(x, accuracy=Tolerance(ulps=1)), lax.tanh(x, accuracy=DEFAULT), lax.cos(x)),
                       spec((3,))))


@run
def every_function():
    # CHECK-LABEL: TEST: every_function
    # CHECK: stablehlo.exponential %arg0 {result_accuracy = {{.*}}HIGHEST
    # exp2 is exp(x * ln 2): the attribute is on the exponential.
    # CHECK: %[[SCALED:.*]] = stablehlo.multiply %arg0
    # CHECK: stablehlo.exponential %[[SCALED]] {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.exponential_minus_one %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.log %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.log_plus_one %arg0 {result_accuracy = {{.*}}HIGHEST
    # JAX's logistic lowering drops the accuracy.
    # CHECK: stablehlo.logistic %arg0 : tensor<3xf32>
    # CHECK: stablehlo.sine %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.cosine %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.tan %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.tanh %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.sqrt %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.rsqrt %arg0 {result_accuracy = {{.*}}HIGHEST
    # CHECK: stablehlo.cbrt %arg0 {result_accuracy = {{.*}}HIGHEST
    names = ("exp", "exp2", "expm1", "log", "log1p", "logistic", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt", "cbrt")
    print(lowered_text(lambda x: [getattr(lax, n)(x, accuracy=HIGHEST) for n in names], spec((3,))))


@run
def complex_sine_drops_accuracy():
    # JAX's complex sine is a formula of real ops, none of which is given the accuracy.
    # CHECK-LABEL: TEST: complex_sine_drops_accuracy
    # CHECK-NOT: result_accuracy
    # CHECK: stablehlo.sine %{{.*}} : tensor<3xf32>
    # CHECK-NOT: result_accuracy
    # CHECK: return
    print(lowered_text(lambda z: lax.sin(z, accuracy=HIGHEST), spec((3,), "complex64")))


@run
def gradient_of_cosine():
    # cos's JVP takes sin with the accuracy (JAX's rule).
    # CHECK-LABEL: TEST: gradient_of_cosine
    # CHECK: stablehlo.sine %arg0 {result_accuracy = #stablehlo.result_accuracy<rtol = 1.000000e-03, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<f32>
    print(lowered_text(grad(lambda x: lax.cos(x, accuracy=Tolerance(rtol=1e-3))), spec(())))


@run
def refined_and_simplified():
    # The attribute survives binding shapes, refinement (in @main and in a specialized callee) and simplification.
    # CHECK-LABEL: TEST: refined_and_simplified
    # CHECK: func.func public @main(%arg0: tensor<8x4xf32>)
    # CHECK: stablehlo.sqrt %{{.*}} {result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<8x4xf32>
    # CHECK: stablehlo.tanh %{{.*}} {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<8x4xf32>
    inner = jit(lambda y: lax.tanh(y, accuracy=HIGHEST) * 2)
    poly = ShapeDtypeStruct(symbolic_shape("b, 4"), np.float32)
    module = jit(lambda x: inner(lax.sqrt(x, accuracy=Tolerance(ulps=2)))).lower(poly).compiler_ir()
    run_pipeline(module, "builtin.module(toolkit-bind-shapes{types=tensor<8x4xf32>}, toolkit-refine-shapes, "
                         "toolkit-simplify, canonicalize, cse)")
    print(module)
