// toolkit-run compiles @main with XLA CPU, runs it, judges check.* calls.
// RUN: toolkit-run %s --arg '[1, 2, 3]' --arg 2 | filecheck %s
// RUN: not toolkit-run %s --arg '[1, 2, 4]' --arg 2 | filecheck %s --check-prefix=MISS
// RUN: toolkit-run %s --arg '[1, 2, 3]' --arg 2 --pass-pipeline='builtin.module(toolkit-simplify)' | filecheck %s
// RUN: not toolkit-run %s 2>&1 | filecheck %s --check-prefix=NOARGS

// CHECK: result[0]: float32[3] = [2., 4., 6.]
// CHECK: check[0] PASS: expect_close float32[3]: ok
// CHECK: check[1] PASS: expect_almost_eq float32[3]: ok
// CHECK: 2/2 checks passed
// MISS: check[0] FAIL: expect_close float32[3]: 1/3 elements differ
// MISS: check[1] FAIL: expect_almost_eq
// MISS: 0/2 checks passed
// NOARGS: error: @main takes 2 arguments; pass them with --arg
func.func @main(%x: tensor<3xf32>, %s: tensor<f32>) -> tensor<3xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %0 = stablehlo.multiply %x, %b : tensor<3xf32>
  %1 = stablehlo.multiply %0, %one : tensor<3xf32>
  %expected = stablehlo.constant dense<[2.0, 4.0, 6.0]> : tensor<3xf32>
  %near = stablehlo.constant dense<[2.0001, 4.0, 6.0]> : tensor<3xf32>
  stablehlo.custom_call @check.expect_close(%1, %expected) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  stablehlo.custom_call @check.expect_almost_eq(%1, %near) {has_side_effect = true} : (tensor<3xf32>, tensor<3xf32>) -> ()
  return %1 : tensor<3xf32>
}
