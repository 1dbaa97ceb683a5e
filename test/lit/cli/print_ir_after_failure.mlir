// --mlir-print-ir-after-failure: the IR after the pass that failed, headed "... Failed".
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --cse --lit-divide-pattern --mlir-print-ir-after-failure 2>&1 | filecheck %s

// CHECK-NOT: IR Dump After CSEPass
// CHECK: // -----// IR Dump After DividePatternPass Failed: lit-divide-pattern //----- //
// CHECK-NEXT: module {
// CHECK: stablehlo.multiply
// CHECK: error: pass 'lit-divide-pattern' raised ZeroDivisionError

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
