// -p is short for --pass-pipeline (as in mlir-opt), with a space or '='.
// RUN: toolkit-opt %s -p 'builtin.module(toolkit-simplify)' | filecheck %s
// RUN: toolkit-opt %s -p='builtin.module(toolkit-simplify)' | filecheck %s
// RUN: not toolkit-opt %s -p 'builtin.module(toolkit-simplify)' --cse 2>&1 | filecheck %s --check-prefix=BOTH

// CHECK-LABEL: func.func @f
// CHECK-NEXT: return %arg0
// BOTH: error: use either -pass-pipeline or pass flags, not both
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %a, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}
