// The C++ stablehlo-refine-shapes dies of SIGFPE on a reduce_scatter with empty replica groups
// (it divides by the group size); toolkit refuses it first (toolkit/passes/preconditions.py).
// toolkit's own toolkit-refine-shapes leaves the result unrefined.
// RUN: not toolkit-opt %s --pass-pipeline='builtin.module(stablehlo-refine-shapes)' 2>&1 | filecheck %s
// RUN: toolkit-opt %s --pass-pipeline='builtin.module(toolkit-refine-shapes{validate-static-shapes=false})' | filecheck %s --check-prefix=PYTHON

// CHECK: error: pass 'stablehlo-refine-shapes' cannot run on this module: the stablehlo.reduce_scatter at {{.*}} has empty replica groups
// PYTHON: stablehlo.reduce_scatter
// PYTHON: }) : (tensor<4x16xf32>) -> tensor<4x?xf32>
func.func @main(%data: tensor<4x16xf32>) -> tensor<4x?xf32> {
  %0 = "stablehlo.reduce_scatter"(%data) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = stablehlo.add %arg2, %arg3 : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {
    replica_groups = dense<0> : tensor<1x0xi64>,
    scatter_dimension = 1 : i64
  } : (tensor<4x16xf32>) -> tensor<4x?xf32>
  func.return %0 : tensor<4x?xf32>
}
