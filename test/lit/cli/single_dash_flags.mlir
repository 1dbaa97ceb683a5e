// mlir-opt habits: long flags with one dash, as MLIR's own tests write them.
// RUN: toolkit-opt %s -split-input-file -toolkit-simplify | filecheck %s
// RUN: toolkit-opt %s -split-input-file -pass-pipeline='builtin.module(toolkit-simplify)' | filecheck %s
// RUN: toolkit-opt %s -split-input-file -canonicalize -o %t && filecheck %s --check-prefix=CANON < %t
// RUN: toolkit-opt %s -split-input-file -o=%t.eq -toolkit-simplify && filecheck %s < %t.eq
// RUN: not toolkit-run %s -split-input-file 2>&1 | filecheck %s --check-prefix=RUN-USAGE
// An unknown single-dash flag is an unknown pass, named as written without the dash:
// RUN: not toolkit-opt %s -toolkit-simplfy 2>&1 | filecheck %s --check-prefix=TYPO

// CHECK-LABEL: func.func @multiply_one
// CHECK-NEXT: return %arg0
// CHECK: // -----
// CHECK-LABEL: func.func @second
// CANON-LABEL: func.func @multiply_one
// CANON: // -----
// RUN-USAGE: toolkit-run: error: unrecognized arguments: --split-input-file (see toolkit-run --help)
// TYPO: toolkit-opt: error: unknown pass 'toolkit-simplfy'; did you mean: toolkit-simplify
func.func @multiply_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @second() {
  return
}
