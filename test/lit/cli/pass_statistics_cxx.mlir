// --mlir-pass-statistics: C++ passes report the ops they erased and created (jaxlib's build keeps no C++
// pass statistics of its own); Python passes report which rewrite fired.
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse), toolkit-simplify, symbol-dce)' --mlir-pass-statistics -o /dev/null 2>&1 | filecheck %s

// CHECK: ... Pass statistics report ...
// CHECK: 'func.func' Pipeline
// CHECK-NEXT:   CSEPass
// CHECK-NEXT:     (S) 1 erased stablehlo.add
// CHECK-NEXT: SimplifyPass
// CHECK-NEXT:   (S) 1 multiply_one
// CHECK-NEXT: SymbolDCEPass
// CHECK-NEXT:   (S) 1 erased func.func
// CHECK-NEXT:   (S) 1 erased func.return

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  %3 = stablehlo.multiply %2, %one : tensor<4xf32>
  return %3 : tensor<4xf32>
}
func.func private @unused() {
  return
}
