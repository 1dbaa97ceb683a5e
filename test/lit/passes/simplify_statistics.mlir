// Which rewrite fired is recorded as pass statistics.
// RUN: toolkit-opt %s --toolkit-simplify --mlir-pass-statistics -o /dev/null 2>&1 | filecheck %s

// CHECK: Pass statistics report
// CHECK: SimplifyPass
// CHECK-DAG: (S) 2 multiply_one
// CHECK-DAG: (S) 1 transpose_of_transpose
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<2x3xf32>
  %0 = stablehlo.multiply %x, %one : tensor<2x3xf32>
  %1 = stablehlo.multiply %one, %0 : tensor<2x3xf32>
  %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = stablehlo.transpose %2, dims = [1, 0] : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}
