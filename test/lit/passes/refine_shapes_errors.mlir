// RUN: toolkit-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(toolkit-refine-shapes)'

// A false shape assertion fails with its own message, placeholders filled.
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %d = stablehlo.get_dimension_size %x, dim = 0 : (tensor<2xf32>) -> tensor<i32>
  %c = stablehlo.constant dense<4> : tensor<i32>
  %ok = stablehlo.compare GE, %d, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  // expected-error@+1{{Expected 'b' >= 4, but 'b' = 2}}
  stablehlo.custom_call @shape_assertion(%ok, %d) {error_message = "Expected 'b' >= 4, but 'b' = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  return %x : tensor<2xf32>
}

// -----

// A shape that stays dynamic fails the static check.
func.func @main(%x: tensor<4xf32>, %n: tensor<1xi32>) -> tensor<?xf32> {
  // expected-error@+1{{module has dynamic shapes after refinement}}
  %i = stablehlo.dynamic_iota %n, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  return %i : tensor<?xf32>
}

// -----

// expected-error@+1{{must have no more than one function or a `main` function}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
