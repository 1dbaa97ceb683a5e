// --verify-numerics[=RTOL[,ATOL]] runs @main on XLA after every pass against the input and exits 1 naming
// the first pass that changed its results (here a wrong subtract -> add, second of three).
// RUN: not toolkit-opt %s --load-pass-plugin=%inputs/opt_wrong_rewrite_plugin.py -p 'builtin.module(cse, opt-subtract-to-add, canonicalize)' --verify-numerics 2>&1 | filecheck %s
// RUN: toolkit-opt %s -p 'builtin.module(cse, canonicalize)' --verify-numerics=1e-5,1e-6 2>&1 | filecheck %s --check-prefix=OK
// RUN: not toolkit-opt %s --cse --verify-numerics=fast 2>&1 | filecheck %s --check-prefix=BAD

// CHECK: numerics diverged at pass 2 of 3, 'opt-subtract-to-add'
// CHECK: verify_numerics.mlir: error: pass 'opt-subtract-to-add' changed @main's results
// OK: numerics held through all 2 pass(es)
// BAD: toolkit-opt: error: --verify-numerics=fast: expected RTOL or RTOL,ATOL

func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<4xf32>
  %1 = stablehlo.add %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
