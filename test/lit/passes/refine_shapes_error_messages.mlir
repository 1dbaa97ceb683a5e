// RUN: not toolkit-opt %s --split-input-file --pass-pipeline='builtin.module(toolkit-refine-shapes)' 2>&1 | filecheck %s

// A refinement failure names the op (and custom call target) where it
// stopped, its location, and the values or origins of its operands.
// (With --split-input-file the locations inside messages count lines from
// the start of each piece.)

// A shape operand that is not a constant (here an argument of @main).
// CHECK: error: module has dynamic shapes after refinement (pass validate-static-shapes=false to allow them); first one: 'stablehlo.dynamic_broadcast_in_dim' at {{.*}}:[[# @LINE + 3]]:8 could not be refined: results tensor<?x4xf32>; operands #0: tensor<f32> from 'stablehlo.constant' at {{.*}}, #1: tensor<2xi32> (block argument)
func.func @main(%shape: tensor<2xi32>) -> tensor<?x4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %0 = stablehlo.dynamic_broadcast_in_dim %one, %shape, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A dynamic_reduce_window whose window size comes from data.
// CHECK: first one: 'stablehlo.custom_call' @stablehlo.dynamic_reduce_window at {{.*}}:{{[0-9]+}}:8 could not be refined: results tensor<?xf32>; operands #0: tensor<8xf32> (block argument), #1: tensor<f32> from 'stablehlo.constant' at {{.*}}, #2: tensor<1xi32> from 'stablehlo.convert' at {{.*}}, #3: tensor<1xi32> = [1], #4: tensor<1xi32> = [1], #5: tensor<1xi32> = [1], #6: tensor<1x2xi32> = {{\[\[}}0, 0]]
func.func @main(%x: tensor<8xf32>, %w: tensor<1xf32>) -> tensor<?xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %one = stablehlo.constant dense<1> : tensor<1xi32>
  %pad = stablehlo.constant dense<0> : tensor<1x2xi32>
  %window = stablehlo.convert %w : (tensor<1xf32>) -> tensor<1xi32>
  %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %init, %window, %one, %one, %one, %pad) {called_computations = [@sum]} : (tensor<8xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1x2xi32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
func.func private @sum(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.add %a, %b : tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A custom call whose result is static but whose shape operand is not a
// constant keeps it, which its kernel would not expect.
// CHECK: error: 'stablehlo.custom_call' @lapack_spotrf_ffi at {{.*}}:{{[0-9]+}}:8 keeps its shape operands: they must be constants equal to its static results (tensor<4x4xf32>) to be dropped, got #1: tensor<2xi32> (block argument)
func.func @main(%x: tensor<4x4xf32>, %shape: tensor<2xi32>) -> tensor<4x4xf32> {
  %0 = stablehlo.custom_call @lapack_spotrf_ffi(%x, %shape) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<4x4xf32>, tensor<2xi32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Contradictory shapes: the verifier's words, then where and with what.
// CHECK: error: 'stablehlo.add' op requires the same shape for all operands and results [in 'stablehlo.add' at {{.*}}:{{[0-9]+}}:8 with operands #0: tensor<3xf32> from 'stablehlo.abs' at {{.*}}, #1: tensor<4xf32> from 'stablehlo.abs' at {{.*}}]
func.func @main(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  %0 = stablehlo.abs %a : (tensor<3xf32>) -> tensor<?xf32>
  %1 = stablehlo.abs %b : (tensor<4xf32>) -> tensor<?xf32>
  %2 = stablehlo.add %0, %1 : tensor<?xf32>
  return %2 : tensor<?xf32>
}

// -----

// A dynamic_top_k whose k is computed from data.
// CHECK: first one: 'stablehlo.custom_call' @stablehlo.dynamic_top_k at {{.*}}:{{[0-9]+}}:10 could not be refined: results tensor<?xf32>, tensor<?xi32>; operands #0: tensor<6xf32> (block argument), #1: tensor<i32> (block argument)
func.func @main(%x: tensor<6xf32>, %k: tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>) {
  %0:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<6xf32>, tensor<i32>) -> (tensor<?xf32>, tensor<?xi32>)
  return %0#0, %0#1 : tensor<?xf32>, tensor<?xi32>
}
