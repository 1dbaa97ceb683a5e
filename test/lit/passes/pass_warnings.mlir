// Passes emit warnings and remarks (toolkit.passes.emit_warning / emit_remark).
// A warning is printed and the run succeeds:
// RUN: toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-chatty 2>&1 >/dev/null | filecheck %s
// (--verify-diagnostics checks them: pass_warnings_verify.mlir.)

// CHECK: warning: this add could be a multiply

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
