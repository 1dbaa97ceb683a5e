// Inside a nested pipeline every pass gets its own dump, per op it ran on, headed as MLIR's IR printing
// heads it (pass class name, then the pass as pipeline text).
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize))' --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize))' --mlir-print-ir-before-all -o /dev/null 2>&1 | filecheck %s --check-prefix=BEFORE
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse, canonicalize))' --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2>&1 | filecheck %s --check-prefix=CHANGE

// CHECK: // -----// IR Dump After CSEPass: cse //----- //
// CHECK-NEXT: func.func @f(
// CHECK-NEXT: stablehlo.add
// CHECK-NEXT: stablehlo.multiply %0, %0
// CHECK: // -----// IR Dump After CSEPass: cse //----- //
// CHECK-NEXT: func.func @g(
// CHECK: // -----// IR Dump After CanonicalizerPass: canonicalize //----- //
// CHECK-NEXT: func.func @f(
// CHECK: // -----// IR Dump After CanonicalizerPass: canonicalize //----- //
// CHECK-NEXT: func.func @g(
// CHECK-NOT: IR Dump

// BEFORE: // -----// IR Dump Before CSEPass: cse //----- //
// BEFORE-NEXT: func.func @f(
// BEFORE: // -----// IR Dump Before CSEPass: cse //----- //
// BEFORE-NEXT: func.func @g(
// BEFORE: // -----// IR Dump Before CanonicalizerPass: canonicalize //----- //
// BEFORE: // -----// IR Dump Before CanonicalizerPass: canonicalize //----- //
// BEFORE-NOT: IR Dump

// Only @f changes (under cse):
// CHANGE: // -----// IR Dump After CSEPass: cse //----- //
// CHANGE-NEXT: func.func @f(
// CHANGE-NOT: IR Dump

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.add %a, %a : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
