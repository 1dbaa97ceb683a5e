// --verify-diagnostics=all (the bare flag) reports diagnostics nobody expected; =only-expected checks the
// expected ones only.
// RUN: toolkit-opt %s --split-input-file --verify-diagnostics=only-expected --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-chatty
// RUN: not toolkit-opt %s --split-input-file --verify-diagnostics=all --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-chatty 2>&1 | filecheck %s
// RUN: not toolkit-opt %s --split-input-file --verify-diagnostics --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-chatty 2>&1 | filecheck %s
// RUN: not toolkit-opt %s --verify-diagnostics=some 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: verify_diagnostics_modes.mlir:[[# @LINE + 6]]:8: error: unexpected remark:
// BAD: toolkit-opt: error: --verify-diagnostics=some: expected 'all' or 'only-expected'

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-warning @+1 {{}}
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
