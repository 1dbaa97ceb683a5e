// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// stablehlo.composite (JAX writes chlo.cosh, chlo.top_k, ... for bf16 and
// under vmap): its decomposition is refined like a callee for the composite's
// operand types, and the composite takes the decomposition's result types —
// the verifier wants both signatures equal (openxla/stablehlo#2779; the C++
// stablehlo-refine-shapes fails here). The composite stays: XLA calls its
// decomposition.

// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%arg0: tensor<3x20xbf16>) -> tensor<3x20xbf16>
// CHECK: stablehlo.composite "chlo.cosh" %arg0 {decomposition = @chlo.cosh.impl, version = 1 : i32} : (tensor<3x20xbf16>) -> tensor<3x20xbf16>
// CHECK-LABEL: func.func private @chlo.cosh.impl
// CHECK-SAME: (%arg0: tensor<3x20xbf16>) -> tensor<3x20xbf16>
// CHECK-NOT: dynamic_broadcast_in_dim
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<3x20xf32>
// UPSTREAM-LABEL: func.func public @main
// UPSTREAM: stablehlo.composite "chlo.cosh" %arg0 {{.*}} : (tensor<3x20xbf16>) -> tensor<3x20xbf16>
// UPSTREAM-LABEL: func.func private @chlo.cosh.impl
// UPSTREAM-SAME: (%arg0: tensor<3x20xbf16>) -> tensor<3x20xbf16>
func.func public @main(%arg0: tensor<3x20xbf16>) -> tensor<?x20xbf16> {
  %bound = stablehlo.constant dense<[3, 20]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3x20xbf16>, tensor<2xi64>) -> tensor<?x20xbf16>
  %0 = stablehlo.composite "chlo.cosh" %x {decomposition = @chlo.cosh.impl, version = 1 : i32} : (tensor<?x20xbf16>) -> tensor<?x20xbf16>
  return %0 : tensor<?x20xbf16>
}
func.func private @chlo.cosh.impl(%arg0: tensor<?x20xbf16>) -> tensor<?x20xbf16> {
  %half = stablehlo.constant dense<5.000000e-01> : tensor<f32>
  %0 = stablehlo.convert %arg0 : (tensor<?x20xbf16>) -> tensor<?x20xf32>
  %1 = stablehlo.get_dimension_size %0, dim = 0 : (tensor<?x20xf32>) -> tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %twenty = stablehlo.constant dense<20> : tensor<1xi32>
  %3 = stablehlo.concatenate %2, %twenty, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_broadcast_in_dim %half, %3, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x20xf32>
  %5 = stablehlo.log %4 : tensor<?x20xf32>
  %6 = stablehlo.add %0, %5 : tensor<?x20xf32>
  %7 = stablehlo.exponential %6 : tensor<?x20xf32>
  %8 = stablehlo.convert %7 : (tensor<?x20xf32>) -> tensor<?x20xbf16>
  return %8 : tensor<?x20xbf16>
}

