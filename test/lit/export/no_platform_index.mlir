// RUN: toolkit-opt --pass-pipeline='builtin.module(toolkit-platform-specialize{platform=cpu})' %s | filecheck %s
// A single-platform module has no platform index: the pass leaves it unchanged,
// including case ops that do not depend on the platform.

// CHECK-LABEL: func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>)
// CHECK: stablehlo.case
module {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "stablehlo.case"(%arg0) ({
      stablehlo.return %arg1 : tensor<4xf32>
    }, {
      %1 = stablehlo.negate %arg1 : tensor<4xf32>
      stablehlo.return %1 : tensor<4xf32>
    }) : (tensor<i32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
