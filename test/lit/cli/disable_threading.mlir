// --mlir-disable-threading runs the passes on one thread: same output.
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize))' --mlir-disable-threading | filecheck %s
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize))' | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %arg0, %arg0
// CHECK-NEXT: stablehlo.multiply %[[S]], %[[S]]
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
