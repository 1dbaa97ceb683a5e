// --test=crash runs each candidate in a child; --test=cmd runs a shell command on it ({} is its path).
// RUN: toolkit-reduce %s -o %t.mlir --test=crash --pass-pipeline='builtin.module(test-lit-reduce-cosine{bug=crash})' --load-pass-plugin=%inputs/reduce_cosine_plugin.py -q 2>&1 | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s --input-file=%t.mlir
// RUN: toolkit-reduce %s -test="cmd:grep -q stablehlo.cosine {}" -q 2>/dev/null | filecheck %s

// SUMMARY: toolkit-reduce: 9 ops -> 3 ops in

// CHECK:      func.func @main(%arg0: tensor<1xf32>) -> tensor<1xf32> {
// CHECK-NEXT:   %0 = stablehlo.cosine %arg0 : tensor<1xf32>
// CHECK-NEXT:   return %0 : tensor<1xf32>

func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %y : tensor<4xf32>
  %1 = func.call @helper(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.cosine %1 : tensor<4xf32>
  %3 = stablehlo.multiply %2, %y : tensor<4xf32>
  return %3 : tensor<4xf32>
}
