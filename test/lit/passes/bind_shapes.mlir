// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-bind-shapes{types=tensor<i32>,!stablehlo.token,tensor<5x4xf32>})' | filecheck %s
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-bind-shapes{types=tensor<i32>,!stablehlo.token,tensor<5x4xf32>}, toolkit-refine-shapes)' | filecheck %s --check-prefix=REFINED
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-bind-shapes{types=tensor<i32>,!stablehlo.token,tensor<5x4xf32> wrap=false})' | filecheck %s --check-prefix=NOWRAP
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(toolkit-bind-shapes{types=tensor<i32>,!stablehlo.token,tensor<5x4xi32>})' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[P:.*]]: tensor<i32>, %[[T:.*]]: !stablehlo.token, %[[X:.*]]: tensor<5x4xf32>)
// CHECK: %[[S:.*]] = stablehlo.constant dense<[5, 4]> : tensor<2xi64>
// CHECK: %[[W:.*]] = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%[[X]], %[[S]]) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
// CHECK: stablehlo.abs %[[W]]

// REFINED-LABEL: func.func @main
// REFINED-SAME: -> (!stablehlo.token, tensor<5x4xf32>)
// REFINED-NOT: shape_refinement_operand_wrapper
// REFINED: stablehlo.abs %arg2 : tensor<5x4xf32>

// NOWRAP: func.func @main(%arg0: tensor<i32>, %arg1: !stablehlo.token, %arg2: tensor<5x4xf32>)
// NOWRAP-NOT: custom_call

// BAD: invalid refinement for argument 2, refinement element types must match in tensor<?x4xf32> -> tensor<5x4xi32>
func.func @main(%p: tensor<i32>, %t: !stablehlo.token, %x: tensor<?x4xf32>) -> (!stablehlo.token, tensor<?x4xf32>) {
  %0 = stablehlo.abs %x : tensor<?x4xf32>
  return %t, %0 : !stablehlo.token, tensor<?x4xf32>
}
