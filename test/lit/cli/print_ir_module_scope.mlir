// --mlir-print-ir-module-scope: a nested pass's dump shows the whole module and names the op it ran on.
// RUN: toolkit-opt %s -p 'builtin.module(func.func(cse), symbol-dce)' --mlir-print-ir-after-all --mlir-print-ir-module-scope --mlir-disable-threading -o /dev/null 2>&1 | filecheck %s

// CHECK: // -----// IR Dump After CSEPass: cse ('func.func' operation: @f) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @f(
// CHECK: func.func private @g(
// CHECK: // -----// IR Dump After CSEPass: cse ('func.func' operation: @g) //----- //
// CHECK-NEXT: module {
// CHECK: // -----// IR Dump After SymbolDCEPass: symbol-dce ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// CHECK-NOT: @g

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
