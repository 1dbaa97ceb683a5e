// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --verify-diagnostics --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})'

// Two composites of one decomposition at different shapes: the first refines
// it in place, the second gets a specialized copy (mode=jax); mode=stablehlo
// does not specialize, so there it is an error, as for calls.
// CHECK-LABEL: func.func public @main
// CHECK: stablehlo.composite "my.double" %arg0 {decomposition = @double} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK: stablehlo.composite "my.double" %arg1 {decomposition = @[[COPY:double_[0-9]+]]} : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-DAG: func.func private @double(%arg0: tensor<3xf32>) -> tensor<3xf32>
// CHECK-DAG: func.func private @[[COPY]](%arg0: tensor<5xf32>) -> tensor<5xf32>
func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<5xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %b3 = stablehlo.constant dense<3> : tensor<1xi64>
  %b5 = stablehlo.constant dense<5> : tensor<1xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %b3) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3xf32>, tensor<1xi64>) -> tensor<?xf32>
  %y = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg1, %b5) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<5xf32>, tensor<1xi64>) -> tensor<?xf32>
  %0 = stablehlo.composite "my.double" %x {decomposition = @double} : (tensor<?xf32>) -> tensor<?xf32>
  // expected-error@+1{{'stablehlo.composite' op decomposition @double is reached with other operand types (tensor<5xf32>) than before}}
  %1 = stablehlo.composite "my.double" %y {decomposition = @double} : (tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
// expected-error@+1{{'func.func' op refined with incompatible refinement keys}}
func.func private @double(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<?xf32>
  return %0 : tensor<?xf32>
}
