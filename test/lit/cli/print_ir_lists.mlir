// --mlir-print-ir-before/after take comma lists of pass names (and repeat); an unknown name is an error.
// RUN: toolkit-opt %s --cse --toolkit-simplify --canonicalize --mlir-print-ir-after=cse,canonicalize -o /dev/null 2>&1 | filecheck %s
// RUN: toolkit-opt %s --cse --toolkit-simplify --canonicalize --mlir-print-ir-before=toolkit-simplify --mlir-print-ir-before=canonicalize -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: not toolkit-opt %s --cse --mlir-print-ir-after=cse,canonicalise 2>&1 | filecheck %s --check-prefix=UNKNOWN

// CHECK: IR Dump After CSEPass: cse
// CHECK-NOT: SimplifyPass
// CHECK: IR Dump After CanonicalizerPass: canonicalize
// CHECK-NOT: IR Dump

// BEFORE-NOT: CSEPass
// BEFORE: IR Dump Before SimplifyPass: toolkit-simplify
// BEFORE: IR Dump Before CanonicalizerPass: canonicalize
// BEFORE-NOT: IR Dump

// UNKNOWN: toolkit-opt: error: --mlir-print-ir-after: unknown pass 'canonicalise'; did you mean: canonicalize

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %a, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}
