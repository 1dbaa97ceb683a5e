// RUN: toolkit-opt %s --split-input-file --verify-diagnostics --toolkit-inputs-to-arguments --toolkit-checks-to-results | filecheck %s

// CHECK-LABEL: func.func public @main
// CHECK-SAME: (%[[IN:.*]]: tensor<3xf32>) -> (tensor<3xf32> {jax.result_info = ""}, tensor<3xf32>, tensor<3xf32>)
// CHECK-SAME: toolkit.checks = ["expect_close"]
// CHECK: %[[E:.*]] = call @expected()
// CHECK: %[[A:.*]] = stablehlo.abs %[[IN]]
// CHECK-NOT: custom_call
// CHECK: return %[[A]], %[[A]], %[[E]]
func.func public @main() -> (tensor<3xf32> {jax.result_info = ""}) {
  %0 = call @inputs() : () -> tensor<3xf32>
  %1 = call @expected() : () -> tensor<3xf32>
  %2 = stablehlo.abs %0 : tensor<3xf32>
  stablehlo.custom_call @check.expect_close(%2, %1) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  return %2 : tensor<3xf32>
}
func.func private @inputs() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[-1.0, 2.0, -3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func private @expected() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}

// -----

// Two checks keep their order; other custom calls stay.
// CHECK-LABEL: func.func @main
// CHECK-SAME: toolkit.checks = ["expect_eq", "expect_almost_eq"]
// CHECK: custom_call @something_else
// CHECK: return %arg0, %arg0, %arg0, %arg0, %arg0
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  stablehlo.custom_call @check.expect_eq(%x, %x) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
  stablehlo.custom_call @something_else(%x) {has_side_effect = true} : (tensor<i32>) -> ()
  stablehlo.custom_call @check.expect_almost_eq(%x, %x) {has_side_effect = true} : (tensor<i32>, tensor<i32>) -> ()
  return %x : tensor<i32>
}

// -----

// A malformed check is reported where it is.
func.func @main(%x: tensor<i32>) -> tensor<i32> {
  // expected-error @+1 {{check.expect_eq needs 2 operands (actual, expected), has 1}}
  stablehlo.custom_call @check.expect_eq(%x) {has_side_effect = true} : (tensor<i32>) -> ()
  return %x : tensor<i32>
}

// -----

// expected-error @below {{no function @main in module (functions: helper)}}
module {
  func.func @helper() {
    return
  }
}
