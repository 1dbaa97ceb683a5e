// toolkit-opt --dump-ir-to: the input and the IR after every pass, one numbered sequence
// (nested pipelines run one pass at a time); --report writes the same stages as one HTML page.
// RUN: rm -rf %t && toolkit-opt %s --pass-pipeline='builtin.module(func.func(cse, canonicalize), toolkit-simplify, symbol-dce)' --dump-ir-to=%t --report=%t.html -o /dev/null
// RUN: ls %t | filecheck %s --check-prefix=FILES
// RUN: filecheck %s --check-prefix=INPUT < %t/000-input.mlir
// RUN: filecheck %s --check-prefix=SIMPLIFIED < %t/003-after-toolkit-simplify.mlir
// RUN: filecheck %s --check-prefix=REPORT < %t.html

// FILES:      000-input.mlir
// FILES-NEXT: 001-after-func.func_cse.mlir
// FILES-NEXT: 002-after-func.func_canonicalize.mlir
// FILES-NEXT: 003-after-toolkit-simplify.mlir
// FILES-NEXT: 004-after-symbol-dce.mlir
// FILES-NOT:  {{.}}

// INPUT: stablehlo.multiply
// INPUT: func.func private @unused
// SIMPLIFIED-NOT: stablehlo.multiply

// REPORT: <!DOCTYPE html>
// REPORT: id=summary>
// REPORT: func.func(cse)
// REPORT: id=stages>
// REPORT: id="stage-3" data-label="toolkit-simplify"
// REPORT: id=patterns>
// REPORT: <td>toolkit-simplify</td><td>multiply_one</td><td class=num>1</td>
// REPORT: id=sharding>
// REPORT: id=xla>

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
