// A Python exception in a pass is an error at the op being processed (the op
// a pattern was matching; the anchor op for a module pass) with the pass name,
// the exception and the line of the pass code that raised.
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-divide-pattern 2>&1 | filecheck %s --check-prefix=PATTERN
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-divide 2>&1 | filecheck %s --check-prefix=MODULE
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --pass-pipeline='builtin.module(func.func(lit-divide))' 2>&1 | filecheck %s --check-prefix=NESTED
// The whole traceback on request:
// RUN: env TOOLKIT_PASS_TRACEBACK=1 not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --lit-divide-pattern 2>&1 | filecheck %s --check-prefix=TRACE

// PATTERN: pass_exception_location.mlir:[[# @LINE + 14]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError: division by zero in pattern 'divide' (at {{.*}}pass_safety_plugin.py:60 in divide)
// PATTERN-NOT: error: pass 'lit-divide-pattern' failed

// MODULE: pass_exception_location.mlir:0:0: error: pass 'lit-divide' raised ZeroDivisionError: division by zero (at {{.*}}pass_safety_plugin.py:45 in reciprocal_of_zero)

// NESTED: pass_exception_location.mlir:[[# @LINE + 7]]:1: error: pass 'lit-divide' raised ZeroDivisionError

// TRACE: error: pass 'lit-divide-pattern' raised ZeroDivisionError
// TRACE-NEXT: Traceback (most recent call last):
// TRACE: pass_safety_plugin.py", line 60, in divide
// TRACE: ZeroDivisionError: division by zero

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %a, %a : tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
