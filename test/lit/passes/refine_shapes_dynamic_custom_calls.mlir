// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// JAX's stablehlo.dynamic_* custom calls become static ops once their shape operands are constants.

// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%arg0: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x2xi32>)
// CHECK: %[[V:.*]], %[[I:.*]] = chlo.top_k(%arg0, k = 2) : tensor<4x6xf32> -> (tensor<4x2xf32>, tensor<4x2xi32>)
// CHECK-NOT: dynamic_top_k
func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>) {
  %k = stablehlo.constant dense<2> : tensor<i32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%arg0, %k) {api_version = 2 : i32} : (tensor<4x6xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
  return %0#0, %0#1 : tensor<4x?xf32>, tensor<4x?xi32>
}

// -----

// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> (tensor<2xui64>, tensor<3x4xui32>)
// CHECK: stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
func.func public @main(%arg0: tensor<2xui64>) -> (tensor<2xui64>, tensor<?x4xui32>) {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%arg0, %shape) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<?x4xui32>
}
