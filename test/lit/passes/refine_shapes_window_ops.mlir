// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s

// Windowed ops with static attributes but dynamic result types (their
// operands were dynamic before refinement): Python shape rules.

// select_and_scatter (the gradient of max pooling under vmap) has its
// operand's shape.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tensor<3x2x4xf32>
// CHECK: "stablehlo.select_and_scatter"
// CHECK: }) : (tensor<3x2x4xf32>, tensor<3x1x3xf32>, tensor<f32>) -> tensor<3x2x4xf32>
func.func @main(%operand: tensor<3x2x4xf32>, %source: tensor<3x1x3xf32>) -> tensor<?x2x4xf32> {
  %bound = stablehlo.constant dense<[3, 2, 4]> : tensor<3xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%operand, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3x2x4xf32>, tensor<3xi64>) -> tensor<?x2x4xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %source, %zero) <{window_dimensions = array<i64: 1, 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<?x2x4xf32>, tensor<3x1x3xf32>, tensor<f32>) -> tensor<?x2x4xf32>
  return %0 : tensor<?x2x4xf32>
}

// -----

// reduce_window: (size - 1) * base dilation + 1 + padding, minus the dilated
// window, over the stride, plus one.
// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tensor<3x3xf32>
// CHECK: "stablehlo.reduce_window"
// CHECK: }) : (tensor<5x8xf32>, tensor<f32>) -> tensor<3x3xf32>
func.func @main(%operand: tensor<5x8xf32>) -> tensor<?x?xf32> {
  %bound = stablehlo.constant dense<[5, 8]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%operand, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<5x8xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %zero) <{window_dimensions = array<i64: 3, 3>, window_strides = array<i64: 1, 2>, window_dilations = array<i64: 1, 2>, padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
