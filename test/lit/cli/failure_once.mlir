// A failing pass is reported once, at the op's location in the input.
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/pass_safety_plugin.py --cse --lit-divide-pattern 2>&1 | filecheck %s
// RUN: not toolkit-opt %s -p 'builtin.module(toolkit-refine-shapes)' 2>&1 | filecheck %s --check-prefix=CXXSTYLE

// CHECK: failure_once.mlir:[[# @LINE + 8]]:8: error: pass 'lit-divide-pattern' raised ZeroDivisionError
// CHECK-NOT: error
// CHECK-NOT: ZeroDivisionError

// CXXSTYLE: failure_once.mlir:[[# @LINE + 5]]:8: error: module has dynamic shapes after refinement
// CXXSTYLE-NOT: error:

func.func @main(%a: tensor<4xf32>, %s: tensor<1xi32>) -> tensor<?xf32> {
  %0 = stablehlo.multiply %a, %a : tensor<4xf32>
  %1 = stablehlo.dynamic_broadcast_in_dim %0, %s, dims = [0] : (tensor<4xf32>, tensor<1xi32>) -> tensor<?xf32>
  return %1 : tensor<?xf32>
}
