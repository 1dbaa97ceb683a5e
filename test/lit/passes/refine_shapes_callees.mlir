// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s

// Private functions with dimension arguments, as jax.export writes nested
// jits and helpers (floor_divide, _where, ...).

// @half has one call site, but it sits in @f, which is reached with two
// dimension values: the copy of @f made for the second one calls @half again
// with another value, so @half must keep a pristine copy too.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> (tensor<2xf32>, tensor<3xf32>)
// CHECK: call @f(%arg0) : (tensor<4xf32>) -> tensor<2xf32>
// CHECK: call @[[F6:f_[0-9]+]](%arg1) : (tensor<6xf32>) -> tensor<3xf32>
// CHECK-LABEL: func.func private @f(%arg0: tensor<4xf32>) -> tensor<2xf32>
// CHECK: stablehlo.slice %arg0 [0:2] : (tensor<4xf32>) -> tensor<2xf32>
// CHECK: func.func private @[[F6]](%arg0: tensor<6xf32>) -> tensor<3xf32>
// CHECK: stablehlo.slice %arg0 [0:3] : (tensor<6xf32>) -> tensor<3xf32>
// CHECK-NOT: func.func private @half
func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<6xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %four = stablehlo.constant dense<4> : tensor<i32>
  %six = stablehlo.constant dense<6> : tensor<i32>
  %b4 = stablehlo.constant dense<4> : tensor<1xi64>
  %b6 = stablehlo.constant dense<6> : tensor<1xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %b4) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<4xf32>, tensor<1xi64>) -> tensor<?xf32>
  %y = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg1, %b6) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<6xf32>, tensor<1xi64>) -> tensor<?xf32>
  %0 = call @f(%four, %x) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = call @f(%six, %y) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
func.func private @f(%n: tensor<i32> {jax.global_constant = "n"}, %x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = stablehlo.constant dense<0> : tensor<1xi32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %h = call @half(%n) : (tensor<i32>) -> tensor<i32>
  %limit = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>
  %0 = stablehlo.real_dynamic_slice %x, %zero, %limit, %one : (tensor<?xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func private @half(%n: tensor<i32>) -> tensor<i32> {
  %two = stablehlo.constant dense<2> : tensor<i32>
  %0 = stablehlo.divide %n, %two : tensor<i32>
  return %0 : tensor<i32>
}

// -----

// A while loop whose trip count is a dimension variable (fori_loop(0, b)),
// carrying a value of symbolic shape: the bound folds to a constant and the
// loop-carried types become static.
// CHECK-LABEL: func.func private @loop
// CHECK-SAME: (%arg0: tensor<5x4xf32>) -> tensor<5x4xf32>
// CHECK: %[[B:.*]] = stablehlo.constant dense<5> : tensor<i32>
// CHECK: stablehlo.while(%{{.*}} = %{{.*}}, %{{.*}} = %arg0) : tensor<i32>, tensor<5x4xf32>
// CHECK: stablehlo.compare LT, %{{.*}}, %[[B]]
// CHECK: stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<f32>) -> tensor<5x4xf32>
// CHECK: stablehlo.return %{{.*}}, %{{.*}} : tensor<i32>, tensor<5x4xf32>
func.func public @main(%arg0: tensor<5x4xf32>) -> tensor<?x4xf32> {
  %bound = stablehlo.constant dense<[5, 4]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<5x4xf32>, tensor<2xi64>) -> tensor<?x4xf32>
  %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %0 = call @loop(%b, %x) : (tensor<i32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
func.func private @loop(%b: tensor<i32> {jax.global_constant = "b"}, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<?x4xf32>
  cond {
    %c = stablehlo.compare LT, %i, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %f1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %four = stablehlo.constant dense<4> : tensor<1xi32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
    %shape = stablehlo.concatenate %b1, %four, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %ones = stablehlo.dynamic_broadcast_in_dim %f1, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
    %sum = stablehlo.add %acc, %ones : tensor<?x4xf32>
    stablehlo.return %next, %sum : tensor<i32>, tensor<?x4xf32>
  }
  return %r#1 : tensor<?x4xf32>
}
