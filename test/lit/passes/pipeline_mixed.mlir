// Python and C++ passes interleave in one pipeline; it prints back unchanged.
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse), toolkit-simplify, canonicalize, symbol-dce)' | filecheck %s
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse, toolkit-simplify), symbol-dce)' | filecheck %s
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse), toolkit-simplify, symbol-dce)' --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2>&1 | filecheck %s --check-prefix=PRINT
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse), toolkit-simplify)' --mlir-print-ir-before=toolkit-simplify -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse), toolkit-simplify, symbol-dce)' --mlir-timing -o /dev/null 2>&1 | filecheck %s --check-prefix=TIMING
// RUN: rm -rf %t && toolkit-opt %s --cse --toolkit-simplify --dump-ir-to=%t -o /dev/null && ls %t | filecheck %s --check-prefix=DUMP

// CHECK-LABEL: func.func public @main
// CHECK-NEXT: %[[S:.*]] = stablehlo.add %arg0, %arg0
// CHECK-NEXT: return %[[S]], %[[S]]
// CHECK-NOT: func.func private @unused
func.func public @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.add %x, %x : tensor<4xf32>
  %2 = stablehlo.multiply %1, %one : tensor<4xf32>
  return %0, %2 : tensor<4xf32>, tensor<4xf32>
}
func.func private @unused() {
  return
}

// PRINT: // -----// IR Dump After CSEPass: cse //----- //
// PRINT-NEXT: func.func public @main
// PRINT: IR Dump After SimplifyPass: toolkit-simplify
// PRINT-NOT: stablehlo.multiply
// PRINT: IR Dump After SymbolDCEPass: symbol-dce
// PRINT-NOT: @unused

// BEFORE-NOT: IR Dump Before CSEPass
// BEFORE: IR Dump Before SimplifyPass: toolkit-simplify
// BEFORE: stablehlo.multiply

// TIMING: Execution time report
// TIMING: 'func.func' Pipeline
// TIMING-NEXT: {{^}}  {{.*}}%)    CSEPass
// TIMING-NEXT: SimplifyPass
// TIMING-NEXT: SymbolDCEPass
// TIMING-NEXT: Total

// DUMP: 000-input.mlir
// DUMP-NEXT: 001-after-cse.mlir
// DUMP-NEXT: 002-after-toolkit-simplify.mlir
