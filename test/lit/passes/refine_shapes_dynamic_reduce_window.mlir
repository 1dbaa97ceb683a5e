// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' | filecheck %s
// RUN: toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes{mode=stablehlo})' | filecheck %s --check-prefix=UPSTREAM

// JAX's custom_call @stablehlo.dynamic_reduce_window(inputs..., init values...,
// window_dimensions, window_strides, base_dilations, window_dilations, padding)
// {called_computations = [@reducer]} (jax.numpy.cumsum along a symbolic axis,
// lax.reduce_window with a symbolic window): once the five window operands
// are constants it becomes a stablehlo.reduce_window whose body is the
// reducer's (mode=jax); mode=stablehlo only refines its result types.

// cumprod along a symbolic axis b = 3: window (b, 1), padding (b - 1, 0).
// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%arg0: tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK: call @cumprod(%arg0) : (tensor<3x5xf32>) -> tensor<3x5xf32>
// The public reducer stays, as in jaxlib's output.
// CHECK: func.func @reducer
// CHECK-LABEL: func.func private @cumprod
// CHECK: %[[R:.*]] = "stablehlo.reduce_window"(%arg0, %{{.*}}) <{base_dilations = array<i64: 1, 1>, padding = dense<{{\[\[}}2, 0], [0, 0]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 3, 1>, window_strides = array<i64: 1, 1>}> ({
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK-NEXT: %[[M:.*]] = stablehlo.multiply %[[A]], %[[B]] : tensor<f32>
// CHECK-NEXT: stablehlo.return %[[M]] : tensor<f32>
// CHECK-NEXT: }) : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
// CHECK-NOT: dynamic_reduce_window
// UPSTREAM-LABEL: func.func public @main
// UPSTREAM: stablehlo.custom_call @stablehlo.dynamic_reduce_window({{.*}}) -> tensor<3x5xf32>
func.func public @main(%arg0: tensor<3x5xf32>) -> tensor<?x5xf32> {
  %bound = stablehlo.constant dense<[3, 5]> : tensor<2xi64>
  %x = stablehlo.custom_call @stablehlo.shape_refinement_operand_wrapper(%arg0, %bound) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<?x5xf32>
  %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x5xf32>) -> tensor<i32>
  %0 = call @cumprod(%b, %x) : (tensor<i32>, tensor<?x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}
func.func @reducer(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.multiply %arg0, %arg1 : tensor<f32>
  return %0 : tensor<f32>
}
func.func private @cumprod(%arg0: tensor<i32>, %arg1: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %zero = stablehlo.constant dense<0> : tensor<1xi32>
  %minus_one = stablehlo.constant dense<-1> : tensor<i32>
  %init = stablehlo.constant dense<1.000000e+00> : tensor<f32>
  %1 = stablehlo.add %arg0, %minus_one : tensor<i32>
  %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
  %3 = stablehlo.concatenate %2, %zero, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.reshape %3 : (tensor<2xi32>) -> tensor<1x2xi32>
  %5 = stablehlo.concatenate %zero, %zero, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %6 = stablehlo.reshape %5 : (tensor<2xi32>) -> tensor<1x2xi32>
  %padding = stablehlo.concatenate %4, %6, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
  %8 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>
  %window = stablehlo.concatenate %8, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %ones = stablehlo.concatenate %one, %one, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %r = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg1, %init, %window, %ones, %ones, %ones, %padding) {api_version = 2 : i32, called_computations = [@reducer]} : (tensor<?x5xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x5xf32>
  return %r : tensor<?x5xf32>
}

// -----

// Variadic (two inputs, two init values), with strides and dilations:
// 3x8 inputs, window (2, 3), strides (1, 2), base dilation (2, 1),
// window dilation (1, 2), padding ((1, 0), (0, 1)) give 5x3 results.
// CHECK-LABEL: func.func public @main
// CHECK-SAME: -> (tensor<5x3xf32>, tensor<5x3xi32>)
// CHECK: %{{.*}}:2 = "stablehlo.reduce_window"(%arg0, %arg1, %{{.*}}, %{{.*}}) <{base_dilations = array<i64: 2, 1>, padding = dense<{{\[\[}}1, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 2>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 2>}> ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<i32>):
// CHECK: stablehlo.return %{{.*}}, %{{.*}} : tensor<f32>, tensor<i32>
// CHECK-NEXT: }) : (tensor<3x8xf32>, tensor<3x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<5x3xf32>, tensor<5x3xi32>)
// The private reducer, no longer referenced, is erased (as jaxlib does).
// CHECK-NOT: @pair_reducer
// UPSTREAM-LABEL: func.func public @main
// UPSTREAM: stablehlo.custom_call @stablehlo.dynamic_reduce_window({{.*}}) -> (tensor<5x3xf32>, tensor<5x3xi32>)
func.func public @main(%arg0: tensor<3x8xf32>, %arg1: tensor<3x8xi32>) -> (tensor<?x?xf32>, tensor<?x?xi32>) {
  %f0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %window = stablehlo.constant dense<[2, 3]> : tensor<2xi32>
  %strides = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %base = stablehlo.constant dense<[2, 1]> : tensor<2xi32>
  %dilations = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %padding = stablehlo.constant dense<[[1, 0], [0, 1]]> : tensor<2x2xi32>
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%arg0, %arg1, %f0, %i0, %window, %strides, %base, %dilations, %padding) {api_version = 2 : i32, called_computations = [@pair_reducer]} : (tensor<3x8xf32>, tensor<3x8xi32>, tensor<f32>, tensor<i32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> (tensor<?x?xf32>, tensor<?x?xi32>)
  return %0#0, %0#1 : tensor<?x?xf32>, tensor<?x?xi32>
}
func.func private @pair_reducer(%arg0: tensor<f32>, %arg1: tensor<i32>, %arg2: tensor<f32>, %arg3: tensor<i32>) -> (tensor<f32>, tensor<i32>) {
  %0 = stablehlo.add %arg0, %arg2 : tensor<f32>
  %1 = stablehlo.subtract %arg1, %arg3 : tensor<i32>
  return %0, %1 : tensor<f32>, tensor<i32>
}
