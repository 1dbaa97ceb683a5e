// A pass that erases an op whose results are still used fails with a message
// naming the users; it used to kill toolkit-opt with SIGSEGV (exit 139,
// nothing printed) in the verifier after the pass.
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-erase-used 2>&1 | filecheck %s --check-prefix=RAW
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --pass-pipeline='builtin.module(func.func(lit-erase-used, cse))' 2>&1 | filecheck %s --check-prefix=RAW
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-erase-used-pattern 2>&1 | filecheck %s --check-prefix=PATTERN

// The op erased with op.erase() is gone: the error is at its users.
// RAW: pass_erase_used.mlir:[[# @LINE + 9]]:8: error: pass 'lit-erase-used' erased the op defining operands 0, 1 of this 'stablehlo.multiply' while it was still used
// RAW: error: pass '{{(func.func\()?}}lit-erase-used{{(, cse\))?}}' failed: it erased an op whose results were still used by 'stablehlo.multiply' {{.*}}(operands 0, 1); erase with toolkit.ir.rewriting.erase_op

// The checked rewriter refuses before erasing: the error is at the op.
// PATTERN: pass_erase_used.mlir:[[# @LINE + 4]]:8: error: cannot erase 'stablehlo.add' at {{.*}}pass_erase_used.mlir:[[# @LINE + 4]]:8: its results are still used by 'stablehlo.multiply' at {{.*}}pass_erase_used.mlir:[[# @LINE + 5]]:8 (result 0); replace those uses first
// PATTERN-NOT: error: pass 'lit-erase-used-pattern' failed

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
