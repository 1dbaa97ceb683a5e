// --verify-diagnostics checks the warnings and remarks passes emit
// (toolkit.passes.emit_warning / emit_remark) like MLIR's own.
// RUN: toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-chatty --split-input-file --verify-diagnostics
// An expected warning that is not produced fails the run:
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --verify-diagnostics 2>&1 | filecheck %s

// Python-emitted warnings reach toolkit-opt because it attaches its collector
// with toolkit.ir.diagnostics.attach_diagnostic_handler.

// CHECK: error: expected warning "this add could be a multiply" was not produced

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning @+1 {{this add could be a multiply}}
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  // expected-remark @+1 {{multiply with 2 operands}}
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
