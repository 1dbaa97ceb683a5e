// A pass defined outside toolkit loads as a plugin and runs by name.
// RUN: toolkit-opt %s --load-pass-plugin=%inputs/negate_twice_plugin.py --pass-pipeline='builtin.module(test-negate-twice, canonicalize)' | filecheck %s
// RUN: env TOOLKIT_PASS_PLUGINS=%inputs/negate_twice_plugin.py toolkit-opt %s --test-negate-twice | filecheck %s
// RUN: toolkit-opt --load-pass-plugin=%inputs/negate_twice_plugin.py --list-passes | filecheck %s --check-prefix=LIST
// RUN: not toolkit-opt %s --load-pass-plugin=%t.missing.py 2>&1 | filecheck %s --check-prefix=MISSING

// CHECK-LABEL: func.func @f
// CHECK-NOT: stablehlo.negate
// CHECK: return %arg0
// LIST: test-negate-twice {{.*}}[python] Remove double negation (test plugin).
// MISSING: error: cannot load pass plugin: pass plugin not found
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %x : tensor<3xf32>
  %1 = stablehlo.negate %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
